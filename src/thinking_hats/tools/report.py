"""Session exports: JSON for machines, a Markdown report for people."""

from __future__ import annotations

import re
import time
from typing import Any

from ..errors import ThinkingError
from ..store import Entry, Session, Store
from ..terminal import printable

LIST_BY_CLI = "list sessions with `thinking-hats sessions list`"
LIST_BY_MCP = "read the resource thinking://sessions for the sessions you can open"  # a remote client can


async def load(
    store: Store, principal: str | None, session_id: str, how_to_list: str = LIST_BY_CLI
) -> tuple[Session, list[Entry]]:
    """One session of `principal` (None: any, for the local CLI); another principal's session is not found."""
    found = await store.session(principal, session_id)
    if found is None:
        raise ThinkingError(f"no session '{session_id}': {how_to_list}.")
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
    """The report, with the chain drawn in Mermaid (`chain.mermaid` escapes its labels). Everything a client or a
    model wrote is quoted (`_quote`) or escaped (`_inline`, `_code`): a thought cannot add a heading, a fake
    `## Thought 2/2` or `### Synthesis`, a link or image, raw HTML or terminal controls."""
    lines = [
        f"# Session {_code(session.id)} ({_inline(session.tool)})",
        "",
        f"{len(entries)} {_plural(len(entries), 'entry', 'entries')} · started {iso(session.created)}"
        f" · last {iso(session.updated)}",
    ]
    usage = session.meta.get("usage")
    if usage:
        lines.append(
            f"Model usage: {_inline(usage.get('llmCalls', 0))} calls, {_inline(usage.get('inputTokens', 0))} input "
            f"and {_inline(usage.get('outputTokens', 0))} output tokens"
        )
    if entries:
        from .chain import chain_of, mermaid  # at the first report: start-up imports nothing it does not use

        lines += ["", *mermaid(chain_of(entries))]  # no heading of its own: the report's headings are its entries
    for entry in entries:
        lines += ["", *(_step(entry) if session.tool == "crash" else _thought(entry))]
    return "\n".join(lines) + "\n"


def _thought(entry: Entry) -> list[str]:
    d = entry.data
    kind = ""
    if d.get("is_revision"):
        kind = f" (revises {_inline(d.get('revises_thought'))})"
    elif d.get("branch_from_thought"):
        kind = f" (branch {_code(d.get('branch_id'))} from {_inline(d.get('branch_from_thought'))})"
    out = [f"## Thought {entry.number}/{_inline(d.get('total_thoughts'))}{kind}", "", *_quote(d.get("thought", ""))]
    reply = entry.reply.get("reply") or {}
    analysis = reply.get("analysis") or {}
    if reply.get("mode") == "augmented":
        score = (analysis.get("complexity") or {}).get("score")
        out += ["", f"*Strategy {_inline(analysis.get('strategy'))} (score {_inline(score)})*"]
        for run in analysis.get("hats", []):
            if run.get("hat") == "synthesis":
                continue
            hat, status, ms = (_inline(run.get(key)) for key in ("hat", "status", "ms"))
            title = f"{hat.title()} hat ({status}, {ms} ms)"
            out += ["", f"### {title}", "", *_quote(run.get("output") or run.get("error") or "(no output)")]
        if analysis.get("synthesis"):
            out += ["", "### Synthesis", "", *_quote(analysis["synthesis"])]
    if analysis.get("problems"):
        out.append("")
    for problem in analysis.get("problems", []):
        out.append(f"- ⚠ {_inline(problem)}")
    return out


def _step(entry: Entry) -> list[str]:
    d = entry.data
    action = d.get("next_action")
    action_text = action.get("action") if isinstance(action, dict) else action
    out = [f"## Step {entry.number}/{_inline(d.get('estimated_total'))}: {_inline(d.get('purpose'))}", ""]
    out += _item("Context", d.get("context"))
    out += _item("Thought", d.get("thought"))
    out += _item("Outcome", d.get("outcome"))
    out += _item("Next action", action_text)
    out += _item("Rationale", d.get("rationale"))
    if "confidence" in d:
        out.append(f"- Confidence: {_inline(d['confidence'])}")
    if d.get("revised_by"):
        out.append(f"- Revised by step {_inline(d['revised_by'])}")
    review = entry.reply.get("review")
    if review:
        out += _item("Critical review", review)
    return out


# --- user text in Markdown ---------------------------------------------------------------------------------
# A '#' opening a line's content (after any quote or list markers) would be a heading; a line of only '=' or '-'
# would turn the line above into one; '<' before a tag name or '&' before an entity would be raw HTML; '[' and ']'
# make links and images (`[a](javascript:alert(1))`, `![x](http://tracker)`, `[a]: url`), so both are escaped.
_HEADING = re.compile(r"^([\s>*+\-\d.)]*)#")
_UNDERLINE = re.compile(r"^([\s>]*)([=-])(?=[=\- \t]*$)")
_HTML = re.compile(r"<(?=[A-Za-z/!?])|&(?=#?\w+;)|[\[\]]")


def _escaped(line: str) -> str:
    line = _HTML.sub(r"\\\g<0>", line)
    line = _HEADING.sub(r"\1\\#", line)
    return _UNDERLINE.sub(r"\1\\\2", line)


def _quote(text: object, indent: str = "") -> list[str]:
    """Multi-line user text as a block quote: every line inside the quote, none of them structure."""
    return [f"{indent}> {_escaped(line)}".rstrip() for line in printable(text).split("\n")]


def _inline(value: object) -> str:
    """User text on one line of the report's own (a heading, a list item)."""
    return _HTML.sub(r"\\\g<0>", printable(value, newlines=False))


def _item(label: str, value: object) -> list[str]:
    text = printable(value)
    if "\n" not in text:
        return [f"- {label}: {_inline(text)}"]
    return [f"- {label}:", "", *_quote(text, indent="  "), ""]


def _code(value: object) -> str:
    """A code span that no backtick inside can close early."""
    text = printable(value, newlines=False)
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in re.findall(r"`+", text)) + 1)
    return f"{fence} {text} {fence}"


def _plural(count: int, one: str, many: str) -> str:
    return one if count == 1 else many


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
