"""The legacy session table and slow or silent clients, against the real server over HTTP on loopback.

A flood of unauthenticated `initialize` requests must not lock anyone out or grow memory; a request that is never
finished (headers or body) must not hold a connection past THINKING_HTTP_IDLE_TIMEOUT; and a reply that takes
longer than that timeout is still a reply.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
from benchmarks.stub_llm import StubLLM
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from http_peer import INITIALIZE, HttpServer, http_server, post
from stdio_peer import server_env

FLOOD = 10_000
FLOOD_CLIENTS = 8
FLOOD_DEADLINE = 240.0  # seconds for the whole flood; about 60 on two busy cores
IDLE = 2.0  # THINKING_HTTP_IDLE_TIMEOUT of the slow-client server
MARGIN = 3.0
SLOW_MODEL = IDLE + 1.5  # one model call outlasts the idle timeout


def thought(text: str, number: int, **extra: Any) -> dict[str, Any]:
    return {"thought": text, "thoughtNumber": number, "totalThoughts": 3, "nextThoughtNeeded": True, **extra}


def raw_request(url: str, *, length: int | None = None, body: bytes = b"") -> bytes:
    """The bytes of a POST to the MCP endpoint; `length` may promise more body than is sent."""
    parts = urlsplit(url)
    size = len(body) if length is None else length
    head = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n"
    )
    return head.encode() + body


async def read_response(reader: asyncio.StreamReader) -> int:
    """Reads one response (length-delimited or chunked) and returns its status."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    lowered = head.lower()
    if b"transfer-encoding: chunked" in lowered:
        await reader.readuntil(b"\r\n0\r\n\r\n")
    else:
        length = int(lowered.split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
        await reader.readexactly(length)
    return status


async def flood(url: str, count: int, clients: int) -> dict[int, int]:
    """`count` raw `initialize` POSTs over `clients` keep-alive connections, each sent once the last is answered."""
    request = raw_request(url, body=json.dumps(INITIALIZE).encode())
    parts = urlsplit(url)
    left = count
    statuses: dict[int, int] = {}

    async def client() -> None:
        nonlocal left
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            while left > 0:
                left -= 1
                writer.write(request)
                status = await read_response(reader)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            writer.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return statuses


def closed_after(sock: socket.socket, deadline: float) -> tuple[float, bytes]:
    """Reads until the server closes the connection; returns how long that took and what it said."""
    started = time.monotonic()
    received = b""
    sock.settimeout(deadline)
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    except TimeoutError:
        pytest.fail(f"the server still held the connection after {deadline} s (it had sent {received[:200]!r})")
    return time.monotonic() - started, received


# --- a flood of initialize requests ------------------------------------------------------------------------------


@pytest.mark.slow
async def test_ten_thousand_unauthenticated_initializes_leave_a_new_client_able_to_work_in_bounded_memory(
    tmp_path: Path,
) -> None:
    with http_server(server_env(tmp_path / "data")) as server:
        # Warm-up to working size: imports, the store, the first sessions opened and closed.
        assert await flood(server.url, 300, 4) == {200: 300}
        baseline = server.rss_kib()

        started = time.monotonic()
        statuses = await asyncio.wait_for(flood(server.url, FLOOD, FLOOD_CLIENTS), FLOOD_DEADLINE)
        took = time.monotonic() - started
        after = server.rss_kib()

        async with Client(server.url, mode="legacy") as client:
            first = await client.call_tool("sequentialthinking", thought("After the flood.", 1))
            second = await client.call_tool("sequentialthinking", thought("Still in my session.", 2))

    print(f"{FLOOD} initializes in {took:.1f} s; RSS {baseline} KiB after warm-up, {after} KiB after the flood")
    assert statuses == {200: FLOOD}  # every initialize answered: none refused for a full table
    assert not first.is_error and not second.is_error
    assert first.structured_content is not None and second.structured_content is not None
    assert second.structured_content["sessionId"] == first.structured_content["sessionId"]
    assert second.structured_content["thoughtHistoryLength"] == 2
    # The table is bounded (THINKING_HTTP_SESSION_LIMIT per principal): the issue saw 73 -> 455 MiB.
    assert after <= baseline + 32 * 1024, (baseline, after)


async def test_one_principals_flood_leaves_another_principals_session_working(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    alice, mallory = "alice-token-0123456789", "mallory-token-0123456789"
    tokens.write_text(f"alice {alice}\nmallory {mallory}\n")
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(tokens), THINKING_HTTP_SESSION_LIMIT="5")
    with http_server(env) as server:
        async with (
            httpx2.AsyncClient(headers={"authorization": f"Bearer {alice}"}, timeout=30) as http,
            Client(streamable_http_client(server.url, http_client=http), mode="legacy") as client,
        ):
            before = await client.call_tool("sequentialthinking", thought("Before mallory's flood.", 1))
            refused = [post(server.url, INITIALIZE).status_code for _ in range(20)]  # no token at all
            opened = [post(server.url, INITIALIZE, authorization=f"Bearer {mallory}").status_code for _ in range(60)]
            after = await client.call_tool("sequentialthinking", thought("After it.", 2))

    assert set(refused) == {401} and set(opened) == {200}
    assert not before.is_error and not after.is_error
    assert before.structured_content is not None and after.structured_content is not None
    assert after.structured_content["sessionId"] == before.structured_content["sessionId"]
    assert after.structured_content["thoughtHistoryLength"] == 2


# --- slow and silent clients -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    with StubLLM.in_thread(latency=SLOW_MODEL) as stub:
        env = server_env(
            tmp_path_factory.mktemp("idle") / "data",
            THINKING_HTTP_IDLE_TIMEOUT=str(IDLE),
            LLM_PROVIDER="openai-compatible",
            LLM_BASE_URL=stub.base_url,
            LLM_MODEL="stub-model",
            AGNO_TELEMETRY="false",
        )
        with http_server(env) as server:
            yield server


def connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def test_a_half_sent_body_is_answered_and_its_connection_closed_after_the_idle_timeout(
    slow_server: HttpServer,
) -> None:
    server = slow_server
    with connect(server.url) as sock:
        sock.sendall(raw_request(server.url, length=500, body=b'{"jsonrpc": "2.0", "id": 1, '))
        took, said = closed_after(sock, 2 * IDLE + MARGIN)
    # The request is ended with an error reply after IDLE; the connection, which can carry no other request (its
    # body never ended), waits IDLE more for one and is closed.
    assert said.startswith(b"HTTP/1.1 ") and not said.startswith(b"HTTP/1.1 200"), said[:200]
    print(f"closed after {took:.2f} s")
    assert IDLE - 0.5 <= took <= 2 * IDLE + MARGIN, took


def test_a_connection_that_never_finishes_its_headers_is_closed_after_the_idle_timeout(
    slow_server: HttpServer,
) -> None:
    server = slow_server
    with connect(server.url) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
        took, said = closed_after(sock, IDLE + MARGIN)
    assert said == b"" and took <= IDLE + MARGIN, (took, said)


def test_a_kept_alive_connection_that_starts_a_request_and_stops_is_closed_after_the_idle_timeout(
    slow_server: HttpServer,
) -> None:
    server = slow_server
    with connect(server.url) as sock:
        parts = urlsplit(server.url)
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {parts.netloc}\r\n\r\n".encode())
        answered = b""
        while b"\r\n\r\n" not in answered:
            answered += sock.recv(65536)
        head, _, body = answered.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
        while len(body) < length:
            body += sock.recv(65536)
        assert head.startswith(b"HTTP/1.1 200"), answered[:200]
        # The first request was served; the second starts and stops. (Keep-alive alone would wait forever now.)
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        took, said = closed_after(sock, IDLE + MARGIN)
    assert said == b"" and took <= IDLE + MARGIN, (took, said)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_thought_slower_than_the_idle_timeout_still_gets_its_reply(slow_server: HttpServer, mode: str) -> None:
    server = slow_server
    session = f"slow-{mode}"
    async with Client(server.url, mode=mode) as client:  # type: ignore[arg-type]
        started = time.monotonic()
        result = await client.call_tool(
            "sequentialthinking",
            thought("Should we ship on Friday, given the risk?", 1, strategy="single", sessionId=session),
        )
        took = time.monotonic() - started
        stored = await client.read_resource(f"thinking://sessions/{session}")

    text = "".join(getattr(block, "text", "") for block in result.content)
    assert not result.is_error, text
    assert took >= SLOW_MODEL  # it really outlasted the idle timeout
    assert "analysis of:" in text  # the hat's analysis from the stub, not a timeout
    assert len(json.loads(getattr(stored.contents[0], "text", ""))["entries"]) == 1
