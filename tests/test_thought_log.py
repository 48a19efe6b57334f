"""The per-thought trace on stderr under `serve --transport http`: off by default (the users' thoughts are not
the operator's to read), and when THINKING_HTTP_THOUGHT_LOG opts in, each entry names its principal."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from mcp import Client

from http_peer import http_server
from stdio_peer import server_env
from thinking_hats.config import Settings
from thinking_hats.ops.thought_log import Trace

SECRET = "Our unannounced merger with Initech closes on Friday."


async def test_an_http_server_writes_no_thought_to_stderr_by_default(tmp_path: Path) -> None:
    with http_server(server_env(tmp_path / "data", DISABLE_THOUGHT_LOGGING="false")) as server:
        async with Client(server.url) as client:
            reply = await client.call_tool(
                "sequentialthinking",
                {"thought": SECRET, "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False},
            )
    assert not reply.is_error
    log = "".join(server.stderr)
    assert "streamable HTTP on" in log  # the log checked is the server's
    assert "Initech" not in log and "Thought" not in log


@pytest.mark.parametrize("fmt", ["console", "json", "markdown"])
def test_an_opted_in_http_trace_names_the_principal_of_every_entry(fmt: str) -> None:
    stream = io.StringIO()
    settings = Settings(thinking_http_thought_log=True, crash_output_format=fmt, disable_thought_logging=False)
    trace = Trace(settings, stream, http=True)
    trace.thought({"thought": "t", "thought_number": 1, "total_thoughts": 2}, "alice")
    trace.step({"step_number": 1, "estimated_total": 1, "purpose": "analysis", "thought": "s"}, "sid", "bob")
    trace.minimal(1, 1, "m", "CONTINUE", "carol")
    text = stream.getvalue()
    assert "💭 Thought 1/2 · alice" in text and "1/1 → CONTINUE · carol" in text
    if fmt == "json":
        assert json.loads(text.splitlines()[4 + len("t".splitlines())])["principal"] == "bob"
    else:
        assert "· bob" in text


def test_stdio_keeps_its_trace_on_and_unattributed() -> None:
    on = Settings(disable_thought_logging=False)
    one = {"thought": "t", "thought_number": 1, "total_thoughts": 1}
    stream, silent = io.StringIO(), io.StringIO()
    Trace(on, stream).thought(one, "local")
    Trace(on, silent, http=True).thought(one, "alice")
    assert "💭 Thought 1/1" in stream.getvalue() and "local" not in stream.getvalue()
    assert silent.getvalue() == ""  # HTTP without THINKING_HTTP_THOUGHT_LOG
