"""The `sequentialthinking` core: sessions of numbered thoughts, revisions, branches, and optional augmentation.

Knows nothing of MCP: the server validates the call's shape, this module checks it against the session,
records it, asks the augmenter (if any) for an analysis, and returns the reply.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from .analysis import Analysis, Outcome, ProgressFn, ThoughtContext, Usage, _Wire
from .config import Settings
from .errors import InvalidThought
from .store import Entry, Store, new_session_id
from .trace import Trace

Mode = Literal["augmented", "record-only"]
ENABLE_HINT = (
    "Augmentation is off: set LLM_PROVIDER (openai, anthropic, deepseek, groq, openrouter, github, ollama or "
    "openai-compatible) and its API key to have thinking hats analyse each thought."
)
_MAX_DEFAULT_SESSIONS = 10_000  # connections remembered; the oldest is forgotten (its session stays in the store)


class ThoughtInput(BaseModel):
    thought: str
    thought_number: int = Field(ge=1)
    total_thoughts: int = Field(ge=1)
    next_thought_needed: bool
    is_revision: bool | None = None
    revises_thought: int | None = Field(default=None, ge=1)
    branch_from_thought: int | None = Field(default=None, ge=1)
    branch_id: str | None = None
    needs_more_thoughts: bool | None = None
    session_id: str | None = None
    strategy: str | None = None


class ThoughtReply(_Wire):
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
    usage: Usage = Field(default_factory=Usage)
    notice: str | None = None


@dataclass
class ThoughtResult:
    reply: ThoughtReply
    markdown: str
    is_error: bool = False
    replayed: bool = False


class Augmenter(Protocol):
    """Routes a thought and runs its hats. `strategy` is auto|single|double|triple|full."""

    async def analyse(self, ctx: ThoughtContext, strategy: str, progress: ProgressFn | None) -> Outcome: ...


class Thinking:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        trace: Trace,
        augmenter: Augmenter | None = None,
        provider_problem: str | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.trace = trace
        self.augmenter = augmenter
        self.provider_problem = provider_problem
        self._defaults: OrderedDict[str, str] = OrderedDict()

    async def think(
        self, inp: ThoughtInput, connection: str | None, progress: ProgressFn | None = None
    ) -> ThoughtResult:
        _check_shape(inp)
        session_id = self._session_for(inp, connection)
        last = self.store.last(session_id)
        if last is not None and last.reply is not None and _same_call(last, inp):
            return _replay(last)
        self._check_against_session(inp, session_id)

        total = max(inp.total_thoughts, inp.thought_number)
        is_revision = bool(inp.is_revision or inp.revises_thought)
        data = inp.model_dump(exclude_none=True) | {"total_thoughts": total, "is_revision": is_revision}
        seq = self.store.add(
            session_id, inp.thought_number, inp.branch_id, data, keep=self.settings.thinking_max_thoughts
        )
        self._housekeeping()
        self.trace.thought(data)

        started = time.perf_counter()
        strategy = inp.strategy or self.settings.thinking_strategy
        outcome: Outcome | None = None
        if self.augmenter is not None and strategy != "none":
            ctx = self._context(inp, session_id, seq)
            outcome = await self.augmenter.analyse(ctx, strategy, progress)
        elapsed = time.perf_counter() - started

        reply = ThoughtReply(
            thought_number=inp.thought_number,
            total_thoughts=total,
            next_thought_needed=inp.next_thought_needed,
            branches=self.store.branches(session_id),
            thought_history_length=self.store.count(session_id),
            session_id=session_id,
            mode="record-only" if outcome is None else "augmented",
            should_continue=inp.next_thought_needed or bool(inp.needs_more_thoughts),
            next_thought_number=inp.thought_number + 1 if inp.next_thought_needed else None,
        )
        is_error = False
        if outcome is None:
            reply.notice = self._record_only_notice(session_id)
            if self.provider_problem:
                reply.analysis.problems.append(self.provider_problem)
        else:
            reply.analysis, reply.usage = outcome.analysis, outcome.usage
            is_error = outcome.failure is not None
            self._add_session_usage(session_id, outcome.usage)
        markdown = render_markdown(reply, elapsed, outcome.failure if outcome else None)
        self.store.set_reply(
            session_id,
            seq,
            {"reply": reply.model_dump(mode="json"), "markdown": markdown, "is_error": is_error},
        )
        return ThoughtResult(reply, markdown, is_error)

    # --- sessions ---
    def _session_for(self, inp: ThoughtInput, connection: str | None) -> str:
        if inp.session_id:
            if self.store.session(inp.session_id) is None:
                self.store.create_session(inp.session_id, "sequentialthinking")
            return inp.session_id
        starts_chain = inp.thought_number == 1 and not (inp.is_revision or inp.revises_thought or inp.branch_id)
        if connection is None:
            # Stateless HTTP: no connection to hang a default session on, so the reply's sessionId carries it.
            if not starts_chain:
                raise InvalidThought(
                    "This connection has no session of its own (stateless HTTP): pass the sessionId from the "
                    "previous reply to continue, or start a new chain with thoughtNumber 1."
                )
            return self._new_session()
        current = self._defaults.get(connection)
        if current is not None:
            self._defaults.move_to_end(connection)
            last = self.store.last(current) if self.store.session(current) else None
            if last is None and self.store.session(current) is None:
                current = None  # pruned or deleted meanwhile
            elif starts_chain and last is not None and not (_same_call(last, inp) and last.reply is not None):
                current = None
        if current is None:
            current = self._new_session()
            self._defaults[connection] = current
            if len(self._defaults) > _MAX_DEFAULT_SESSIONS:
                self._defaults.popitem(last=False)
        return current

    def _new_session(self) -> str:
        session_id = new_session_id()
        self.store.create_session(session_id, "sequentialthinking")
        return session_id

    def _check_against_session(self, inp: ThoughtInput, session_id: str) -> None:
        if inp.revises_thought is not None and self.store.find(session_id, inp.revises_thought) is None:
            raise InvalidThought(
                f"revisesThought={inp.revises_thought} names a thought that is not in session {session_id} "
                f"({_known_numbers(self.store, session_id)}). Revise one of those, or drop isRevision."
            )
        if inp.branch_from_thought is not None and self.store.find(session_id, inp.branch_from_thought) is None:
            raise InvalidThought(
                f"branchFromThought={inp.branch_from_thought} names a thought that is not in session {session_id} "
                f"({_known_numbers(self.store, session_id)}). Branch from one of those."
            )
        if (
            inp.branch_id is not None
            and inp.branch_from_thought is None
            and inp.branch_id not in self.store.branches(session_id)
        ):
            raise InvalidThought(
                f"branchId '{inp.branch_id}' is a new branch: give branchFromThought to say where it starts."
            )

    def _record_only_notice(self, session_id: str) -> str | None:
        if self.provider_problem:
            return f"Augmentation is off: {self.provider_problem}"
        if self.augmenter is not None:
            return None  # strategy "none" was asked for
        session = self.store.session(session_id)
        if session is None or session.meta.get("hint_shown"):
            return None
        self.store.update_meta(session_id, hint_shown=True)
        return ENABLE_HINT

    def _add_session_usage(self, session_id: str, usage: Usage) -> None:
        session = self.store.session(session_id)
        if session is None:
            return
        total = Usage.model_validate(session.meta.get("usage", {})).add(usage)
        self.store.update_meta(session_id, usage=total.model_dump(mode="json"))

    def _context(self, inp: ThoughtInput, session_id: str, seq: int) -> ThoughtContext:
        window = self.settings.thinking_context_thoughts
        earlier = [e for e in self.store.entries(session_id, last=window + 1) if e.seq != seq][-max(window, 1) :]
        synthesis = _synthesis_of(earlier[-1]) if earlier else None
        return ThoughtContext(
            thought=inp.thought,
            thought_number=inp.thought_number,
            total_thoughts=max(inp.total_thoughts, inp.thought_number),
            revised=_numbered(self.store.find(session_id, inp.revises_thought) if inp.revises_thought else None),
            branch_origin=_numbered(
                self.store.find(session_id, inp.branch_from_thought) if inp.branch_from_thought else None
            ),
            branch_id=inp.branch_id,
            recent=tuple((e.number, str(e.data.get("thought", ""))) for e in earlier)[len(earlier) - window :]
            if window
            else (),
            previous_synthesis=synthesis,
        )

    def _housekeeping(self) -> None:
        if self.store.due_for_pruning():
            self.store.prune(self.settings.thinking_retention_days * 86400, self.settings.thinking_max_sessions)


def _check_shape(inp: ThoughtInput) -> None:
    if not inp.thought.strip():
        raise InvalidThought("thought is empty: send the text of this thinking step.")
    if inp.is_revision and inp.revises_thought is None:
        raise InvalidThought("isRevision is true but revisesThought is missing: name the thought being revised.")
    if inp.branch_from_thought is not None and not inp.branch_id:
        raise InvalidThought("branchFromThought needs a branchId: name the branch (e.g. 'alt-1').")
    if inp.revises_thought is not None and inp.revises_thought >= inp.thought_number:
        raise InvalidThought(
            f"revisesThought={inp.revises_thought} must be an earlier thought than thoughtNumber={inp.thought_number}."
        )


def _same_call(entry: Entry, inp: ThoughtInput) -> bool:
    return (
        entry.number == inp.thought_number
        and entry.branch_id == inp.branch_id
        and entry.data.get("thought") == inp.thought
    )


def _replay(entry: Entry) -> ThoughtResult:
    stored: dict[str, Any] = entry.reply or {}
    return ThoughtResult(
        ThoughtReply.model_validate(stored["reply"]),
        str(stored["markdown"]),
        bool(stored.get("is_error", False)),
        replayed=True,
    )


def _numbered(entry: Entry | None) -> tuple[int, str] | None:
    return None if entry is None else (entry.number, str(entry.data.get("thought", "")))


def _synthesis_of(entry: Entry) -> str | None:
    reply = (entry.reply or {}).get("reply") or {}
    synthesis = (reply.get("analysis") or {}).get("synthesis")
    return synthesis if isinstance(synthesis, str) and synthesis else None


def _known_numbers(store: Store, session_id: str) -> str:
    numbers = sorted({e.number for e in store.entries(session_id, last=200)})
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
