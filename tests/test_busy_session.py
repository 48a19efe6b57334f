"""One busy session cannot starve the others: a worker lets only a few calls wait on one session's lock (each
holds a store connection meanwhile); the ones beyond fail at once with the retryable "session is busy", and
another tenant's call on the same worker is answered while the session is still locked. The real HTTP server,
a tokens file, PostgreSQL; ordering shown by which calls have returned, not by timing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import psycopg
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from calls import text_of
from http_peer import http_server
from stdio_peer import server_env
from thinking_hats.store import QUEUE_PER_SESSION

ALICE = "alice-token-5b1e7c9d3f"
BOB = "bob-token-8a2c4e6f0d"
TOOL = "sequentialthinking"
CALLS = 10


@asynccontextmanager
async def client_of(url: str, token: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,  # type: ignore[arg-type]
    ):
        yield client


def thought(session: str, number: int) -> dict[str, Any]:
    return {"thought": f"step {number} of the migration plan", "thoughtNumber": number, "totalThoughts": 20,
            "nextThoughtNeeded": True, "sessionId": session}  # fmt: skip


async def call(url: str, token: str, arguments: dict[str, Any]) -> Any:
    async with client_of(url, token) as client:
        return await client.call_tool(TOOL, arguments)


async def test_calls_queued_on_one_locked_session_are_bounded_and_another_tenant_is_answered_meanwhile(
    postgres_url: str, tmp_path: Path
) -> None:
    (tmp_path / "tokens").write_text(f"alice {ALICE}\nbob {BOB}\n")
    # One worker with 4 store connections; the lock waits long enough that nothing ends by timing out meanwhile.
    env = server_env(tmp_path / "data", THINKING_STORE=postgres_url, THINKING_HTTP_TOKENS_FILE=str(tmp_path / "tokens"),
                     THINKING_STORE_POOL_SIZE="4", THINKING_STORE_LOCK_TIMEOUT="120")  # fmt: skip
    with http_server(env) as server:
        first = await call(server.url, ALICE, thought("hot", 1))
        assert not first.is_error
        async with await psycopg.AsyncConnection.connect(postgres_url) as holder, holder.transaction():
            # Another call is writing to alice's session and holds its lock.
            await holder.execute("SELECT 1 FROM sessions WHERE principal = 'alice' AND id = 'hot' FOR UPDATE")
            queued = [asyncio.ensure_future(call(server.url, ALICE, thought("hot", n))) for n in range(2, 2 + CALLS)]
            deadline = time.monotonic() + 60
            while sum(q.done() for q in queued) < CALLS - QUEUE_PER_SESSION:
                assert time.monotonic() < deadline, "the calls beyond the bound did not fail fast"
                await asyncio.sleep(0.02)
            turned_away = [q.result() for q in queued if q.done()]
            other = await call(server.url, BOB, thought("elsewhere", 1))
            waiting = sum(not q.done() for q in queued)  # still queued: the lock has not been let go yet
        await asyncio.gather(*queued)
        answered = [q.result() for q in queued if q.result() not in turned_away]

    assert len(turned_away) == CALLS - QUEUE_PER_SESSION
    assert all(r.is_error and "the session is busy with another call; retry" in text_of(r) for r in turned_away)
    assert not other.is_error  # bob, on the same worker, was answered while alice's session stayed locked
    assert waiting == QUEUE_PER_SESSION
    assert len(answered) == QUEUE_PER_SESSION and not any(r.is_error for r in answered)  # once the lock went
