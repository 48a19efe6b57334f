"""The `sequentialthinking` core: sessions of numbered thoughts, revisions, branches, and optional augmentation.

Knows nothing of MCP: the server validates the call's shape; this module reads the session, checks the call
against it, asks the augmenter (if any) for an analysis, and only then commits the thought with its reply.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from time import perf_counter  # not through `time`: tests move that clock
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field
from pydantic.config import JsonDict

from ..analysis import Analysis, Outcome, ProgressFn, ThoughtContext, Usage, _Wire
from ..config import Settings
from ..errors import InvalidThought, StoreError
from ..ops.ledger import Ledger, hold_seconds
from ..ops.limits import Limits, Refusal
from ..ops.metrics import current as metrics
from ..ops.telemetry import current as tracer
from ..ops.thought_log import Trace
from ..store import EMPTY, Caller, Charge, Entry, Eviction, Store, View, Write, new_session_id, wrong_tool

log = logging.getLogger("thinking_hats")

Mode = Literal["augmented", "record-only"]
ENABLE_HINT = (
    "Augmentation is off: set LLM_PROVIDER (openai, anthropic, deepseek, groq, openrouter, github, ollama or "
    "openai-compatible) and its API key to have thinking hats analyse each thought."
)


SESSION_ID = r"^[A-Za-z0-9_.:-]{1,64}$"
# A branch is named freely, but not with control characters (C0, DEL, C1): they break reports and terminals, and
# PostgreSQL refuses NUL. Other hostile characters (bidi overrides) are shown safely where text meets a terminal.
BRANCH_ID = r"^[^\x00-\x1f\x7f-\x9f]{1,64}$"
# Every published outputSchema names its dialect: MCP clients validate each reply against the schema, and one
# without `$schema` is read as draft 2020-12, whose meta-schema the mcp 1.x client checks on every call (16-31 ms
# for the crash and sequentialthinking schemas, against 1-2 ms for draft-07). The reply models use nothing
# draft-07 lacks: pydantic's `#/$defs/...` refs resolve as plain JSON pointers.
JSON_SCHEMA_DIALECT: JsonDict = {"$schema": "http://json-schema.org/draft-07/schema#"}
MAX_NUMBER = 100_000
TOOL = "sequentialthinking"


class ThoughtInput(BaseModel):
    """One call's arguments, with the checks every entry point shares (the MCP tool and `thinking-hats think`)."""

    # Built at its first use rather than at import: start-up is every client's wait, and the tool's schema
    # comes from the tool's signature, not from this model.
    model_config = ConfigDict(defer_build=True)

    thought: str = Field(min_length=1)
    thought_number: int = Field(ge=1, le=MAX_NUMBER)
    total_thoughts: int = Field(ge=1, le=MAX_NUMBER)
    next_thought_needed: bool
    is_revision: bool | None = None
    revises_thought: int | None = Field(default=None, ge=1, le=MAX_NUMBER)
    branch_from_thought: int | None = Field(default=None, ge=1, le=MAX_NUMBER)
    branch_id: str | None = Field(default=None, min_length=1, max_length=64, pattern=BRANCH_ID)
    needs_more_thoughts: bool | None = None
    session_id: str | None = Field(default=None, pattern=SESSION_ID)
    strategy: str | None = None


class LimitReached(_Wire):
    """The limit that kept a thought from the models: which, what was used of it, and when it resets."""

    limit: str = Field(description="The setting of the limit reached.")
    principal: str
    used: int
    allowed: int
    resets_at: str = Field(description="UTC time the limit resets (ISO 8601).")
    retry_after: int = Field(description="Seconds until it resets.")


class ThoughtReply(_Wire):
    model_config = ConfigDict(json_schema_extra=JSON_SCHEMA_DIALECT)

    thought_number: int
    total_thoughts: int
    next_thought_needed: bool
    branches: list[str]
    thought_history_length: int
    session_id: str
    mode: Mode
    should_continue: bool
    next_thought_number: int | None
    analysis: Analysis = Field(default_factory=Analysis)
    usage: Usage = Field(default_factory=Usage, description="What this call cost; zero for a replayed call.")
    replayed: bool = Field(default=False, description="True when this is the stored reply of an earlier same call.")
    notice: str | None = None
    limit_reached: LimitReached | None = Field(
        default=None, description="Set when a limit kept this thought from the models (it was still recorded)."
    )


@dataclass
class ThoughtResult:
    reply: ThoughtReply
    markdown: str
    is_error: bool = False
    replayed: bool = False
    dumped: dict[str, Any] | None = None  # `reply` as JSON, where it was already dumped (to store it)

    def structured(self) -> dict[str, Any]:
        """The reply's structured content."""
        return self.dumped if self.dumped is not None else self.reply.model_dump(mode="json")

    def as_replay(self) -> ThoughtResult:
        """This result as an identical call that waited for it is answered: the same reply, at no cost."""
        reply = self.reply.model_copy(update={"usage": Usage(), "replayed": True})
        return ThoughtResult(reply, self.markdown, self.is_error, replayed=True)


@dataclass
class _InFlight:
    """An identical call being answered in this process: the ones that arrive meanwhile wait for its result."""

    done: asyncio.Event = field(default_factory=asyncio.Event)
    result: ThoughtResult | None = None
    waiting: int = 0


class Augmenter(Protocol):
    """Routes a thought and runs its hats. `strategy` is auto|single|double|triple|full."""

    async def analyse(self, ctx: ThoughtContext, strategy: str, progress: ProgressFn | None) -> Outcome: ...


class Thinking:
    """The `sequentialthinking` core. Owns the rules of a chain (numbering, revisions, branches, which session a
    call lands in, replays) and the order of one call: read the session, analyse, then commit the thought with its
    reply. It holds no session state itself: everything lives in the store, so any process can take any call."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        trace: Trace,
        augmenter: Augmenter | None = None,
        provider_problem: str | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.trace = trace
        self.augmenter = augmenter
        self.provider_problem = provider_problem
        self.limits = limits if limits is not None else Limits.from_settings(settings)
        self._inflight: dict[tuple[str, str, int, str | None, str], _InFlight] = {}

    def check(self, inp: ThoughtInput) -> None:
        """Everything that can be said about a call without its session."""
        _check_shape(inp, self.settings.thinking_max_thought_chars)

    async def think(self, inp: ThoughtInput, caller: Caller, progress: ProgressFn | None = None) -> ThoughtResult:
        self.check(inp)
        started = perf_counter()
        attributes = {"thinking_hats.tool": TOOL, "thinking_hats.principal": caller.principal}
        if tracer().text:
            attributes["thinking_hats.thought"] = inp.thought
        with tracer().span(TOOL, attributes) as span:
            result = await self._think(inp, caller, progress)
            reply = result.reply
            mode: str = "replayed" if result.replayed else "failed" if result.is_error else reply.mode
            if reply.limit_reached is not None:
                mode = "refused"
            span.set("thinking_hats.session_id", reply.session_id)
            span.set("thinking_hats.strategy", reply.analysis.strategy)
            span.set("thinking_hats.score", reply.analysis.complexity.score)
            span.set("thinking_hats.mode", mode)
            span.set("thinking_hats.thought_number", reply.thought_number)
            if result.is_error:
                span.error("analysis_failed")
        metrics().thought(TOOL, reply.analysis.strategy, mode, perf_counter() - started)
        return result

    async def _think(self, inp: ThoughtInput, caller: Caller, progress: ProgressFn | None) -> ThoughtResult:
        strategy = inp.strategy or self.settings.thinking_strategy
        augmenting = self.augmenter is not None and strategy != "none"
        # Earlier thoughts are read only as the hats' context; one more, as a retry of a failed call is not its own.
        window = self.settings.thinking_context_thoughts + 1 if augmenting else 0
        wanted = [n for n in (inp.revises_thought, inp.branch_from_thought) if n is not None]
        view = await self.store.read(
            caller.principal, TOOL, inp.session_id, None if inp.session_id else caller.connection, wanted, window
        )
        session_id, view, connection = self._session_for(inp, caller, view)
        last = view.last
        if last is not None and last.same_call(inp.thought_number, inp.branch_id, inp.thought) and not last.failed:
            return _replay(last)
        # Identical calls racing in this process: the first is answered, the others wait for it and get its reply
        # as a replay, so they call no model. (Across processes, each pays, and the store counts what each paid.)
        key = (caller.principal, session_id, inp.thought_number, inp.branch_id, inp.thought)
        while (ahead := self._inflight.get(key)) is not None:
            ahead.waiting += 1
            await ahead.done.wait()
            if ahead.result is not None:
                return ahead.result.as_replay()
            # It failed or was cancelled: the first of its waiters to run takes its place, the others wait again.
        mine = self._inflight[key] = _InFlight()
        try:
            mine.result = await self._answer(inp, caller, session_id, view, connection, strategy, progress)
            return mine.result
        finally:
            mine.done.set()
            if self._inflight.get(key) is mine:
                del self._inflight[key]

    async def _answer(
        self,
        inp: ThoughtInput,
        caller: Caller,
        session_id: str,
        view: View,
        connection: str | None,
        strategy: str,
        progress: ProgressFn | None,
    ) -> ThoughtResult:
        augmenting = self.augmenter is not None and strategy != "none"
        await self._check_against_session(inp, caller.principal, session_id, view)

        total = max(inp.total_thoughts, inp.thought_number)
        is_revision = bool(inp.is_revision or inp.revises_thought)
        data = inp.model_dump(exclude_none=True) | {"total_thoughts": total, "is_revision": is_revision}
        started = perf_counter()
        outcome: Outcome | None = None
        refusal: Refusal | None = None
        if self.augmenter is not None and augmenting:
            if self.settings.thinking_ui:  # an open page, on any worker or replica, shows each hat as it ends
                progress = await _noting(self.store, caller.principal, session_id, inp, progress)
            # Its calls are charged as they end, whatever then happens to this thought (see ledger.py).
            ledger = self.ledger(caller.principal)
            ran = await ledger.run(self.augmenter.analyse(self._context(inp, view), strategy, progress))
            outcome, refusal = (None, ran) if isinstance(ran, Refusal) else (ran, None)
        elapsed = perf_counter() - started

        should_continue = inp.next_thought_needed or bool(inp.needs_more_thoughts)
        notice: str | None = None
        meta: dict[str, Any] = {}
        if refusal is not None:
            notice = refusal.notice()
            metrics().refusal(caller.principal, refusal.setting)
        elif outcome is None:
            notice = self._record_only_notice(view)
            if notice == ENABLE_HINT:
                meta["hint_shown"] = True
        if outcome is not None:  # the web view lists the strategies a session used without reading its entries
            used = set((view.session.meta.get("strategies") or []) if view.session is not None else [])
            if outcome.analysis.strategy not in used:
                meta["strategies"] = sorted(used | {outcome.analysis.strategy})
        built: list[ThoughtResult] = []

        def reply_for(count: int, branches: tuple[str, ...]) -> dict[str, Any]:
            reply = ThoughtReply(
                thought_number=inp.thought_number,
                total_thoughts=total,
                next_thought_needed=inp.next_thought_needed,
                branches=list(branches),
                thought_history_length=count,
                session_id=session_id,
                mode="record-only" if outcome is None else "augmented",
                should_continue=should_continue,
                next_thought_number=inp.thought_number + 1 if should_continue else None,
                notice=notice,
                limit_reached=LimitReached.model_validate(refusal.as_json()) if refusal is not None else None,
            )
            if outcome is None:
                if self.provider_problem:
                    reply.analysis.problems.append(self.provider_problem)
            else:
                reply.analysis, reply.usage = outcome.analysis, outcome.usage
            is_error = outcome is not None and outcome.failure is not None
            markdown = render_markdown(reply, elapsed, outcome.failure if outcome else None)
            dumped = reply.model_dump(mode="json")
            built.append(ThoughtResult(reply, markdown, is_error, dumped=dumped))
            return {"reply": dumped, "markdown": markdown, "is_error": is_error}

        committed = await self.store.commit(
            Write(
                principal=caller.principal,
                session_id=session_id,
                tool=TOOL,
                number=inp.thought_number,
                branch_id=inp.branch_id,
                data=data,
                keep=self.settings.thinking_max_thoughts,
                cap=self.settings.principal_session_cap(),
                grace_s=self.settings.thinking_session_grace_minutes * 60,
                usage=outcome.usage.model_dump(mode="json") if outcome is not None else None,
                meta=meta,
                connection=connection,
                existed=view.session is not None,
                default_at=view.default_at,
                charge=Charge(refused=refusal is not None),  # its calls were charged as they ended
            ),
            reply_for,
        )
        if committed.replayed:  # the same call, committed meanwhile by a retry that raced this one
            return _replay(committed.entry)
        self.trace.thought(data, caller.principal)
        await housekeeping(self.store, self.settings)
        return built[-1]

    def ledger(self, principal: str) -> Ledger:
        """A new account for one thought of `principal`."""
        return Ledger(self.store, principal, self.limits, hold_seconds(self.settings.thinking_deadline))

    # --- sessions ---
    def _session_for(self, inp: ThoughtInput, caller: Caller, view: View) -> tuple[str, View, str | None]:
        """(session id, what was read of it, the connection whose default it becomes)."""
        if inp.session_id:
            if view.session is None and view.evicted is not None:
                raise evicted_error(view.evicted)
            if view.session is not None and view.session.tool != TOOL:
                raise wrong_tool(inp.session_id, view.session.tool, TOOL)
            return inp.session_id, view, None
        starts_chain = inp.thought_number == 1 and not (inp.is_revision or inp.revises_thought or inp.branch_id)
        if caller.connection is None:
            # Stateless HTTP: no connection to hang a default session on, so the reply's sessionId carries it.
            if not starts_chain:
                raise InvalidThought(
                    "This connection has no session of its own (stateless HTTP): pass the sessionId from the "
                    "previous reply to continue, or start a new chain with thoughtNumber 1."
                )
            return new_session_id(), EMPTY, None
        current, last = view.session_id if view.session else None, view.last
        if current is None or (
            starts_chain and last is not None and not last.same_call(inp.thought_number, inp.branch_id, inp.thought)
        ):
            return new_session_id(), EMPTY, caller.connection
        return current, view, caller.connection

    async def _check_against_session(self, inp: ThoughtInput, principal: str, session_id: str, view: View) -> None:
        async def known() -> str:
            return _known_numbers(await self.store.numbers(principal, session_id) if view.session else [])

        if inp.revises_thought is not None and inp.revises_thought not in view.found:
            raise InvalidThought(
                f"revisesThought={inp.revises_thought} names a thought that is not in session {session_id} "
                f"({await known()}). Revise one of those, or drop isRevision."
            )
        if inp.branch_from_thought is not None and inp.branch_from_thought not in view.found:
            raise InvalidThought(
                f"branchFromThought={inp.branch_from_thought} names a thought that is not in session {session_id} "
                f"({await known()}). Branch from one of those."
            )
        if inp.branch_id is not None and inp.branch_from_thought is None and inp.branch_id not in view.branches:
            raise InvalidThought(
                f"branchId '{inp.branch_id}' is a new branch: give branchFromThought to say where it starts."
            )

    def _record_only_notice(self, view: View) -> str | None:
        if self.provider_problem:
            return f"Augmentation is off: {self.provider_problem}"
        if self.augmenter is not None:
            return None  # strategy "none" was asked for
        if view.session is not None and view.session.meta.get("hint_shown"):
            return None
        return ENABLE_HINT

    def _context(self, inp: ThoughtInput, view: View) -> ThoughtContext:
        window = self.settings.thinking_context_thoughts
        earlier = [e for e in view.recent if not e.same_call(inp.thought_number, inp.branch_id, inp.thought)]
        # Not earlier[len(earlier) - window:]: while the session is shorter than the window that start is
        # negative and counts from the end, dropping the oldest thoughts the window has room for.
        earlier = earlier[-window:] if window else []
        revised = view.found.get(inp.revises_thought) if inp.revises_thought else None
        origin = view.found.get(inp.branch_from_thought) if inp.branch_from_thought else None
        return ThoughtContext(
            thought=inp.thought,
            thought_number=inp.thought_number,
            total_thoughts=max(inp.total_thoughts, inp.thought_number),
            revised=_numbered(revised),
            branch_origin=_numbered(origin),
            branch_id=inp.branch_id,
            recent=tuple((e.number, str(e.data.get("thought", ""))) for e in earlier),
            previous_synthesis=_synthesis_of(earlier[-1]) if earlier else None,
        )


async def housekeeping(store: Store, settings: Settings) -> None:
    """Retention, now and then. A committed thought is never reported as failed, so a failure here is logged."""
    if not store.due_for_pruning():
        return
    try:
        await prune(store, settings)
    except StoreError:
        log.warning("pruning the session store failed; will try again later", exc_info=True)


async def prune(store: Store, settings: Settings) -> int:
    return await store.prune(
        settings.thinking_retention_days * 86400,
        settings.thinking_max_sessions,
        settings.thinking_session_grace_minutes * 60,
        settings.thinking_max_sessions_per_principal,
    )


def evicted_error(evicted: Eviction) -> InvalidThought:
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(evicted.at))
    return InvalidThought(
        f"session '{evicted.id}' was evicted at {when} ({evicted.reason}); its thoughts are gone",
        hint="Start a new session: send another sessionId, or none to get a fresh one.",
    )


def _check_shape(inp: ThoughtInput, max_chars: int) -> None:
    if not inp.thought.strip():
        raise InvalidThought("thought is empty: send the text of this thinking step.")
    if len(inp.thought) > max_chars:
        raise InvalidThought(
            f"thought is {len(inp.thought)} characters; the limit is {max_chars} (THINKING_MAX_THOUGHT_CHARS). "
            "Split it into several thoughts."
        )
    if inp.is_revision and inp.revises_thought is None:
        raise InvalidThought("isRevision is true but revisesThought is missing: name the thought being revised.")
    if inp.branch_from_thought is not None and not inp.branch_id:
        raise InvalidThought("branchFromThought needs a branchId: name the branch (e.g. 'alt-1').")
    if inp.revises_thought is not None and inp.revises_thought >= inp.thought_number:
        raise InvalidThought(
            f"revisesThought={inp.revises_thought} must be an earlier thought than thoughtNumber={inp.thought_number}."
        )


def _replay(entry: Entry) -> ThoughtResult:
    """The stored reply of a call already committed: nothing new was spent, so its usage is zero."""
    stored = entry.reply
    reply = ThoughtReply.model_validate(stored["reply"])
    reply.usage, reply.replayed = Usage(), True
    return ThoughtResult(reply, str(stored["markdown"]), bool(stored.get("is_error", False)), replayed=True)


def _numbered(entry: Entry | None) -> tuple[int, str] | None:
    return None if entry is None else (entry.number, str(entry.data.get("thought", "")))


def _synthesis_of(entry: Entry) -> str | None:
    reply = entry.reply.get("reply") or {}
    synthesis = (reply.get("analysis") or {}).get("synthesis")
    return synthesis if isinstance(synthesis, str) and synthesis else None


def _known_numbers(numbers: list[int]) -> str:
    if not numbers:
        return "the session has no thoughts yet"
    shown = ", ".join(map(str, numbers[:20])) + (" ..." if len(numbers) > 20 else "")
    return f"it has thoughts {shown}"


def render_markdown(reply: ThoughtReply, seconds: float, failure: str | None) -> str:
    progress = f"thought {reply.thought_number}/{reply.total_thoughts}"
    if reply.mode == "record-only":
        lines = [f"Thought {reply.thought_number}/{reply.total_thoughts} recorded (session `{reply.session_id}`)."]
        lines.append(
            f"Continue with thought {reply.next_thought_number}." if reply.next_thought_number else "Chain complete."
        )
        if reply.notice:
            lines.append(reply.notice)
        return "\n".join(lines)
    a, u = reply.analysis, reply.usage
    if failure:
        body = f"Analysis failed: {failure}. The thought was recorded."
    elif a.synthesis:
        body = a.synthesis
    else:  # the synthesis failed: the hats' own analyses, each under its name
        body = "\n\n".join(f"**{h.hat} hat:** {h.output}" for h in a.hats if h.status == "ok" and h.output)
    hats = "+".join(h.hat for h in a.hats if h.hat != "synthesis") or "-"
    footer = (
        f"*{a.strategy} · score {a.complexity.score:g} · {hats} · {seconds:.1f} s · "
        f"{u.input_tokens + u.output_tokens} tokens · {progress} · session `{reply.session_id}`*"
    )
    problems = "".join(f"\n- ⚠ {p}" for p in a.problems)
    return f"{body}\n{problems}\n\n---\n{footer}".replace("\n\n\n", "\n\n")


async def _noting(
    store: Store, principal: str, session_id: str, inp: ThoughtInput, progress: ProgressFn | None
) -> ProgressFn:
    """`progress`, also writing each step to the store for the web view (THINKING_UI). A write that fails costs
    the page its live progress, never the thought."""
    where: dict[str, Any] = {"number": inp.thought_number, "branch": inp.branch_id, "done": 0, "total": 0}
    steps: list[str] = []

    async def note(done: int, total: int, message: str | None) -> None:
        if message:
            steps.append(message)
        try:
            await store.note_progress(principal, session_id, where | {"done": done, "total": total, "steps": steps})
        except StoreError:
            log.debug("progress not written for the web view", exc_info=True)

    async def both(done: int, total: int, message: str) -> None:
        await note(done, total, message)
        if progress is not None:
            await progress(done, total, message)

    await note(0, 0, None)
    return both
