"""The multi-agent core: the routed hats run concurrently, then one synthesis; failures are reported, not hidden.

One agno agent per role is built once per process, all sharing one SDK client over one HTTP client, so a thought
costs exactly its model calls: no agent construction, no TLS set-up, no hidden memory or telemetry calls.
Retries have one owner, tenacity, driven by what the wire said (status, Retry-After), within the deadline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from tenacity.stop import stop_base
from tenacity.wait import wait_exponential_jitter

from ..analysis import (
    ROLES,
    Analysis,
    HatRun,
    Outcome,
    ProgressFn,
    Role,
    RunStatus,
    ThoughtContext,
    Usage,
)
from ..config import Settings
from ..ops.ledger import current_ledger, estimate_tokens
from ..ops.limits import Hold
from ..ops.logs import route_agno_logs
from ..ops.metrics import current as metrics
from ..ops.telemetry import current as tracer
from ..routing.router import Route
from .prompts import Prompts, clip, thought_variables
from .providers import (
    Exchange,
    ResolvedProvider,
    Tokens,
    agno_model,
    current_exchange,
    http_client,
    response_byte_cap,
    sdk_client,
    token_counts,
)

log = logging.getLogger("thinking_hats")

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
# A retry after a quick failure (a 503, a refused connection) starts only with this much time left before the
# deadline (or THINKING_HAT_TIMEOUT, if smaller): a hat answer takes seconds, and a retry cut off sooner only
# adds a call. After a timeout, a retry needs a whole THINKING_HAT_TIMEOUT: the model already needed that long.
RETRY_MIN_SECONDS = 5.0


class CallFailed(Exception):
    """One failed attempt at a model call, with what the wire said about it."""

    def __init__(self, reason: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason, self.status, self.retry_after = reason, status, retry_after


class Retryable(CallFailed):
    """A failure worth another attempt: 408/409/429/5xx, no response, a timeout, an unreadable body."""


class TimedOut(Retryable):
    """The attempt outlived THINKING_HAT_TIMEOUT (or what was left of THINKING_DEADLINE)."""


@dataclass
class CallResult:
    role: Role
    status: RunStatus
    ms: int
    text: str | None = None
    error: str | None = None
    http_status: int | None = None
    requests: int = 0
    tokens: Tokens = field(default_factory=Tokens)
    cut_from: int | None = None  # the length of the model's text, when `text` keeps only THINKING_MAX_REPLY_CHARS

    def run(self) -> HatRun:
        return HatRun(
            hat=self.role,
            status=self.status,
            ms=self.ms,
            tokens=self.tokens.input + self.tokens.output,
            output=self.text,
            error=self.error,
        )


class Orchestrator:
    """Owns one agno agent per role, the SDK client they share and the HTTP client under it.

    With `roles`, only those agents are built up front (the server builds all six in its warm-up thread, so no
    thought ever builds one); any other is built at its first call (`thinking-hats think` needs one or a few).
    """

    def __init__(
        self, settings: Settings, provider: ResolvedProvider, prompts: Prompts, roles: tuple[Role, ...] = ROLES
    ) -> None:
        route_agno_logs(settings)
        self.settings = settings
        self.provider = provider
        self.prompts = prompts
        self._http = http_client(
            provider, response_byte_cap(settings.thinking_max_output_tokens), settings.thinking_concurrent_thoughts
        )
        self._client = sdk_client(provider, self._http)
        self._agents: dict[Role, Any] = {}
        self._system: dict[Role, str] = {}  # each role's system prompt, for estimating what a call sends
        for role in roles:
            self._agent(role)

    def _agent(self, role: Role) -> Any:
        agent = self._agents.get(role)
        if agent is None:
            from agno.agent import Agent

            model_id = self.provider.synthesis_model if role == "synthesis" else self.provider.model
            agent = self._agents[role] = Agent(
                name=f"{role} hat" if role != "synthesis" else "synthesizer",
                model=agno_model(self.provider, model_id, self._client, self.settings.thinking_max_output_tokens),
                # Our prompt file is the whole system message: no agno preamble, datetime or history.
                system_message=self.prompts.render(role),
                telemetry=self.settings.agno_telemetry,
                retries=0,
            )
        return agent

    async def aclose(self) -> None:
        await self._http.aclose()

    def _prompt_of(self, role: Role) -> str:
        prompt = self._system.get(role)
        if prompt is None:
            prompt = self._system[role] = self.prompts.render(role)
        return prompt

    def estimate(self, ctx: ThoughtContext, route: Route) -> Hold:
        """The most a thought on this route can spend without a retry: its calls, and for each its prompt's tokens
        (estimated on the high side, see ledger.py) plus THINKING_MAX_OUTPUT_TOKENS. The synthesis reads every hat's
        output."""
        route = route.with_synthesis(self.settings.thinking_synthesis)
        output = self.settings.thinking_max_output_tokens
        message = self.prompts.render("thought", **thought_variables(ctx))
        tokens = sum(estimate_tokens(self._prompt_of(role), message) + output for role in route.hats)
        if route.synthesis:
            frame = self.prompts.render("analyses", thought_message=message.strip(), analyses="")
            hats = len(route.hats)
            tokens += estimate_tokens(self._prompt_of("synthesis"), frame) + hats * (output + 16) + output
        return Hold(tokens, route.calls)

    async def analyse(self, ctx: ThoughtContext, route: Route, progress: ProgressFn | None) -> Outcome:
        route = route.with_synthesis(self.settings.thinking_synthesis)  # merge: double/triple skip the synthesis
        started = time.monotonic()
        deadline = started + self.settings.thinking_deadline
        # The synthesis needs time of its own: the hats must be done before the deadline by that much.
        reserve = min(self.settings.thinking_hat_timeout, self.settings.thinking_deadline / 3) if route.synthesis else 0
        hats_deadline = deadline - reserve
        total = len(route.hats) + (1 if route.synthesis else 0)
        message = self.prompts.render("thought", **thought_variables(ctx))

        done = 0

        async def hat(role: Role) -> CallResult:
            nonlocal done
            result = await self._call(role, message, hats_deadline)
            done += 1
            await _notify(progress, done, total, f"{role} hat {_word(result)} ({result.ms} ms)")
            return result

        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(hat(role)) for role in route.hats]
        results = [t.result() for t in tasks]

        analysis = Analysis(strategy=route.strategy, complexity=route.complexity())
        succeeded = [r for r in results if r.status == "ok"]
        analysis.problems.extend(self._problem(r) for r in results if r.status != "ok")

        if not route.synthesis:  # one hat's output as it is, or merged in code under each hat's name
            merged = len(route.hats) > 1
            texts = [f"### {r.role} hat\n\n{r.text}" if merged else r.text for r in succeeded]
            analysis.synthesis = "\n\n".join(t for t in texts if t) or None
        elif succeeded:
            analyses = "\n\n".join(f"### {r.role} hat\n\n{r.text}" for r in succeeded)
            synthesis_input = self.prompts.render("analyses", thought_message=message.strip(), analyses=analyses)
            result = await self._call("synthesis", synthesis_input, deadline)
            results.append(result)
            await _notify(progress, total, total, f"synthesis {_word(result)} ({result.ms} ms)")
            if result.status == "ok":
                analysis.synthesis = result.text
            else:
                analysis.problems.append(self._problem(result) + "; the hat analyses are shown as they are")
        analysis.hats = [r.run() for r in results]
        analysis.problems.extend(self._cut_problem(r) for r in results if r.cut_from is not None)

        usage = Usage(
            llm_calls=sum(r.requests for r in results),
            input_tokens=sum(r.tokens.input for r in results),
            output_tokens=sum(r.tokens.output for r in results),
            cached_input_tokens=sum(r.tokens.cached_input for r in results),
            cache_creation_tokens=sum(r.tokens.cache_creation for r in results),
        )
        failure = None if succeeded else self._failure(results)
        return Outcome(analysis=analysis, usage=usage, failure=failure)

    async def _call(self, role: Role, message: str, deadline: float) -> CallResult:
        """One role's model call, measured (/metrics) and traced as a GenAI client span when tracing is on."""
        model = self.provider.synthesis_model if role == "synthesis" else self.provider.model
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider.name,
            "gen_ai.request.model": model,
            "gen_ai.request.max_tokens": self.settings.thinking_max_output_tokens,
            "gen_ai.agent.name": role,
            "server.address": self.provider.shown_url,  # a password or key in LLM_BASE_URL masked
        }
        outcome = "cancelled"
        started = time.perf_counter()
        exchange = Exchange(role=role)
        tokens = Tokens()
        try:
            with tracer().span(f"chat {model}", attributes, client=True) as span:
                result = await self._call_with_retries(role, message, deadline, exchange)
                tokens = result.tokens
                outcome = result.status
                span.set("gen_ai.usage.input_tokens", result.tokens.input)
                span.set("gen_ai.usage.output_tokens", result.tokens.output)
                span.set("thinking_hats.requests", result.requests)
                if result.status != "ok":
                    span.error(str(result.http_status) if result.http_status else result.status, result.error or "")
        finally:
            metrics().model_call(self.provider.name, role, outcome, time.perf_counter() - started)
            ledger = current_ledger.get()
            if ledger is not None:  # charged now, even when this call was cancelled: the requests were sent
                reported = 1 if tokens.input or tokens.output else 0
                unreported = max(0, exchange.requests - exchange.refused - reported)
                sent = unreported * estimate_tokens(self._prompt_of(role), message) if unreported else 0
                ledger.spent(exchange.requests, tokens.input + sent, tokens.output, tokens.cached_input)
        return result

    async def _call_with_retries(self, role: Role, message: str, deadline: float, exchange: Exchange) -> CallResult:
        """One role's model call with retries; never raises (but for cancellation): failure is a result."""
        started = time.monotonic()
        token = current_exchange.set(exchange)
        attempts = [1]  # counted by _retry as it goes: its last failure is raised, not returned
        try:
            try:
                text, tokens = await self._attempt(role, message, deadline, exchange)
            except Retryable as failed:
                text, tokens = await self._retry(role, message, deadline, exchange, failed, attempts)
            # What is kept, stored and passed on to the synthesis is bounded, whatever the model wrote.
            limit = self.settings.thinking_max_reply_chars
            kept = clip(text, limit)
            return CallResult(
                role, "ok", _ms(started), text=kept, requests=exchange.requests, tokens=tokens,
                cut_from=len(text) if kept != text else None,
            )  # fmt: skip
        except CallFailed as exc:
            # The whole time spent, over every attempt: "500 from openai; 3 attempts, 2.1 s in all: <the fix>".
            spent = time.monotonic() - started
            after = f"; {attempts[0]} attempts, {spent:.1f} s in all" if attempts[0] > 1 else ""
            what, colon, fix = exc.reason.partition(": ")
            return CallResult(
                role,
                "timeout" if isinstance(exc, TimedOut) else "failed",
                _ms(started),
                error=f"{what}{after}{colon}{fix}",
                http_status=exc.status,
                requests=exchange.requests,
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug or an agno surprise: reported as a failure, never as analysis
            log.exception("unexpected error in the %s call", role)
            return CallResult(role, "failed", _ms(started), error=f"internal error: {type(exc).__name__}")
        finally:
            current_exchange.reset(token)

    async def _retry(
        self, role: Role, message: str, deadline: float, exchange: Exchange, failed: Retryable, attempts: list[int]
    ) -> tuple[str, Tokens]:
        """The retries after a failed first attempt, which ran without tenacity: its machinery costs ~0.1 ms a call,
        and most calls succeed at once. The first iteration replays that failure, so tenacity decides the wait and
        whether to go on exactly as if it had made the attempt itself."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.settings.thinking_max_retries + 1)
            | _StopUnlessTimeToFinish(deadline, self.settings.thinking_hat_timeout),
            wait=_wait_for_server(
                wait_exponential_jitter(
                    multiplier=self.settings.thinking_retry_wait, max=8, jitter=self.settings.thinking_retry_wait
                )
            ),
            retry=retry_if_exception_type(Retryable),
            reraise=True,
        )
        earlier = [failed]
        ledger = current_ledger.get()
        async for attempt in retrying:
            with attempt:
                if earlier:
                    raise earlier.pop()
                if ledger is not None:  # a retry is a call the reservation did not plan for: it holds its own
                    worst = estimate_tokens(self._prompt_of(role), message) + self.settings.thinking_max_output_tokens
                    refusal = await ledger.reserve_retry(Hold(worst, 1))
                    if refusal is not None:
                        raise CallFailed(f"not retried: {refusal.setting} would be passed ({refusal.used:,} of "
                                         f"{refusal.limit:,} {refusal.unit})")  # fmt: skip
                attempts[0] += 1
                return await self._attempt(role, message, deadline, exchange)
        raise AssertionError("tenacity ended without an outcome")  # reraise=True: a last failure is raised

    async def _attempt(self, role: Role, message: str, deadline: float, exchange: Exchange) -> tuple[str, Tokens]:
        from agno.run.base import RunStatus as AgnoStatus

        remaining = deadline - time.monotonic()
        hat_timeout = self.settings.thinking_hat_timeout
        limit = min(hat_timeout, remaining)
        if limit <= 0:
            raise CallFailed(f"not started: THINKING_DEADLINE ({self.settings.thinking_deadline:g} s) had passed")
        exchange.status, exchange.retry_after, exchange.transport_error = None, None, None
        try:
            async with asyncio.timeout(limit):
                out = await self._agent(role).arun(message)
        except TimeoutError:
            # Name the setting that cut this attempt: its own timeout, or the thought's deadline coming first.
            if limit >= hat_timeout:
                raise TimedOut(f"timed out after {limit:.1f} s (THINKING_HAT_TIMEOUT={hat_timeout:g} s)") from None
            deadline_s = self.settings.thinking_deadline
            raise TimedOut(f"timed out after {limit:.1f} s: THINKING_DEADLINE ({deadline_s:g} s) was reached") from None

        if out.status == AgnoStatus.error:
            raise self._classify(exchange)
        text = out.content if isinstance(out.content, str) else None
        if not text or not text.strip():
            raise CallFailed(f"empty completion from {self.provider.name}", status=exchange.status)
        return text.strip(), token_counts(self.provider.vendor.wire, out.metrics)

    def _classify(self, exchange: Exchange) -> CallFailed:
        name, status = self.provider.name, exchange.status
        if exchange.oversize is not None:  # not retried: the same request would most likely run long again
            return CallFailed(
                f"reply from {name} over {exchange.oversize // 1024} KB, not read: the server ignored "
                f"THINKING_MAX_OUTPUT_TOKENS ({self.settings.thinking_max_output_tokens}); check its output limit",
                status=status,
            )
        if status is None:
            if exchange.requests:
                what = exchange.transport_error or "connection failed"
                return Retryable(f"no response from {name} ({what}): {self.provider.fix_for(None)}")
            return CallFailed(f"the call to {name} failed before it was sent")
        if status < 400:
            return Retryable(f"unreadable response from {name} (HTTP {status})", status=status)
        fix = self.provider.fix_for(status)
        if status in RETRYABLE_STATUS:
            return Retryable(f"{status} from {name}: {fix}", status=status, retry_after=exchange.retry_after)
        return CallFailed(f"{status} from {name}: {fix}", status=status)

    def _problem(self, result: CallResult) -> str:
        who = "synthesis" if result.role == "synthesis" else f"{result.role} hat"
        return f"{who} failed: {result.error}"

    def _cut_problem(self, result: CallResult) -> str:
        who = "synthesis" if result.role == "synthesis" else f"{result.role} hat's analysis"
        limit = self.settings.thinking_max_reply_chars
        return f"{who} cut from {result.cut_from:,} to {limit:,} characters (THINKING_MAX_REPLY_CHARS)"

    def _failure(self, results: list[CallResult]) -> str:
        # An authentication problem explains everything else; otherwise the first failure speaks for all.
        failed = [r for r in results if r.status != "ok"]
        if not failed:
            return "no hat ran"
        worst = next((r for r in failed if r.http_status in (401, 403)), failed[0])
        roles = ", ".join(r.role for r in failed)
        return f"{worst.error} ({roles})"


class _StopUnlessTimeToFinish(stop_base):
    """Stop retrying unless, after the wait, an attempt still has time to finish before the deadline.

    After a timeout that means a whole THINKING_HAT_TIMEOUT (the model already took that long); after a quick
    failure, RETRY_MIN_SECONDS (or the hat timeout, if smaller). A retry with less time only adds a call.
    """

    def __init__(self, deadline: float, hat_timeout: float) -> None:
        self.deadline, self.hat_timeout = deadline, hat_timeout

    def __call__(self, retry_state: RetryCallState) -> bool:
        failed = retry_state.outcome.exception() if retry_state.outcome is not None else None
        needed = self.hat_timeout if isinstance(failed, TimedOut) else min(self.hat_timeout, RETRY_MIN_SECONDS)
        return time.monotonic() + (retry_state.upcoming_sleep or 0) + needed > self.deadline


def _wait_for_server(backoff: Callable[[RetryCallState], float]) -> Callable[[RetryCallState], float]:
    """Retry-After when the server sent one, else exponential backoff with jitter."""

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, CallFailed) and exc.retry_after is not None:
            return exc.retry_after
        return backoff(state)

    return wait


def _word(result: CallResult) -> str:
    return "done" if result.status == "ok" else result.status


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


async def _notify(progress: ProgressFn | None, done: int, total: int, message: str) -> None:
    if progress is None:
        return
    try:
        await progress(done, total, message)
    except Exception:  # a client that went away must not fail the thought
        log.debug("progress notification failed", exc_info=True)
