"""The `crash` core: structured reasoning steps with purposes, revisions, branches and completion detection.

Unlike the original CRASH server, a call without `session_id` only ever lands in its own connection's session.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .analysis import Outcome, ThoughtContext
from .config import Settings
from .errors import InvalidThought
from .store import Entry, Store, new_session_id
from .thoughts import Augmenter
from .trace import Trace

PURPOSES = ("analysis", "action", "validation", "exploration", "hypothesis", "correction", "planning")
# Strict mode wants each thought to open the way a deliberate reasoning step does.
STRICT_THOUGHT_OPENINGS = (
    "ok, so",
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


class CrashStep(BaseModel):
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
    def __init__(self, settings: Settings, store: Store, trace: Trace, augmenter: Augmenter | None = None) -> None:
        self.settings = settings
        self.store = store
        self.trace = trace
        self.augmenter = augmenter
        self._defaults: OrderedDict[str, str] = OrderedDict()

    async def step(self, step: CrashStep, connection: str | None) -> dict[str, Any]:
        self._check_shape(step)
        session_id, note = self._session_for(step, connection)
        revised = self._entry(session_id, step.revises_step, "revises_step") if step.revises_step else None
        branch: dict[str, Any] | None = None
        if step.branch_from is not None:
            origin = self._entry(session_id, step.branch_from, "branch_from")
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
        seq = self.store.add(
            session_id,
            step.step_number,
            data.get("branch_id"),
            data,
            keep=self.settings.max_history_size,
        )
        if revised is not None:
            self.store.update_data(session_id, revised.seq, revised.data | {"revised_by": step.step_number})
        self.trace.step(data, session_id)

        completed = bool(step.is_final_step) or any(
            phrase in f"{step.thought} {step.outcome}".lower() for phrase in COMPLETION_PHRASES
        )
        action = step.next_action if isinstance(step.next_action, str) else data["next_action"]
        reply: dict[str, Any] = {
            "step_number": step.step_number,
            "estimated_total": max(step.estimated_total, step.step_number),
            "completed": completed,
            "total_steps": self.store.count(session_id),
            "next_action": action,
            "session_id": session_id,
        }
        if step.confidence is not None:
            reply["confidence"] = step.confidence
        if revised is not None:
            reply["revised_step"] = revised.number
        if branch:
            reply["branch"] = {k: v for k, v in branch.items() if v is not None}
        warnings = [note] if note else []
        if step.confidence is not None and step.confidence < LOW_CONFIDENCE:
            warnings.append(
                f"Low confidence ({step.confidence:.0%}): verify this step before acting on it"
                + (f" ({step.uncertainty_notes})" if step.uncertainty_notes else "")
                + "."
            )
            review = await self._review(step)
            if review is not None:
                reply["review"] = review
        if warnings:
            reply["warning"] = " ".join(warnings)
        self.store.set_reply(session_id, seq, reply)
        return reply

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
        if step.revises_step is not None and step.revises_step >= step.step_number:
            raise InvalidThought(
                f"revises_step={step.revises_step} must be an earlier step than step_number={step.step_number}",
                hint="Revise a step that came before this one.",
            )
        if step.branch_from is not None and step.branch_from >= step.step_number:
            raise InvalidThought(
                f"branch_from={step.branch_from} must be an earlier step than step_number={step.step_number}",
                hint="Branch from a step that came before this one.",
            )

    def _session_for(self, step: CrashStep, connection: str | None) -> tuple[str, str | None]:
        timeout = self.settings.crash_session_timeout * 60
        if step.session_id:
            session = self.store.session(step.session_id)
            if session is None:
                self.store.create_session(step.session_id, "crash")
                return step.session_id, None
            if session.tool != "crash":
                raise InvalidThought(
                    f"session '{step.session_id}' belongs to the {session.tool} tool",
                    hint="Use another session_id for crash steps.",
                )
            if time.time() - session.updated > timeout:
                self.store.reset_session(step.session_id)
                return step.session_id, (
                    f"Session '{step.session_id}' had been idle over {self.settings.crash_session_timeout:g} "
                    "minutes (CRASH_SESSION_TIMEOUT) and was started afresh."
                )
            return step.session_id, None
        current = self._defaults.get(connection) if connection is not None else None
        if current is not None:
            session = self.store.session(current)
            if session is None or time.time() - session.updated > timeout:
                current = None
        if current is None:
            current = new_session_id()
            self.store.create_session(current, "crash")
            if connection is not None:
                self._defaults[connection] = current
                if len(self._defaults) > 10_000:
                    self._defaults.popitem(last=False)
        return current, None

    def _entry(self, session_id: str, number: int, field: str) -> Entry:
        entry = self.store.find(session_id, number)
        if entry is None:
            steps = sorted({e.number for e in self.store.entries(session_id, last=200)})
            raise InvalidThought(
                f"{field}={number} names a step that is not in this session",
                hint=f"Existing steps: {steps}" if steps else "This session has no steps yet.",
            )
        return entry

    async def _review(self, step: CrashStep) -> str | None:
        """A low-confidence step gets one critical-hat review when a provider is configured (1 call)."""
        if self.augmenter is None or not self.settings.crash_review_low_confidence:
            return None
        ctx = ThoughtContext(
            thought=f"{step.thought}\n\nOutcome: {step.outcome}\nRationale: {step.rationale}",
            thought_number=step.step_number,
            total_thoughts=max(step.estimated_total, step.step_number),
            problem=step.context,
            confidence=step.confidence,
        )
        outcome: Outcome = await self.augmenter.analyse(ctx, "single", None)
        if outcome.failure is not None:
            return f"Review unavailable: {outcome.failure}"
        return outcome.analysis.synthesis


def crash_error(error: str, hint: str | None) -> dict[str, Any]:
    return {"error": error, "status": "failed", "hint": hint or "Fix the input and call crash again."}
