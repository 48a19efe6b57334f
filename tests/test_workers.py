"""`serve --transport http --workers 2`: one port served by two processes over one store, a worker killed and
replaced, graceful shutdown on SIGTERM, and the health check a load balancer polls."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AsyncExitStack, suppress
from pathlib import Path
from typing import Any

import httpx2
import pytest
from benchmarks.stub_llm import StubLLM
from mcp import Client

from calls import text_of
from http_peer import HttpServer, call_in_turn, http_server
from pg import PostgresCluster
from stdio_peer import server_env

SESSIONS = 10
THOUGHTS = 20  # per session: 200 in all
DEADLINE = 15.0  # THINKING_DEADLINE of the shutdown test: the supervisor waits at most this + 10 s
MODEL_LATENCY = 2.0  # long enough for SIGTERM to land while every thought is inside its model call

pytestmark = pytest.mark.slow


def thought(session: str, number: int, **extra: Any) -> dict[str, Any]:
    return {"thought": f"{session}: thought {number}", "thoughtNumber": number, "totalThoughts": THOUGHTS,
            "nextThoughtNeeded": number < THOUGHTS, "sessionId": session, **extra}  # fmt: skip


def wait_for(condition: Callable[[], Any], seconds: float, what: str) -> Any:
    """Polls `condition` until it is truthy (returned) or `seconds` pass (the test fails, saying `what`)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.02)  # polling a condition of other processes: there is no event to wait on
    pytest.fail(f"{what} within {seconds} s")


def connections_held(pids: set[int], port: int) -> dict[int, int]:
    """How many established TCP connections to `port` each process holds (from /proc: its fds vs the table)."""
    established = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                established.add(f"socket:[{fields[9]}]")
    held = {}
    for pid in pids:
        links = []
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with suppress(OSError):
                links.append(os.readlink(fd))
        held[pid] = sum(link in established for link in links)
    return held


async def write_sessions(url: str, prefix: str, progress: Callable[[], None] = lambda: None, **extra: Any) -> int:
    """SESSIONS sessions of THOUGHTS thoughts, each session fed by two clients at once (a legacy one sending the odd
    thoughts, a stateless one the even ones), each call retried until it succeeds; returns how many were retried."""
    feeds = [
        call_in_turn(
            url,
            [("sequentialthinking", thought(f"{prefix}-{s}", n, **extra)) for n in range(1 + half, THOUGHTS + 1, 2)],
            mode,
            progress,
        )
        for s in range(SESSIONS)
        for half, mode in ((0, "legacy"), (1, "auto"))
    ]
    return sum(await asyncio.gather(*feeds))


async def check_sessions(url: str, prefix: str) -> None:
    """Every session holds each of its thoughts exactly once, numbered one after another."""
    async with Client(url) as client:
        for s in range(SESSIONS):
            stored = await client.read_resource(f"thinking://sessions/{prefix}-{s}")
            entries = json.loads(getattr(stored.contents[0], "text", ""))["entries"]
            numbers = Counter(e["number"] for e in entries)
            assert numbers == Counter(range(1, THOUGHTS + 1)), (prefix, s, sorted(numbers.elements()))
            assert [e["seq"] for e in entries] == list(range(1, THOUGHTS + 1)), (prefix, s)


def running_workers(server: HttpServer, gone: frozenset[int] = frozenset()) -> set[int]:
    """The pids of the two workers, once both run (and none of them is in `gone`)."""

    def ready() -> set[int] | None:
        found = server.workers()
        return found if len(found) == 2 and not found & gone else None

    return set(wait_for(ready, 60, "two workers running" + (f" in place of {set(gone)}" if gone else "")))


async def test_two_workers_serve_one_port_from_one_store_and_every_thought_lands_once(tmp_path: Path) -> None:
    with http_server(server_env(tmp_path / "data"), "--workers", "2") as server:
        workers = running_workers(server)
        held: dict[int, int] = {}

        def sample() -> None:  # which worker holds the clients' connections, while they are connected
            for pid, count in connections_held(workers, server.port).items():
                held[pid] = max(held.get(pid, 0), count)

        retries = await write_sessions(server.url, "two", sample)
        await check_sessions(server.url, "two")

    assert retries == 0  # nothing failed: no "database is locked", no lost connection
    assert set(held) == workers and all(held[pid] > 0 for pid in workers), held  # both processes served clients


def test_a_burst_of_connections_is_spread_over_both_workers(tmp_path: Path) -> None:
    # A client pool or a load balancer opens its keep-alive connections at once; on one shared accept socket the
    # first worker to wake took them all. Each worker now has its own socket and the kernel spreads them.
    burst = 40
    with http_server(server_env(tmp_path / "data"), "--workers", "2") as server:
        workers = running_workers(server)
        for _ in range(2):
            sockets = [socket.create_connection(("127.0.0.1", server.port), timeout=30) for _ in range(burst)]
            try:
                for sock in sockets:  # one request each: every connection is accepted and served
                    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                for sock in sockets:
                    assert sock.recv(65536).startswith(b"HTTP/1.1 200"), "healthz failed"
                held = connections_held(workers, server.port)
            finally:
                for sock in sockets:
                    sock.close()
            assert sum(held.values()) == burst and min(held.values()) >= burst // 5, held


async def test_a_worker_killed_mid_run_is_replaced_and_retried_calls_lose_nothing(tmp_path: Path) -> None:
    # Each thought spends 0.2 s in its model call, so the killed worker has thoughts in flight.
    async with StubLLM(latency=0.2) as stub:
        env = server_env(tmp_path / "data", LLM_PROVIDER="openai-compatible", LLM_BASE_URL=stub.base_url,
                         LLM_MODEL="stub-model", AGNO_TELEMETRY="false")  # fmt: skip
        with http_server(env, "--workers", "2") as server:
            workers = running_workers(server)
            done = 0
            third = asyncio.Event()

            def progress() -> None:
                nonlocal done
                done += 1
                if done == SESSIONS * THOUGHTS // 3:
                    third.set()

            writing = asyncio.create_task(write_sessions(server.url, "kill", progress, strategy="single"))
            await third.wait()
            held = connections_held(workers, server.port)
            victim = max(workers, key=lambda pid: held[pid])  # the busier one
            os.kill(victim, signal.SIGKILL)
            replaced = await asyncio.to_thread(running_workers, server, frozenset({victim}))
            retries = await writing
            await check_sessions(server.url, "kill")
            assert server.process.poll() is None  # the supervisor itself lives on

    assert workers - {victim} <= replaced
    assert retries > 0  # calls were cut by the kill, and their retries stored each thought once
    print(f"worker {victim} (holding {held[victim]} connections) killed; {retries} calls retried")


async def test_sigterm_lets_thoughts_in_flight_finish_refuses_new_connections_and_exits_zero(tmp_path: Path) -> None:
    async with StubLLM(latency=MODEL_LATENCY) as stub:
        env = server_env(tmp_path / "data", LLM_PROVIDER="openai-compatible", LLM_BASE_URL=stub.base_url,
                         LLM_MODEL="stub-model", AGNO_TELEMETRY="false", THINKING_DEADLINE=str(DEADLINE))  # fmt: skip
        with http_server(env, "--workers", "2") as server:
            running_workers(server)
            async with AsyncExitStack() as stack:
                clients = [await stack.enter_async_context(Client(server.url)) for _ in range(4)]
                for client in clients:  # the tool list, fetched now: after SIGTERM only the thoughts may run
                    await client.list_tools()

                def start(i: int) -> asyncio.Task[Any]:
                    arguments = thought(f"flight-{i}", 1, thought="Should we ship on Friday?", strategy="single")
                    return asyncio.create_task(clients[i].call_tool("sequentialthinking", arguments))

                calls = [start(i) for i in range(len(clients))]
                await asyncio.to_thread(wait_for, lambda: stub.stats()["requests"] >= 4, 60, "4 thoughts in flight")
                server.process.send_signal(signal.SIGTERM)
                stopped = time.monotonic()

                def refused() -> bool:
                    try:
                        socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
                    except ConnectionRefusedError:
                        return True
                    return False

                await asyncio.to_thread(wait_for, refused, 5, "new connections refused after SIGTERM")
                results = await asyncio.wait_for(asyncio.gather(*calls), DEADLINE)
            code = await asyncio.to_thread(server.process.wait, DEADLINE + 10)
            took = time.monotonic() - stopped

    for result in results:
        assert not result.is_error, text_of(result)
        assert "analysis of:" in text_of(result)  # the model's answer: the thought was not cut short
    assert code == 0
    assert took < MODEL_LATENCY + 10, took  # it left when the work was done, not at the end of its grace
    with sqlite3.connect(tmp_path / "data" / "sessions.sqlite3") as db:
        stored = sorted(db.execute("SELECT session_id, number FROM entries"))
    assert stored == [(f"flight-{i}", 1) for i in range(4)]


def test_healthz_answers_with_the_store_check_and_503_once_the_store_is_gone(
    postgres_cluster: PostgresCluster, tmp_path: Path
) -> None:
    url = postgres_cluster.create_database("health")
    with http_server(server_env(tmp_path / "data", THINKING_STORE=url), "--workers", "2") as server:
        health = server.url.removesuffix("/mcp") + "/healthz"
        running_workers(server)
        ok = [httpx2.get(health, timeout=30) for _ in range(6)]  # whichever worker answers
        postgres_cluster.drop_database(url)
        gone = wait_for(
            lambda: (r := httpx2.get(health, timeout=30)).status_code == 503 and r, 60, "/healthz answered 503"
        )

    for response in ok:
        assert response.status_code == 200, response.text
        assert response.json() == {"status": "ok", "store": {"backend": "postgresql", "schema": 4}}
    # Which dependency is down, without exception text (the answer is unauthenticated).
    assert gone.json() == {"status": "unavailable", "store": "unreachable"}, gone.text
