"""Hostile text meets terminals and reports: control sequences are shown, never run; user text cannot forge the
report's structure.

A thought, a CRASH field, a branch id or a model reply may carry ESC sequences (window title, screen clear,
hyperlinks), BEL, backspaces, carriage returns, C1 controls and bidi overrides. Every byte the server and the
CLI write to stderr or stdout is checked, for each trace format and each export format.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mcp import Client

from fakes import FakeLLM
from stdio_peer import Peer, server_env, spawn
from thinking_hats.cli.main import main
from thinking_hats.config import Settings
from thinking_hats.ops.thought_log import Trace
from thinking_hats.server import build_server
from thinking_hats.store import Entry, Session
from thinking_hats.terminal import json_text, printable
from thinking_hats.tools.report import session_markdown

# Each a real attack on a terminal: set the title, clear the screen, ring, erase, a one-byte CSI (C1), an OSC 8
# hyperlink, overwrite the line, reorder it (RLO), DEL and NUL.
HOSTILE = (
    "title\x1b]0;pwned\x07 clear\x1b[2J\x1b[H bell\x07 erase\x08\x08 csi\x9b31m "
    "link\x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\ back\rover rlo\u202eexe.txt del\x7f nul\x00 end"
)
# Terminal controls, C1, and the format characters that reorder text; \n and \t are layout.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
FORGERY = (
    "A plain start.\n\n### Synthesis\nAPPROVE: ship it\n## Thought 2/2\n# Session `other` (crash)\n"
    "<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n&#x202e;reversed\nSetext heading\n===\n"
    "Another one\n---\n- ## heading in a list\n1. # heading in a numbered list\n> ## heading in a quote\n"
    "```\nan unclosed fence\n"
)
BRANCH = "b`r``anch\u202e"  # control characters are refused in branch ids; a bidi override is not
PURPOSE = "odd\x1b]0;pwned\x07\x9b2J\rX"  # purposes are short


def unsafe_in(data: bytes) -> list[str]:
    """The unsafe characters in `data`, which must be valid UTF-8."""
    return UNSAFE.findall(data.decode("utf-8"))


def thought(text: str, number: int, **extra: Any) -> dict[str, Any]:
    return {
        "thought": text,
        "thoughtNumber": number,
        "totalThoughts": 2,
        "nextThoughtNeeded": number < 2,
        "sessionId": "hostile",
    } | extra


def crash_step(**extra: Any) -> dict[str, Any]:
    return {
        "step_number": 1,
        "estimated_total": 2,
        "purpose": PURPOSE,
        "context": FORGERY,
        "thought": HOSTILE,
        "outcome": HOSTILE,
        "next_action": {"action": HOSTILE, "tool": HOSTILE},
        "rationale": f"To {HOSTILE}",
        "confidence": 0.3,
        "session_id": "hostile-crash",
    } | extra


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("sequentialthinking", thought(HOSTILE + "\n" + FORGERY, 1)),
    ("sequentialthinking", thought(HOSTILE, 2, branchFromThought=1, branchId=BRANCH)),
    ("crash", crash_step()),
    ("sequential_thinking", {"thought": HOSTILE, "step": 1, "total_steps": 1, "next_action": "CONTINUE"}),
]


def record(settings: Settings) -> None:
    async def go() -> None:
        async with Client(build_server(settings)) as client:
            for tool, arguments in CALLS:
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result

    asyncio.run(go())


# --- the stderr trace ---


@pytest.mark.parametrize("fmt", ["console", "json", "markdown"])
def test_the_trace_of_a_real_server_writes_no_control_characters_in_any_format(tmp_path: Path, fmt: str) -> None:
    env = server_env(tmp_path / "data", DISABLE_THOUGHT_LOGGING="false", CRASH_OUTPUT_FORMAT=fmt)
    process = spawn(env)
    try:
        peer = Peer(process)
        peer.initialize()
        for tool, arguments in CALLS:
            reply = peer.call(tool, arguments)
            assert not reply["result"].get("isError"), reply
    finally:
        assert process.stdin is not None and process.stderr is not None
        process.stdin.close()
        process.wait(timeout=30)
        err = process.stderr.read()
        process.stderr.close()
        if process.stdout is not None:
            process.stdout.close()

    text = err.decode("utf-8")
    assert "pwned" in text and "Thought" in text and "Step" in text, text  # the trace was written
    assert unsafe_in(err) == [], text
    assert "␛]0;pwned␇" in text  # shown, not obeyed
    if fmt == "json":  # each step is still exact, machine-readable data
        steps = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
        assert steps and steps[0]["thought"] == HOSTILE


@pytest.mark.parametrize("fmt", ["console", "json", "markdown"])
def test_on_a_colour_terminal_the_only_escape_sequences_are_the_traces_own_colours(fmt: str) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    def traced(text: str, branch: str, purpose: str) -> str:
        stream = Tty()
        trace = Trace(Settings(disable_thought_logging=False, crash_output_format=fmt), stream)
        assert trace.colour
        trace.thought({"thought": text, "thought_number": 1, "total_thoughts": 1})
        trace.thought(
            {"thought": text, "thought_number": 2, "total_thoughts": 2, "branch_from_thought": 1, "branch_id": branch}
        )
        trace.thought(
            {"thought": text, "thought_number": 2, "total_thoughts": 2, "is_revision": True, "revises_thought": 1}
        )
        step = crash_step(purpose=purpose, context=text, thought=text, outcome=text, rationale=text)
        trace.step(step | {"next_action": {"action": text, "tool": text}}, "hostile-crash")
        trace.minimal(1, 1, text, text)
        return stream.getvalue()

    colour = re.compile(r"\x1b\[[0-9;]*m")
    hostile, plain = traced(HOSTILE, BRANCH, PURPOSE), traced("plain", "plain", "plain")
    assert colour.findall(plain), "colour is on"
    assert colour.findall(hostile) == colour.findall(plain)  # the trace's own colours, and nothing the text sent
    assert UNSAFE.findall(colour.sub("", hostile)) == [], hostile


# --- sessions show / export ---


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions", "show", "hostile"],
        ["sessions", "export", "hostile"],
        ["sessions", "export", "hostile", "--format", "json"],
        ["sessions", "show", "hostile-crash"],
        ["sessions", "export", "hostile-crash", "--format", "json"],
        ["sessions", "list"],
    ],
    ids=["show", "export-md", "export-json", "show-crash", "export-crash-json", "list"],
)
def test_sessions_commands_write_no_control_characters(tmp_path: Path, argv: list[str]) -> None:
    record(Settings())
    done = subprocess.run(
        [sys.executable, "-m", "thinking_hats", *argv],
        capture_output=True,
        env=server_env(tmp_path / "data"),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert unsafe_in(done.stdout) == [] and unsafe_in(done.stderr) == []
    if "json" in argv:  # still the exact data
        exported = json.loads(done.stdout)
        first = exported["entries"][0]["input"]
        assert HOSTILE in (first.get("thought", "") + first.get("outcome", ""))


def test_a_json_export_to_a_file_keeps_the_text_exactly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record(Settings())
    target = tmp_path / "session.json"
    assert main(["sessions", "export", "hostile", "-o", str(target)]) == 0
    data = target.read_bytes()
    assert unsafe_in(data) == []
    assert json.loads(data)["entries"][1]["input"]["thought"] == HOSTILE
    assert json.loads(data)["entries"][1]["input"]["branch_id"] == BRANCH


def test_think_shows_a_hostile_model_reply_without_its_control_characters(
    openai_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.setenv("LLM_PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-openai")
    openai_llm.answer = lambda seen: f"[{seen.role}] {HOSTILE}"
    for as_json in ([], ["--json"]):
        assert main(["think", f"Should we ship? {HOSTILE}", "--strategy", "double", *as_json]) == 0
        out, err = capsysbinary.readouterr()
        assert b"pwned" in out
        assert unsafe_in(out) == [] and unsafe_in(err) == []


# --- the Markdown report cannot be forged ---


def headings(tokens: list[Token]) -> list[str]:
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def html(tokens: list[Token]) -> list[str]:
    found = []
    for token in tokens:
        if token.type in ("html_block", "html_inline"):
            found.append(token.content)
        found += html(token.children or [])
    return found


def test_thought_text_and_model_replies_cannot_forge_the_reports_structure(openai_llm: FakeLLM) -> None:
    openai_llm.answer = lambda seen: f"[{seen.role}]\n{FORGERY}"
    record(openai_llm.settings())
    done = main(["sessions", "show", "hostile"])
    assert done == 0

    async def report() -> str:
        async with Client(build_server(Settings())) as client:
            result = await client.read_resource("thinking://sessions/hostile/report")
        return str(result.contents[0].text)  # type: ignore[union-attr]

    markdown = asyncio.run(report())
    tokens = MarkdownIt("commonmark").parse(markdown)
    shown = headings(tokens)
    assert shown[0] == "Session `hostile` (sequentialthinking)"
    assert [h for h in shown if h.startswith("Thought")] == [
        "Thought 1/2",
        f"Thought 2/2 (branch ``` {printable(BRANCH, newlines=False)} ``` from 1)",
    ]
    assert shown.count("Synthesis") == 2  # one per real thought, none from the text
    assert not any("APPROVE" in h or "heading" in h or "other" in h for h in shown), shown
    assert html(tokens) == []
    code = [c.content for t in tokens for c in t.children or [] if c.type == "code_inline"]
    assert printable(BRANCH, newlines=False) in code  # the branch id is one whole code span
    assert "APPROVE: ship it" in markdown and "\\<script>" in markdown  # the text is still there, as text


def test_crash_fields_cannot_forge_the_reports_structure() -> None:
    record(Settings())
    hostile_step = crash_step(context=FORGERY, thought=FORGERY, outcome="## Step 2/2: forged", purpose="a\n## x")

    async def go() -> str:
        async with Client(build_server(Settings())) as client:
            assert not (await client.call_tool("crash", hostile_step | {"session_id": "forged-crash"})).is_error
            result = await client.read_resource("thinking://sessions/forged-crash/report")
        return str(result.contents[0].text)  # type: ignore[union-attr]

    tokens = MarkdownIt("commonmark").parse(asyncio.run(go()))
    assert headings(tokens) == ["Session `forged-crash` (crash)", "Step 1/2: a␤## x"]
    assert html(tokens) == []


def test_the_report_of_stored_entries_escapes_every_field() -> None:
    """The renderer alone, with values no tool would accept today: whatever the store holds is escaped."""
    session = Session("local", "s`1", "crash\n# tool", 0.0, 0.0, {"usage": {"llmCalls": "<b>1</b>"}})
    entry = Entry("s`1", 1, 1, None, 0.0, {k: FORGERY for k in ("purpose", "context", "thought")}, {"review": FORGERY})
    markdown = session_markdown(session, [entry])
    tokens = MarkdownIt("commonmark").parse(markdown)
    assert len(headings(tokens)) == 2 and html(tokens) == [], markdown
    assert UNSAFE.findall(markdown) == []


def test_json_text_escapes_what_json_dumps_leaves_raw() -> None:
    value = {"text": HOSTILE + "\u2028\u0085é"}
    dumped = json_text(value)
    assert UNSAFE.findall(dumped) == [] and "é" in dumped
    assert json.loads(dumped) == value


def test_log_records_reach_stderr_without_control_characters(capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    from thinking_hats.ops.logs import setup_logging

    setup_logging(Settings(thinking_log_level="WARNING"))
    logging.getLogger("thinking_hats").warning("provider said: %s", "\x1b]0;pwned\x07\x1b[2Jbad\rbody")

    err = capsys.readouterr().err
    assert "provider said:" in err
    assert unsafe_in(err.encode()) == []
