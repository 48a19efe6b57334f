"""The `crash` core: structured reasoning steps with purposes, revisions, branches and completion detection.

Unlike the original CRASH server, a call without `session_id` only ever lands in its own connection's session,
and a session belongs to one tool.
"""

from __future__ import annotations

import time
from time import perf_counter  # not through `time`: tests move that clock
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..analysis import Outcome, ThoughtContext, Usage
from ..config import Settings
from ..errors import InvalidThought
from ..ops.ledger import Ledger, hold_seconds
from ..ops.limits import Limits, Refusal
from ..ops.metrics import current as metrics
from ..ops.telemetry import current as tracer
from ..ops.thought_log import Trace
from ..store import EMPTY, Caller, Charge, Entry, Store, View, Write, new_session_id, wrong_tool
from .thoughts import JSON_SCHEMA_DIALECT, Augmenter, evicted_error, housekeeping

PURPOSES = (
    "analysis",
    "action",
    "validation",
    "exploration",
    "hypothesis",
    "correction",
    "planning",
    # The CRASH server's own documentation uses these too.
    "reflection",
    "decision",
    "summary",
)
TOOL = "crash"
# Strict mode wants each thought to open the way a deliberate reasoning step does; the list includes every
# opening the CRASH server's own documentation and examples use.
STRICT_THOUGHT_OPENINGS = (
    "ok, so",
    "ok, i",
    "but ",
    "wait",
    "therefore",
    "i see the issue now",
    "i have completed",
    "let me",
    "i need to",
    "i will",
    "i'll",
    "first",
    "next",
    "now",
    "given",
    "based on",
    "looking at",
    "to ",
)
COMPLETION_PHRASES = ("i have completed", "task completed", "solution found")
LOW_CONFIDENCE = 0.5


class NextAction(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    tool: str | None = None
    action: str = Field(min_length=1)
    parameters: dict[str, Any] | None = None
    expected_output: str | None = Field(default=None, alias="expectedOutput")


class CrashBranch(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    id: str
    name: str | None = None
    from_: int = Field(alias="from", description="The step this branch starts from.")
    depth: int = Field(description="1 for a branch of the main line, 2 for a branch of a branch, ...")


class CrashReply(BaseModel):
    """The reply to a recorded step: CRASH's fields, then ours where they apply (a field that does not apply is
    left out of the reply, not sent as null)."""

    model_config = ConfigDict(json_schema_extra=JSON_SCHEMA_DIALECT)

    step_number: int
    estimated_total: int = Field(description="Raised to step_number when the step goes beyond it.")
    completed: bool = Field(description="This step, or an earlier one of the session, completed it.")
    total_steps: int = Field(description="Steps in the session's history, this one included.")
    next_action: str | NextAction
    session_id: str
    completed_at_step: int | None = Field(default=None, description="The earlier step that completed the session.")
    confidence: float | None = None
    revised_step: int | None = None
    branch: CrashBranch | None = None
    review: str | None = Field(
        default=None, description="A review of a low-confidence step, by as many hats as the router chose."
    )
    review_strategy: str | None = Field(
        default=None, description="How the router routed the review: single, double, triple or full."
    )
    review_score: float | None = Field(default=None, description="The router's 0-100 score for the reviewed step.")
    warning: str | None = None


class CrashStep(BaseModel):
    model_config = ConfigDict(defer_build=True)  # as ThoughtInput: built at its first use, not at start-up

    step_number: int = Field(ge=1)
    estimated_total: int = Field(ge=1)
    purpose: str
    context: str
    thought: str
    outcome: str
    next_action: str | NextAction
    rationale: str
    confidence: float | None = Field(default=None, ge=0, le=1)
    uncertainty_notes: str | None = None
    revises_step: int | None = Field(default=None, ge=1)
    revision_reason: str | None = None
    branch_from: int | None = Field(default=None, ge=1)
    branch_id: str | None = None
    branch_name: str | None = None
    tools_used: list[str] | None = None
    external_context: dict[str, Any] | str | None = None
    dependencies: list[int] | None = None
    session_id: str | None = None
    is_final_step: bool | None = None


class Crash:
    """The `crash` core. Owns the rules of a CRASH session (purposes, strict mode, revisions, branch depth,
    dependencies, completion, idle expiry) and the order of one step: read the session, review a low-confidence
    step, then commit the step with its reply. Session state lives only in the store."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        trace: Trace,
        augmenter: Augmenter | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.trace = trace
        self.augmenter = augmenter
        self.limits = limits if limits is not None else Limits.from_settings(settings)

    async def step(self, step: CrashStep, caller: Caller) -> dict[str, Any]:
        self._check_shape(step)
        started = perf_counter()
        attributes = {"thinking_hats.tool": TOOL, "thinking_hats.principal": caller.principal}
        if tracer().text:
            attributes["thinking_hats.thought"] = step.thought
        with tracer().span(TOOL, attributes) as span:
            reply, mode = await self._step(step, caller)
            span.set("thinking_hats.session_id", reply.get("session_id"))
            span.set("thinking_hats.mode", mode)
            span.set("thinking_hats.thought_number", step.step_number)
        strategy = str(reply.get("review_strategy") or "single") if mode == "augmented" else "none"
        metrics().thought(TOOL, strategy, mode, perf_counter() - started)
        return reply

    async def _step(self, step: CrashStep, caller: Caller) -> tuple[dict[str, Any], str]:
        """(the reply, how it was answered: record-only, augmented (reviewed), refused or replayed)."""
        reviewing = (
            step.confidence is not None
            and step.confidence < LOW_CONFIDENCE
            and self.augmenter is not None
            and self.settings.crash_review_low_confidence
        )
        wanted = [n for n in (step.revises_step, step.branch_from, *(step.dependencies or ())) if n is not None]
        view = await self.store.read(
            caller.principal, TOOL, step.session_id, None if step.session_id else caller.connection, wanted
        )
        refusal: Refusal | None = None
        session_id, view, connection, reset, note = self._session_for(step, caller, view)
        if view.last is not None and view.last.same_call(step.step_number, step.branch_id, step.thought):
            return view.last.reply, "replayed"  # a retried call: the stored reply, nothing written or spent again
        revised = await self._entry(caller, view, step.revises_step, "revises_step") if step.revises_step else None
        for dependency in step.dependencies or ():
            await self._entry(caller, view, dependency, "dependencies")
        branch: dict[str, Any] | None = None
        origin: Entry | None = None
        if step.branch_from is not None:
            origin = await self._entry(caller, view, step.branch_from, "branch_from")
            depth = int(origin.data.get("branch_depth", 0)) + 1
            if depth > self.settings.crash_max_branch_depth:
                raise InvalidThought(
                    f"branching from step {step.branch_from} would nest branches {depth} deep; the limit is "
                    f"{self.settings.crash_max_branch_depth} (CRASH_MAX_BRANCH_DEPTH). Continue an existing branch."
                )
            branch = {
                "id": step.branch_id or f"branch-{step.step_number}",
                "name": step.branch_name,
                "from": step.branch_from,
                "depth": depth,
            }
        data = step.model_dump(mode="json", exclude_none=True, by_alias=True)
        data["branch_depth"] = branch["depth"] if branch else 0
        if branch:
            data["branch_id"] = branch["id"]

        completed_before = None if view.session is None else view.session.meta.get("completed_at")
        completes = bool(step.is_final_step) or any(
            phrase in f"{step.thought} {step.outcome}".lower() for phrase in COMPLETION_PHRASES
        )
        warnings = [note] if note else []
        if completed_before is not None:
            warnings.append(
                f"This session was already completed at step {completed_before}; this step was recorded after it. "
                "Start a new session (another session_id) for new work."
            )
        review: Outcome | None = None
        usage: Usage | None = None
        if step.confidence is not None and step.confidence < LOW_CONFIDENCE:
            warnings.append(
                f"Low confidence ({step.confidence:.0%}): verify this step before acting on it"
                + (f" ({step.uncertainty_notes})" if step.uncertainty_notes else "")
                + "."
            )
            reviewed = await self._review(step, revised, origin, branch, caller.principal) if reviewing else None
            if isinstance(reviewed, Refusal):
                refusal = reviewed
                warnings.append(f"No review: {refusal.notice()}")
                metrics().refusal(caller.principal, refusal.setting)
            else:
                review = reviewed
                usage = review.usage if review is not None else None
        routed = review.analysis if review is not None and review.failure is None else None

        def reply_for(count: int, branches: tuple[str, ...]) -> dict[str, Any]:
            reply = CrashReply(
                step_number=step.step_number,
                estimated_total=max(step.estimated_total, step.step_number),
                completed=completes or completed_before is not None,
                total_steps=count,
                next_action=step.next_action,
                session_id=session_id,
                completed_at_step=completed_before,
                confidence=step.confidence,
                revised_step=revised.number if revised is not None else None,
                branch=CrashBranch.model_validate(branch) if branch else None,
                review=_review_text(review),
                review_strategy=routed.strategy if routed is not None else None,
                review_score=routed.complexity.score if routed is not None else None,
                warning=" ".join(warnings) or None,
            )
            return reply.model_dump(mode="json", by_alias=True, exclude_none=True)

        committed = await self.store.commit(
            Write(
                principal=caller.principal,
                session_id=session_id,
                tool=TOOL,
                number=step.step_number,
                branch_id=data.get("branch_id"),
                data=data,
                keep=self.settings.max_history_size,
                cap=self.settings.principal_session_cap(),
                grace_s=self.settings.thinking_session_grace_minutes * 60,
                meta={"completed_at": step.step_number} if completes and completed_before is None else {},
                connection=connection,
                existed=view.session is not None,
                default_at=view.default_at,
                revised=(revised.seq, revised.data | {"revised_by": step.step_number}) if revised else None,
                reset=reset,
                charge=Charge(refused=refusal is not None),  # the review's calls were charged as they ended
            ),
            reply_for,
        )
        if committed.replayed:
            return committed.entry.reply, "replayed"
        self.trace.step(data, session_id, caller.principal)
        await housekeeping(self.store, self.settings)
        mode = "refused" if refusal is not None else "augmented" if usage is not None else "record-only"
        return committed.entry.reply, mode

    def _check_shape(self, step: CrashStep) -> None:
        for name in ("purpose", "context", "thought", "outcome", "rationale"):
            if not str(getattr(step, name)).strip():
                raise InvalidThought(f"{name} is empty", hint=f"Give {name} a short, non-empty text.")
        purpose = step.purpose.strip().lower()
        strict = self.settings.crash_strict_mode
        if strict and purpose not in PURPOSES:
            raise InvalidThought(
                f"purpose '{step.purpose}' is not allowed in strict mode",
                hint=f"Use one of: {', '.join(PURPOSES)} (or turn CRASH_STRICT_MODE off for custom purposes).",
            )
        if strict and not step.thought.strip().lower().startswith(STRICT_THOUGHT_OPENINGS):
            raise InvalidThought(
                "strict mode: thought must open with a reasoning phrase",
                hint="Start the thought with one of: " + ", ".join(f"'{p.strip()}'" for p in STRICT_THOUGHT_OPENINGS),
            )
        if strict and not step.rationale.startswith("To "):
            raise InvalidThought("strict mode: rationale must start with 'To '", hint="e.g. 'To confirm the cause'.")
        for name, number in (("revises_step", step.revises_step), ("branch_from", step.branch_from)):
            if number is not None and number >= step.step_number:
                raise InvalidThought(
                    f"{name}={number} must be an earlier step than step_number={step.step_number}",
                    hint=f"{'Revise' if name == 'revises_step' else 'Branch from'} a step that came before this one.",
                )
        for dependency in step.dependencies or ():
            if dependency >= step.step_number:
                raise InvalidThought(
                    f"dependencies names step {dependency}, which is "
                    + ("this step" if dependency == step.step_number else "a later step")
                    + f" than step_number={step.step_number}",
                    hint="A step can only depend on steps that came before it.",
                )

    def _session_for(
        self, step: CrashStep, caller: Caller, view: View
    ) -> tuple[str, View, str | None, bool, str | None]:
        """(session id, what was read of it, connection whose default it becomes, start afresh?, note)."""
        timeout = self.settings.crash_session_timeout * 60
        idle = view.session is not None and time.time() - view.session.updated > timeout
        if step.session_id:
            if view.session is None and view.evicted is not None:
                raise evicted_error(view.evicted)
            if view.session is not None and view.session.tool != TOOL:
                raise wrong_tool(step.session_id, view.session.tool, TOOL)
            if idle:
                note = (
                    f"Session '{step.session_id}' had been idle over {self.settings.crash_session_timeout:g} "
                    "minutes (CRASH_SESSION_TIMEOUT) and was started afresh."
                )
                return step.session_id, EMPTY, None, True, note
            return step.session_id, view, None, False, None
        if view.session is None or idle:
            return new_session_id(), EMPTY, caller.connection, False, None
        return view.session.id, view, caller.connection, False, None

    async def _entry(self, caller: Caller, view: View, number: int, field: str) -> Entry:
        entry = view.found.get(number)
        if entry is None:
            steps = await self.store.numbers(caller.principal, view.session_id) if view.session_id else []
            raise InvalidThought(
                f"{field}={number} names a step that is not in this session",
                hint=f"Existing steps: {steps}" if steps else "This session has no steps yet.",
            )
        return entry

    async def _review(
        self,
        step: CrashStep,
        revised: Entry | None,
        origin: Entry | None,
        branch: dict[str, Any] | None,
        principal: str,
    ) -> Outcome | Refusal | None:
        """A low-confidence step's review when a provider is configured, routed like any thought: the router reads
        the step with its confidence (a floor: two angles at least), purpose, revision and branch, and the strategy
        it picks bounds the calls and rounds as for sequentialthinking (single 1 call in 1 round, double 3 in 2,
        triple 4 in 2, full 6 in 2). The router reads the step's thought, as `route --eval` does; the hats also
        see its context, outcome and rationale."""
        if self.augmenter is None or not self.settings.crash_review_low_confidence:
            return None
        around = [step.context, f"Outcome: {step.outcome}", f"Rationale: {step.rationale}"]
        if step.uncertainty_notes:
            around.append(f"Uncertainty: {step.uncertainty_notes}")
        ctx = ThoughtContext(
            thought=step.thought,
            thought_number=step.step_number,
            total_thoughts=max(step.estimated_total, step.step_number),
            problem="\n".join(around),
            revised=(revised.number, str(revised.data.get("thought", ""))) if revised is not None else None,
            branch_origin=(origin.number, str(origin.data.get("thought", ""))) if origin is not None else None,
            branch_id=branch["id"] if branch else None,
            confidence=step.confidence,
            purpose=step.purpose,
        )
        # Its calls are charged as they end, whatever then happens to the step (see ledger.py).
        ledger = Ledger(self.store, principal, self.limits, hold_seconds(self.settings.thinking_deadline))
        return await ledger.run(self.augmenter.analyse(ctx, "auto", None))


def _review_text(review: Outcome | None) -> str | None:
    if review is None:
        return None
    if review.failure is not None:
        return f"Review unavailable: {review.failure}"
    return review.analysis.synthesis


def crash_error(error: str, hint: str | None) -> dict[str, Any]:
    return {"error": error, "status": "failed", "hint": hint or "Fix the input and call crash again."}
