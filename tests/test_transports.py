"""The server over its real transports: stdio as a subprocess, and streamable HTTP served by uvicorn on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from calls import text_of
from http_peer import INITIALIZE, post
from stdio_peer import Peer, finish, spawn
from thinking_hats.config import Settings
from thinking_hats.errors import ConfigurationError
from thinking_hats.serving.transport import http_app

TOKEN = "tok-transport-test-5678"


def thought(text: str, number: int, total: int = 2, **extra: Any) -> dict[str, Any]:
    return {"thought": text, "thoughtNumber": number, "totalThoughts": total, "nextThoughtNeeded": True, **extra}


def subprocess_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """Only what the server needs: the client merges this over a minimal safe environment."""
    return {"THINKING_DATA_DIR": str(data_dir), "DISABLE_THOUGHT_LOGGING": "true", **extra}


# --- stdio ---


async def test_over_stdio_a_client_lists_the_tools_and_keeps_its_default_session(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "thinking_hats"], env=subprocess_env(tmp_path / "data"), cwd=tmp_path
    )
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            first = await client.call_tool("sequentialthinking", thought("Over stdio.", 1))
            second = await client.call_tool("sequentialthinking", thought("Still the same process.", 2))
            step = await client.call_tool(
                "crash",
                {
                    "step_number": 1,
                    "estimated_total": 1,
                    "purpose": "action",
                    "context": "c",
                    "thought": "t",
                    "outcome": "o",
                    "next_action": "n",
                    "rationale": "r",
                },
            )
            session_id = first.structured_content["sessionId"]
            session = await client.read_resource(f"thinking://sessions/{session_id}")

    assert names == ["crash", "sequential_thinking", "sequentialthinking"]
    assert not (first.is_error or second.is_error or step.is_error)
    assert second.structured_content["sessionId"] == session_id
    assert second.structured_content["thoughtHistoryLength"] == 2
    assert len(json.loads(getattr(session.contents[0], "text", ""))["entries"]) == 2
    assert (tmp_path / "data" / "sessions.sqlite3").exists()


def test_under_stdio_stdout_carries_only_protocol_messages_even_with_the_trace_on(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("THINKING_", "LLM_", "CRASH_"))}
    env |= subprocess_env(tmp_path / "data", DISABLE_THOUGHT_LOGGING="false", THINKING_LOG_LEVEL="DEBUG")
    process = spawn(env)
    try:
        peer = Peer(process)
        peer.initialize()
        reply = peer.call("sequentialthinking", thought("Traced to stderr.", 1))
        peer.call("crash", {"step_number": 1, "estimated_total": 1, "purpose": "action", "context": "c",
                            "thought": "t", "outcome": "o", "next_action": "n", "rationale": "r"})  # fmt: skip
        peer.call("sequential_thinking", {"thought": "m", "step": 1, "total_steps": 1, "next_action": "CONTINUE"})
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        process.stdin.close()  # end of input: the server exits
        rest = process.stdout.read().decode()
        stderr = process.stderr.read().decode()
        assert process.wait(timeout=30) == 0, stderr
    finally:
        finish(process)

    assert reply["result"]["structuredContent"]["thoughtNumber"] == 1
    for line in rest.splitlines():  # whatever came after the last reply is protocol too
        assert json.loads(line)["jsonrpc"] == "2.0", line
    assert "💭 Thought" in stderr and "Traced to stderr." in stderr  # the trace went to stderr


# --- streamable HTTP ---


@contextmanager
def serving(settings: Settings, host: str = "127.0.0.1") -> Iterator[str]:
    """The real HTTP app under uvicorn in a thread. The socket listens before uvicorn starts, so no waiting:
    a client that connects at once sits in the backlog until uvicorn accepts it."""
    app = http_app(settings, host)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop"


async def test_over_http_a_client_calls_the_tools_and_resumes_by_session_id() -> None:
    with serving(Settings()) as url:
        async with Client(url) as client:
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            first = await client.call_tool("sequentialthinking", thought("Over HTTP.", 1))
            session_id = first.structured_content["sessionId"]
            second = await client.call_tool("sequentialthinking", thought("Resumed.", 2, sessionId=session_id))
            minimal = await client.call_tool(
                "sequential_thinking", {"thought": "m", "step": 1, "total_steps": 1, "next_action": "CONTINUE"}
            )

    assert names == ["crash", "sequential_thinking", "sequentialthinking"]
    assert not (first.is_error or second.is_error or minimal.is_error)
    assert second.structured_content["sessionId"] == session_id
    assert second.structured_content["thoughtHistoryLength"] == 2


async def test_over_stateless_http_a_continuation_without_session_id_is_refused_with_the_fix() -> None:
    with serving(Settings()) as url:
        async with Client(url) as client:  # the modern protocol: no connection to hang a default session on
            await client.call_tool("sequentialthinking", thought("First.", 1))
            orphan = await client.call_tool("sequentialthinking", thought("Second, no sessionId.", 2))

    assert orphan.is_error
    assert "sessionId" in text_of(orphan)


async def test_over_stateful_http_each_connection_keeps_its_own_default_session() -> None:
    with serving(Settings()) as url:
        async with Client(url, mode="legacy") as alice, Client(url, mode="legacy") as bob:
            a1 = await alice.call_tool("sequentialthinking", thought("alice 1", 1))
            b1 = await bob.call_tool("sequentialthinking", thought("bob 1", 1))
            a2 = await alice.call_tool("sequentialthinking", thought("alice 2", 2))
            b2 = await bob.call_tool("sequentialthinking", thought("bob 2", 2))

    assert not any(r.is_error for r in (a1, b1, a2, b2))
    assert a1.structured_content["sessionId"] == a2.structured_content["sessionId"]
    assert b1.structured_content["sessionId"] == b2.structured_content["sessionId"]
    assert a1.structured_content["sessionId"] != b1.structured_content["sessionId"]
    assert a2.structured_content["thoughtHistoryLength"] == b2.structured_content["thoughtHistoryLength"] == 2


async def test_with_a_token_requests_without_the_bearer_header_get_401_and_with_it_are_served() -> None:
    with serving(Settings(thinking_http_token=TOKEN)) as url:
        missing = post(url, INITIALIZE)
        wrong = post(url, INITIALIZE, authorization="Bearer not-the-token")
        bare = post(url, INITIALIZE, authorization=TOKEN)
        accepted = post(url, INITIALIZE, authorization=f"Bearer {TOKEN}")
        async with (
            httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            result = await client.call_tool("sequentialthinking", thought("Authorised.", 1))

    for refused in (missing, wrong, bare):
        assert refused.status_code == 401
        assert "THINKING_HTTP_TOKEN" in refused.text and TOKEN not in refused.text
        assert refused.headers["www-authenticate"].startswith("Bearer")
    assert accepted.status_code == 200
    assert not result.is_error


def test_a_foreign_host_header_is_refused_on_loopback() -> None:
    with serving(Settings()) as url:
        foreign = post(url, INITIALIZE, host="evil.example")
        local = post(url, INITIALIZE)
    assert foreign.status_code in (403, 421)
    assert local.status_code == 200


def test_binding_beyond_loopback_without_a_token_is_refused_with_what_to_set() -> None:
    with pytest.raises(ConfigurationError) as raised:
        http_app(Settings(), "0.0.0.0")
    message = str(raised.value)
    assert "0.0.0.0" in message and "THINKING_HTTP_TOKEN" in message and "127.0.0.1" in message


def test_binding_beyond_loopback_with_a_token_is_allowed() -> None:
    assert http_app(Settings(thinking_http_token=TOKEN), "0.0.0.0") is not None
