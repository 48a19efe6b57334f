"""Load over HTTP: 50 concurrent clients, each in its own session, interleaving thoughts against one server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from http_peer import HttpServer, http_server
from stdio_peer import server_env

CLIENTS = 50
THOUGHTS = 8


async def one_client(url: str, index: int, round_: int) -> list[dict[str, Any]]:
    session = f"load-{round_}-{index}"
    replies: list[dict[str, Any]] = []
    async with Client(url) as client:
        for n in range(1, THOUGHTS + 1):
            result = await client.call_tool(
                "sequentialthinking",
                {"thought": f"client {index} thought {n}", "thoughtNumber": n, "totalThoughts": THOUGHTS,
                 "nextThoughtNeeded": n < THOUGHTS, "sessionId": session},
            )  # fmt: skip
            assert not result.is_error, result
            assert result.structured_content is not None
            replies.append(result.structured_content)
            await asyncio.sleep(0)  # yield between thoughts so the clients interleave
    return replies


async def load_round(server: HttpServer, round_: int) -> None:
    results = await asyncio.gather(*(one_client(server.url, i, round_) for i in range(CLIENTS)))
    for index, replies in enumerate(results):
        # No reply crosses sessions, and each session saw its own thoughts in order.
        assert {r["sessionId"] for r in replies} == {f"load-{round_}-{index}"}
        assert [r["thoughtNumber"] for r in replies] == list(range(1, THOUGHTS + 1))
        assert [r["thoughtHistoryLength"] for r in replies] == list(range(1, THOUGHTS + 1))


async def stored_numbers(url: str, session: str) -> list[int]:
    async with Client(url) as client:
        result = await client.read_resource(f"thinking://sessions/{session}")
    data = json.loads(result.contents[0].text)  # type: ignore[union-attr]
    return [e["number"] for e in data["entries"]]


@pytest.mark.slow
async def test_fifty_concurrent_http_clients_keep_to_their_own_sessions(tmp_path: Path) -> None:
    with http_server(server_env(tmp_path / "data")) as server:
        await load_round(server, 0)  # warm-up: imports, caches and pools reach their working size
        baseline = server.rss_kib()
        for round_ in (1, 2, 3):
            await load_round(server, round_)
        after = server.rss_kib()

        # No thought lost or duplicated: every session holds exactly its thoughts.
        for round_ in range(4):
            for index in range(0, CLIENTS, 7):
                assert await stored_numbers(server.url, f"load-{round_}-{index}") == list(range(1, THOUGHTS + 1))

    print(f"RSS after warm-up {baseline} KiB, after three more rounds {after} KiB")
    # Memory returns to its working size: three more rounds of 400 thoughts leave no growth beyond noise.
    assert after <= baseline * 1.15 + 4096, (baseline, after)
