"""The per-thought console trace. Always stderr: under stdio, stdout is the MCP channel.

Every value from a thought or step is client text: it goes through `printable` (or `json_text`) before it is
written, so control sequences in it are shown, never run by the terminal.
"""

from __future__ import annotations

import re
import sys
import textwrap
import unicodedata
from collections.abc import Mapping
from typing import Any, TextIO

from ..config import Settings
from ..terminal import json_text, printable

_COLOURS = {"blue": "34", "yellow": "33", "green": "32", "cyan": "36", "red": "31", "dim": "2", "bold": "1"}
_WIDTH = 76


class Trace:
    """The console trace of one server. Under HTTP (`http`) it serves many users, whose text is not the operator's
    to read by default: it is off unless THINKING_HTTP_THOUGHT_LOG is on, and then names each thought's principal."""

    def __init__(self, settings: Settings, stream: TextIO | None = None, http: bool = False) -> None:
        self.enabled = not settings.disable_thought_logging and (not http or settings.thinking_http_thought_log)
        self.http = http
        self.stream = stream if stream is not None else sys.stderr
        self.format = settings.crash_output_format
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.colour = bool(isatty()) and not settings.crash_no_color

    def _paint(self, text: str, colour: str) -> str:
        return f"\x1b[{_COLOURS[colour]}m{text}\x1b[0m" if self.colour else text

    def _write(self, text: str) -> None:
        if not self.enabled:
            return
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed stderr must never take a thought down with it

    def _whose(self, principal: str | None) -> str:
        return f" · {printable(principal, newlines=False)}" if self.http and principal else ""

    def thought(self, data: Mapping[str, Any], principal: str | None = None) -> None:
        """The reference server's box: 💭 Thought, 🔄 Revision or 🌿 Branch (under HTTP, with its principal)."""
        if not self.enabled:
            return
        data = _printable(data)
        number, total = data.get("thought_number"), data.get("total_thoughts")
        if data.get("is_revision"):
            title = (
                self._paint("🔄 Revision", "yellow")
                + f" {number}/{total} (revising thought {data.get('revises_thought')})"
            )
        elif data.get("branch_from_thought"):
            title = (
                self._paint("🌿 Branch", "green")
                + f" {number}/{total} (from thought {data.get('branch_from_thought')}, ID: {data.get('branch_id')})"
            )
        else:
            title = self._paint("💭 Thought", "blue") + f" {number}/{total}"
        title += self._whose(principal)
        self._write(box(title, str(data.get("thought", "")), plain_title=_strip(title)))

    def step(self, data: Mapping[str, Any], session_id: str, principal: str | None = None) -> None:
        """A CRASH step in CRASH's formats: console, json or markdown (under HTTP, with its principal)."""
        if not self.enabled:
            return
        if self.format == "json":
            whose = {"principal": principal} if self.http and principal else {}
            self._write(json_text({"session_id": session_id, **whose, **data}))
            return
        data = _printable(data)
        step, total = data.get("step_number"), data.get("estimated_total")
        purpose = str(data.get("purpose", "")).upper()
        action = data.get("next_action")
        action_text = action.get("action", "") if isinstance(action, dict) else str(action)
        confidence = data.get("confidence")
        if self.format == "markdown":
            lines = [
                f"### Step {step}/{total}: {purpose}{self._whose(principal)}",
                f"- **Context:** {data.get('context', '')}",
                f"- **Thought:** {data.get('thought', '')}",
                f"- **Outcome:** {data.get('outcome', '')}",
                f"- **Next action:** {action_text}",
                f"- **Rationale:** {data.get('rationale', '')}",
            ]
            if confidence is not None:
                lines.append(f"- **Confidence:** {float(confidence):.0%}")
            self._write("\n".join(lines) + "\n")
            return
        head = self._paint(f"[Step {step}/{total}] {purpose}", "cyan") + self._whose(principal)
        if confidence is not None:
            head += self._paint(f"  confidence {float(confidence):.0%}", "red" if float(confidence) < 0.5 else "dim")
        body = "\n".join(
            [
                f"Thought: {data.get('thought', '')}",
                f"Outcome: {data.get('outcome', '')}",
                f"Next: {action_text}",
                f"Rationale: {data.get('rationale', '')}",
            ]
        )
        self._write(box(head, body, plain_title=_strip(head)))

    def minimal(self, step: int, total: int, thought: str, next_action: str, principal: str | None = None) -> None:
        if self.enabled:
            title = self._paint("💭 Step", "blue") + f" {step}/{total} → {printable(next_action, newlines=False)}"
            title += self._whose(principal)
            self._write(box(title, printable(thought), plain_title=_strip(title)))


def _printable(data: Mapping[str, Any]) -> dict[str, Any]:
    """The values shown from a thought or step, one level deep (next_action may be a dict): multi-line text keeps
    its lines only where the trace gives it a body; everything else stays on its line."""
    body = {"thought", "context", "outcome", "rationale"}

    def clean(key: str, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(k, v) for k, v in value.items()}
        if isinstance(value, str):
            return printable(value, newlines=key in body)
        return value

    return {key: clean(key, value) for key, value in data.items()}


def box(title: str, body: str, plain_title: str | None = None) -> str:
    lines = [ln for para in body.splitlines() or [""] for ln in (textwrap.wrap(para, _WIDTH) or [""])]
    shown_title = plain_title if plain_title is not None else title
    width = min(_WIDTH, max([_cells(shown_title), *map(_cells, lines)]))
    pad = " " * max(0, width - _cells(shown_title))
    top = "┌" + "─" * (width + 2) + "┐"
    out = [top, f"│ {title}{pad} │", "├" + "─" * (width + 2) + "┤"]
    out += [f"│ {ln}{' ' * max(0, width - _cells(ln))} │" for ln in lines]
    out.append("└" + "─" * (width + 2) + "┘")
    return "\n".join(out)


def _strip(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def _cells(text: str) -> int:
    """Terminal columns: emoji and CJK take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
