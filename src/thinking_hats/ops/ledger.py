"""What one thought's model calls cost, charged as they end, and what it holds against its principal's limits.

A charge never rides the thought's own transaction: a thought can fail to save after its calls were made (its
session taken by the other tool meanwhile, evicted, locked past THINKING_STORE_LOCK_TIMEOUT, the store blipping,
its client gone), and the calls were paid all the same. So each model call, as it ends (cancelled included),
is written to its principal's usage of the day in a store transaction of its own, run as a task of its own that
the thought's cancellation cannot stop. A request whose usage never arrived (cut off by a timeout or by the
client leaving) is charged the input tokens it sent, estimated from its text on the high side: one token per
three bytes, more than common tokenizers count for prose and code (about four bytes a token in English); text
that tokenizes denser (long digit strings under a digit-per-token tokenizer, some scripts) can exceed it, and
that shortfall is the estimate's error. Requests the provider refused (an HTTP error) are not charged: providers
do not bill them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import StoreError
from .limits import Hold, Limits, Refusal
from .metrics import current as metrics

if TYPE_CHECKING:
    from ..analysis import Outcome
    from ..store import Charge, Store

log = logging.getLogger("thinking_hats")

_BYTES_PER_TOKEN = 3
_MESSAGE_OVERHEAD = 8  # tokens a chat format adds around each message (role markers, separators)
_WRITE_ATTEMPTS = 8  # a charge that meets a store blip is tried again (pauses of 0.1 s doubling to 5 s, ~11 s in
# all, besides each attempt's own lock wait) before it is logged as lost
# Charges being written, kept here so that no task is collected before it ends (the thought may be long gone).
_writing: set[asyncio.Task[None]] = set()


def estimate_tokens(*texts: str) -> int:
    """Tokens of a prompt made of these messages, estimated on the high side (see the module's docstring)."""
    return sum(-(-len(t.encode("utf-8")) // _BYTES_PER_TOKEN) + _MESSAGE_OVERHEAD for t in texts)


class Refused(Exception):
    """A thought's worst case does not fit under one of its principal's limits: it makes no model call."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.notice())
        self.refusal = refusal


@dataclass
class Ledger:
    """One thought's account: owns its reservation against its principal's limits and the charges of its model
    calls (written as they end), and settles both when the thought ends, however it ends."""

    store: Store
    principal: str
    limits: Limits
    hold_s: float  # a reservation lapses after this long, should its process die before settling it
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reservation: str | None = None
    _pending: set[asyncio.Task[None]] = field(default_factory=set)

    async def reserve(self, wanted: Hold) -> None:
        """Hold the thought's worst case against its principal's limits before its first call (Refused: it does
        not fit). A principal without limits reserves nothing: there is nothing to hold it against."""
        limit = self.limits.of(self.principal)
        if not limit.any:
            return
        granted = await self.store.reserve(self.principal, limit, wanted, self.hold_s)
        if isinstance(granted, Refusal):
            raise Refused(granted)
        self.reservation = granted

    async def reserve_retry(self, wanted: Hold) -> Refusal | None:
        """Before a retry (a call the thought's reservation did not plan for): hold its worst case too, or say
        which limit it would go past, so that retries cannot carry a principal over a limit either."""
        if self.reservation is None:  # no limit to hold it against
            return None
        granted = await self.store.reserve(
            self.principal, self.limits.of(self.principal), wanted, self.hold_s, more=self.reservation
        )
        return granted if isinstance(granted, Refusal) else None

    def spent(self, calls: int, input_tokens: int, output_tokens: int, cached_input_tokens: int) -> None:
        """One model call ended (requests sent, the tokens they cost): charge it now, in a task of its own.
        Synchronous, so that it can be called from a `finally` of a call being cancelled."""
        from ..store import Charge

        if not (calls or input_tokens or output_tokens):
            return
        self.calls += calls
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        metrics().tokens(self.principal, input_tokens, output_tokens, cached_input_tokens)
        charge = Charge(calls, input_tokens, output_tokens, cached_input_tokens)
        task = asyncio.get_running_loop().create_task(self._write(charge))
        self._pending.add(task)
        _writing.add(task)
        task.add_done_callback(self._written)

    async def _write(self, charge: Charge) -> None:
        for attempt in range(1, _WRITE_ATTEMPTS + 1):
            try:
                await self.store.charge(self.principal, charge, self.reservation)
                return
            except StoreError:
                if attempt == _WRITE_ATTEMPTS:
                    log.error(
                        "a model call of principal %s could not be charged (%d calls, %d tokens): the store "
                        "failed %d times",
                        self.principal, charge.calls, charge.input_tokens + charge.output_tokens, attempt,
                        exc_info=True,
                    )  # fmt: skip
                    return
                await asyncio.sleep(min(5.0, 0.1 * 2 ** (attempt - 1)))

    def _written(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        _writing.discard(task)

    async def settle(self) -> None:
        """Wait for the charges being written, then give back what is left of the reservation. Runs to its end
        even when the thought is being cancelled (the caller shields it or runs it as a task)."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        if self.reservation is None:
            return
        reservation, self.reservation = self.reservation, None
        try:
            await self.store.release(reservation)
        except StoreError:
            log.warning("a reservation could not be given back; it lapses after %g s", self.hold_s, exc_info=True)

    async def run(self, analysis: Awaitable[Outcome]) -> Outcome | Refusal:
        """Run a thought's analysis on this account: its outcome, or the limit that kept it from the models. The
        account is settled by a task of its own, however the analysis ends: the thought goes on to save at once,
        never waiting on its charges (a store that is locked or blipping must not hold the reply), and the
        reservation is given back only once they are written, so what is held never dips below what is owed."""
        token = current_ledger.set(self)
        try:
            return await analysis
        except Refused as refused:
            return refused.refusal
        finally:
            current_ledger.reset(token)
            self._settling()

    def _settling(self) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(self.settle())
        _writing.add(task)
        task.add_done_callback(_writing.discard)
        return task


current_ledger: ContextVar[Ledger | None] = ContextVar("thinking_hats_ledger", default=None)


def hold_seconds(deadline_s: float) -> float:
    """How long a reservation may outlive its thought's deadline before it lapses (its process died)."""
    return 2 * deadline_s + 60


async def drain(seconds: float = 30.0) -> None:
    """Wait for every charge and settlement still being written, before the store closes (at shutdown, after a
    Ctrl-C): a call abandoned a moment ago is still charged. Bounded: a store that stays down is not waited for
    past `seconds` (what is lost is logged)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            while _writing:
                await asyncio.gather(*list(_writing), return_exceptions=True)
    if _writing:
        log.error("%d model-call charges were still being written at shutdown and are lost", len(_writing))
