"""Two principals over HTTP (a tokens file, the real server on loopback): neither can see or touch the other's
sessions by listing, reading, guessing or naming them, nor pick the other's connection; tokens never reach the log.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from calls import text_of
from http_peer import INITIALIZE, MCP_HEADERS, HttpServer, http_server, post
from stdio_peer import server_env
from thinking_hats.config import Settings
from thinking_hats.errors import ConfigurationError
from thinking_hats.serving.gate import Principals

ALICE = "alice-token-7f3a9c2e1b"
BOB = "bob-token-4d8e6f0a2c"
WRONG = [ALICE + "x", "alice-token-0000000000", BOB[:-1]]  # near misses: never logged either
TOKENS_FILE = f"""# thinking-hats principals: name token
   # an indented comment

alice {ALICE}
\t
bob   {BOB}
"""
MODERN = "2026-07-28"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("principals")
    (root / "tokens").write_text(TOKENS_FILE)
    # DEBUG: every log line the server can write is written, so the token check below sees them all.
    env = server_env(root / "data", THINKING_HTTP_TOKENS_FILE=str(root / "tokens"), THINKING_LOG_LEVEL="DEBUG",
                     DISABLE_THOUGHT_LOGGING="false", THINKING_HTTP_THOUGHT_LOG="true")  # fmt: skip
    with http_server(env) as running:
        yield running


@asynccontextmanager
async def client_of(url: str, token: str, mode: str = "legacy", **headers: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"authorization": f"Bearer {token}", **headers}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
    ):
        yield client


def thought(text: str, number: int, **extra: Any) -> dict[str, Any]:
    return {"thought": text, "thoughtNumber": number, "totalThoughts": 5, "nextThoughtNeeded": True, **extra}


def step(text: str, number: int, **extra: Any) -> dict[str, Any]:
    return {"step_number": number, "estimated_total": 3, "purpose": "analysis", "context": "c", "thought": text,
            "outcome": "o", "next_action": "n", "rationale": "r", **extra}  # fmt: skip


async def entries(client: Client, session: str) -> list[dict[str, Any]]:
    result = await client.read_resource(f"thinking://sessions/{session}")
    return list(json.loads(getattr(result.contents[0], "text", ""))["entries"])


async def listed(client: Client) -> set[str]:
    result = await client.read_resource("thinking://sessions")
    return {s["id"] for s in json.loads(getattr(result.contents[0], "text", ""))}


async def read_error(client: Client, uri: str) -> str:
    with pytest.raises(MCPError) as raised:
        await client.read_resource(uri)
    return str(raised.value)


def rpc(url: str, token: str, method: str, params: dict[str, Any], session: str | None = None,
        version: str | None = None) -> httpx2.Response:  # fmt: skip
    """One raw JSON-RPC request; `session` and `version` go in the Mcp-Session-Id / MCP-Protocol-Version headers."""
    headers = {"authorization": f"Bearer {token}"}
    if session is not None:
        headers["mcp-session-id"] = session
    if version is not None:
        headers["mcp-protocol-version"] = version
    return post(url, {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}, **headers)


def message_of(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a reply sent as JSON or as a server-sent event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        messages = [json.loads(d) for d in data if d]
        return next(m for m in messages if "id" in m)
    return dict(response.json())


def think(url: str, token: str, connection: str, text: str, number: int) -> httpx2.Response:
    """A raw sequentialthinking call without a sessionId: it goes to the connection's default session."""
    return rpc(url, token, "tools/call", {"name": "sequentialthinking", "arguments": thought(text, number)}, connection)


def headers_of(token: str, connection: str) -> dict[str, str]:
    return MCP_HEADERS | {"authorization": f"Bearer {token}", "mcp-session-id": connection}


def legacy_connection(url: str, token: str) -> str:
    """A legacy (stateful) connection opened by hand: its Mcp-Session-Id, as the server issued it."""
    opened = post(url, INITIALIZE, authorization=f"Bearer {token}")
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    notified = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    authorization=f"Bearer {token}", **{"mcp-session-id": session})  # fmt: skip
    assert notified.status_code == 202, notified.text
    return session


# --- listing, reading, guessing and naming -------------------------------------------------------------------------


async def test_each_principal_lists_only_its_own_sessions(server: HttpServer) -> None:
    async with client_of(server.url, ALICE) as alice, client_of(server.url, BOB) as bob:
        await alice.call_tool("sequentialthinking", thought("alice's plan", 1, sessionId="list-alice"))
        await alice.call_tool("crash", step("alice's step", 1, session_id="list-alice-crash"))
        await bob.call_tool("sequentialthinking", thought("bob's plan", 1, sessionId="list-bob"))
        await bob.call_tool("sequentialthinking", thought("bob's too", 1, sessionId="list-both"))
        await alice.call_tool("sequentialthinking", thought("alice's too", 1, sessionId="list-both"))
        seen_by_alice, seen_by_bob = await listed(alice), await listed(bob)

    assert {"list-alice", "list-alice-crash", "list-both"} <= seen_by_alice
    assert {"list-bob", "list-both"} <= seen_by_bob
    assert "list-bob" not in seen_by_alice
    assert not {"list-alice", "list-alice-crash"} & seen_by_bob


async def test_another_principals_session_reads_exactly_like_an_unknown_id(server: HttpServer) -> None:
    async with client_of(server.url, ALICE) as alice, client_of(server.url, BOB) as bob:
        made = await alice.call_tool("sequentialthinking", thought("alice's secret plan", 1))
        assert made.structured_content is not None
        secret = made.structured_content["sessionId"]  # a generated id, as bob would have to guess it
        unknown = "0123456789abcdef"
        for suffix in ("", "/report"):
            foreign = await read_error(bob, f"thinking://sessions/{secret}{suffix}")
            missing = await read_error(bob, f"thinking://sessions/{unknown}{suffix}")
            assert foreign.replace(secret, "<id>") == missing.replace(unknown, "<id>"), (foreign, missing)
            assert "alice" not in foreign and "secret plan" not in foreign
        assert [e["number"] for e in await entries(alice, secret)] == [1]  # alice still reads it


async def test_naming_another_principals_session_writes_to_the_callers_own_session_of_that_name(
    server: HttpServer,
) -> None:
    async with client_of(server.url, ALICE) as alice, client_of(server.url, BOB) as bob:
        for n in (1, 2):
            await alice.call_tool("sequentialthinking", thought(f"alice {n}", n, sessionId="named"))
        await alice.call_tool("crash", step("alice's step", 1, session_id="named-crash"))
        before = await entries(alice, "named"), await entries(alice, "named-crash")

        appended = await bob.call_tool("sequentialthinking", thought("bob's thought 3", 3, sessionId="named"))
        revised = await bob.call_tool(
            "sequentialthinking", thought("bob revises 1", 4, sessionId="named", isRevision=True, revisesThought=1)
        )
        crashed = await bob.call_tool("crash", step("bob's step", 2, session_id="named-crash"))

        after = await entries(alice, "named"), await entries(alice, "named-crash")
        bobs = await entries(bob, "named"), await entries(bob, "named-crash")

    assert after == before  # alice's sessions are untouched
    assert not appended.is_error, text_of(appended)
    assert appended.structured_content is not None
    assert appended.structured_content["thoughtHistoryLength"] == 1  # bob's own new session of that name
    # Revising thought 1 of "named" means bob's thought 1, which he never wrote: refused, nothing of alice's shown.
    assert revised.is_error and "alice" not in text_of(revised)
    assert not crashed.is_error, text_of(crashed)
    assert json.loads(text_of(crashed))["session_id"] == "named-crash"
    assert [e["input"]["thought"] for e in bobs[0]] == ["bob's thought 3"]
    assert [e["input"]["thought"] for e in bobs[1]] == ["bob's step"]


# --- connection identity -----------------------------------------------------------------------------------------


async def test_a_client_cannot_use_another_clients_legacy_connection(server: HttpServer) -> None:
    connection = legacy_connection(server.url, ALICE)
    first = think(server.url, ALICE, connection, "alice, default session", 1)
    default = message_of(first)["result"]["structuredContent"]["sessionId"]

    refused_call = think(server.url, BOB, connection, "bob, in alice's connection?", 2)
    refused_stream = httpx2.get(server.url, headers=headers_of(BOB, connection), timeout=30)
    refused_close = httpx2.delete(server.url, headers=headers_of(BOB, connection), timeout=30)
    # A session id of alice's own, altered: not one the server issued.
    forged = think(server.url, ALICE, connection[:-1] + ("0" if connection[-1] != "0" else "1"), "forged", 2)

    second = think(server.url, ALICE, connection, "alice again", 2)
    async with client_of(server.url, ALICE) as alice:
        stored = await entries(alice, default)

    assert refused_call.status_code == refused_stream.status_code == refused_close.status_code == 404
    assert forged.status_code == 404
    assert message_of(second)["result"]["structuredContent"]["sessionId"] == default  # still alice's connection
    assert [e["input"]["thought"] for e in stored] == ["alice, default session", "alice again"]


async def test_on_the_stateless_path_a_session_id_header_selects_no_connection(server: HttpServer) -> None:
    connection = legacy_connection(server.url, ALICE)
    first = think(server.url, ALICE, connection, "legacy, default session", 1)
    default = message_of(first)["result"]["structuredContent"]["sessionId"]

    results = []
    for token in (ALICE, BOB):  # even alice's own connection id does not give a stateless call a connection
        async with client_of(server.url, token, MODERN, **{"mcp-session-id": connection}) as modern:
            results.append(await modern.call_tool("sequentialthinking", thought("continue without sessionId", 2)))
    async with client_of(server.url, ALICE) as alice:
        stored = await entries(alice, default)

    for result in results:
        assert result.is_error and "sessionId" in text_of(result), text_of(result)
    assert [e["input"]["thought"] for e in stored] == ["legacy, default session"]


# --- tokens --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("alice", "expected 'name token'"),
        (f"alice {ALICE} extra", "may only be 'operator'"),
        (f"alice {ALICE} operator extra", "expected 'name token'"),
        (f"default {ALICE}", "'default' is reserved for THINKING_HTTP_TOKEN's principal"),
        (f"al/ice {ALICE}", "expected 'name token'"),
        ("carol short-token", "shorter than 16 characters"),
        (f"alice {BOB}", "listed twice"),  # bob's token again
        (f"alice2 {ALICE}", "listed twice"),  # alice's token under another name
    ],
)
def test_a_bad_line_in_the_tokens_file_is_refused_with_its_file_and_line(
    tmp_path: Path, line: str, problem: str
) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"# principals\n\nalice {ALICE}\nbob {BOB}\n{line}\n" if "twice" in problem else f"\n# x\n{line}\n")
    number = 5 if "twice" in problem else 3
    with pytest.raises(ConfigurationError) as raised:
        Principals.from_settings(Settings(thinking_http_tokens_file=path))
    message = str(raised.value)
    assert f"{path}, line {number}" in message and problem in message, message
    assert ALICE not in message and BOB not in message and "short-token" not in message


def test_operators_are_marked_by_a_third_word_and_only_the_lone_http_token_is_one_by_itself(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"alice {ALICE} operator\nbob {BOB}\n")
    listed = Principals.from_settings(Settings(thinking_http_tokens_file=path, thinking_http_token="c" * 20))
    assert listed.operators == frozenset({"alice"}) and listed.names == {"alice", "bob", "default"}
    assert listed.who(f"Bearer {ALICE}".encode()) == "alice" and listed.who(f"Bearer {BOB}".encode()) == "bob"
    assert listed.who(f"Bearer {ALICE}x".encode()) is None and listed.who(b"") is None
    alone = Principals.from_settings(Settings(thinking_http_token="c" * 20))
    assert alone.operators == frozenset({"default"})


def test_the_server_refuses_to_start_on_a_bad_tokens_file_and_says_where(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"alice {ALICE}\n# the next line lacks its token\nbob\n")
    command = [sys.executable, "-m", "thinking_hats", "serve", "--transport", "http", "--port", "0"]
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(path))
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert f"{path}, line 3" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert ALICE not in done.stderr


def test_a_missing_or_wrong_token_gets_401_and_no_token_ever_reaches_the_log(server: HttpServer) -> None:
    # Last in the module: by now every test above has run against this server, at DEBUG.
    assert post(server.url, INITIALIZE).status_code == 401
    for wrong in WRONG:
        assert post(server.url, INITIALIZE, authorization=f"Bearer {wrong}").status_code == 401
    assert post(server.url, INITIALIZE, authorization=ALICE).status_code == 401  # without "Bearer "
    assert post(server.url, INITIALIZE, authorization=f"Basic {BOB}").status_code == 401
    assert post(server.url, INITIALIZE, authorization=f"Bearer {BOB}").status_code == 200

    log = "".join(server.stderr)
    assert "alice's plan" in log, "the thought trace is missing: the log checked is not the server's"
    assert "· alice" in log  # the trace names whose thought it is
    for secret in (ALICE, BOB, *WRONG):
        assert secret not in log
