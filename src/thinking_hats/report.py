"""Session exports: JSON for machines, a Markdown report for people."""

from __future__ import annotations

import time
from typing import Any

from .errors import ThinkingError
from .store import Entry, Session, Store


async def load(store: Store, principal: str | None, session_id: str) -> tuple[Session, list[Entry]]:
    """One session of `principal` (None: any, for the local CLI); another principal's session is not found."""
    found = await store.session(principal, session_id)
    if found is None:
        raise ThinkingError(f"no session '{session_id}': list sessions with `thinking-hats sessions list`.")
    return found


def session_json(session: Session, entries: list[Entry]) -> dict[str, Any]:
    return {
        "id": session.id,
        "tool": session.tool,
        "created": iso(session.created),
        "updated": iso(session.updated),
        "usage": session.meta.get("usage", {}),
        "entries": [
            {
                "seq": e.seq,
                "number": e.number,
                "branchId": e.branch_id,
                "created": iso(e.created),
                "input": e.data,
                "reply": e.reply.get("reply", e.reply),
            }
            for e in entries
        ],
    }


def session_markdown(session: Session, entries: list[Entry]) -> str:
    lines = [
        f"# Session `{session.id}` ({session.tool})",
        "",
        f"{len(entries)} entries · started {iso(session.created)} · last {iso(session.updated)}",
    ]
    usage = session.meta.get("usage")
    if usage:
        lines.append(
            f"Model usage: {usage.get('llmCalls', 0)} calls, {usage.get('inputTokens', 0)} input and "
            f"{usage.get('outputTokens', 0)} output tokens"
        )
    for entry in entries:
        lines += ["", *(_step(entry) if session.tool == "crash" else _thought(entry))]
    return "\n".join(lines) + "\n"


def _thought(entry: Entry) -> list[str]:
    d = entry.data
    kind = ""
    if d.get("is_revision"):
        kind = f" (revises {d.get('revises_thought')})"
    elif d.get("branch_from_thought"):
        kind = f" (branch `{d.get('branch_id')}` from {d.get('branch_from_thought')})"
    out = [f"## Thought {entry.number}/{d.get('total_thoughts')}{kind}", "", str(d.get("thought", ""))]
    reply = entry.reply.get("reply") or {}
    analysis = reply.get("analysis") or {}
    if reply.get("mode") == "augmented":
        score = (analysis.get("complexity") or {}).get("score")
        out += ["", f"*Strategy {analysis.get('strategy')} (score {score})*"]
        for run in analysis.get("hats", []):
            if run.get("hat") == "synthesis":
                continue
            out += ["", f"### {str(run.get('hat')).title()} hat ({run.get('status')}, {run.get('ms')} ms)"]
            out.append(str(run.get("output") or run.get("error") or "(no output)"))
        if analysis.get("synthesis"):
            out += ["", "### Synthesis", str(analysis["synthesis"])]
    for problem in analysis.get("problems", []):
        out.append(f"- ⚠ {problem}")
    return out


def _step(entry: Entry) -> list[str]:
    d = entry.data
    action = d.get("next_action")
    action_text = action.get("action") if isinstance(action, dict) else action
    out = [
        f"## Step {entry.number}/{d.get('estimated_total')}: {d.get('purpose')}",
        "",
        f"- Context: {d.get('context')}",
        f"- Thought: {d.get('thought')}",
        f"- Outcome: {d.get('outcome')}",
        f"- Next action: {action_text}",
        f"- Rationale: {d.get('rationale')}",
    ]
    if "confidence" in d:
        out.append(f"- Confidence: {d['confidence']}")
    if d.get("revised_by"):
        out.append(f"- Revised by step {d['revised_by']}")
    review = entry.reply.get("review")
    if review:
        out.append(f"- Critical review: {review}")
    return out


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
