"""What holding a limit as a cap costs the store: a limited thought adds its reservation (one transaction before
its model call) and the giving back of what is left (one after), and its charges give back their share of the
reservation as they are written; nothing else. Counted here as the statements and transactions each thought sends
to the store, with limits off and on (charges, written by tasks of their own, are waited for after each thought)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from limits_worker import FixedCost
from thinking_hats.config import Settings
from thinking_hats.ops.ledger import drain
from thinking_hats.ops.limits import Limit, Limits
from thinking_hats.ops.thought_log import Trace
from thinking_hats.store import Caller, Store, open_store
from thinking_hats.tools.thoughts import Thinking, ThoughtInput


class Counted:
    """A backend's transactions, counted: (transactions, statements) per kind (read or write)."""

    def __init__(self, backend: Any) -> None:
        self.inner = backend
        self.name, self.location, self.lock = backend.name, backend.location, backend.lock
        self.transactions = {"read": 0, "write": 0}
        self.statements = {"read": 0, "write": 0}

    @asynccontextmanager
    async def transaction(self, write: bool) -> AsyncIterator[Any]:
        kind = "write" if write else "read"
        self.transactions[kind] += 1
        counts = self.statements
        postgres = self.name == "postgresql"

        class Tx:
            def __init__(self, tx: Any) -> None:
                self.tx = tx

            async def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
                counts[kind] += 1
                return list(await self.tx.rows(sql, params))

            async def run(self, sql: str, params: Sequence[Any] = ()) -> int:
                counts[kind] += 1
                return int(await self.tx.run(sql, params))

            async def many(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
                counts[kind] += 1
                await self.tx.many(sql, params)

            async def now(self) -> float:
                counts[kind] += int(postgres)  # a statement on PostgreSQL; SQLite reads the machine's clock
                return float(await self.tx.now())

        async with self.inner.transaction(write) as tx:
            yield Tx(tx)

    async def close(self) -> None:
        await self.inner.close()

    async def check(self) -> dict[str, Any]:
        return dict(await self.inner.check())


async def trips(
    where: tuple[str | None, Path | None], limits: Limits, caller: Caller, named: bool
) -> list[dict[str, dict[str, int]]]:
    """The store traffic of each of three thoughts in one session (named, or the connection's default)."""
    opened = await open_store(*where)
    counted = Counted(opened.backend)
    store = Store(counted)
    settings = Settings(disable_thought_logging=True)
    thinking = Thinking(settings, store, Trace(settings), FixedCost(), limits=limits)
    seen = []
    try:
        for n in (1, 2, 3):
            before = {k: dict(v) for k, v in (("tx", counted.transactions), ("sql", counted.statements))}
            inp = ThoughtInput(thought=f"thought {n}", thought_number=n, total_thoughts=3, next_thought_needed=True,
                               session_id="named" if named else None, strategy="single")  # fmt: skip
            await thinking.think(inp, caller)
            await drain()
            seen.append(
                {
                    "tx": {k: counted.transactions[k] - before["tx"][k] for k in counted.transactions},
                    "sql": {k: counted.statements[k] - before["sql"][k] for k in counted.statements},
                }
            )
    finally:
        await store.close()
    return seen


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@pytest.mark.parametrize("named", [True, False], ids=["named session", "connection's default session"])
async def test_a_limited_thought_adds_only_its_reservation_and_its_release_to_the_store_traffic(
    tmp_path: Path, named: bool, backend: str, request: pytest.FixtureRequest
) -> None:
    caller = Caller("bob", "conn-1")
    if backend == "sqlite":
        free_at: tuple[str | None, Path | None] = (None, tmp_path / "free.sqlite3")
        limited_at: tuple[str | None, Path | None] = (None, tmp_path / "limited.sqlite3")
    else:
        cluster = request.getfixturevalue("postgres_cluster")
        free_at, limited_at = (cluster.create_database(), None), (cluster.create_database(), None)
    free = await trips(free_at, Limits(Limit()), caller, named)
    limited = await trips(limited_at, Limits(Limit(1_000_000, 1000)), caller, named)
    clock = int(backend == "postgresql")  # the store's clock, read by the reservation and by each charge
    # Unlimited: the read, the charge of the thought's one model call, the commit.
    assert all(t["tx"] == {"read": 1, "write": 2} for t in free)
    # Limited: and the reservation and its release.
    assert all(t["tx"] == {"read": 1, "write": 4} for t in limited)
    for f, lim in zip(free, limited, strict=True):
        assert lim["sql"]["read"] == f["sql"]["read"]
        # reserve: clock, lock the day's row, read it, drop lapsed reservations, sum the held ones, insert (5 + clock);
        # the charge gives back its share (1); release (1).
        assert lim["sql"]["write"] - f["sql"]["write"] == 5 + clock + 1 + 1
