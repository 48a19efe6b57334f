"""The service heals itself and bounds every wait: a worker whose store is down or locked does not serve, its
supervisor starts it again with backoff, and the whole service answers again within seconds of the store coming
back (PostgreSQL stopped and started around a worker's restart and around start-up; SQLite's write lock held
by another process at start-up); a lock held elsewhere never blocks the event loop or holds a call for long."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest
from mcp import Client

from calls import text_of
from http_peer import MCP_HEADERS, HttpServer, http_server
from pg import PostgresCluster, private_cluster
from stdio_peer import server_env
from thinking_hats.config import Settings
from thinking_hats.server import build_server
from thinking_hats.store import open_store_for

MODERN = "2026-07-28"
RECOVERY_DEADLINE = 30.0  # seconds from the store's return to every request answered (measured: a few)

pytestmark = pytest.mark.slow


def thought(session: str, number: int = 1) -> dict[str, Any]:
    return {"thought": f"{session}: thought {number}", "thoughtNumber": number, "totalThoughts": 3,
            "nextThoughtNeeded": True, "sessionId": session}  # fmt: skip


def call(url: str, session: str, timeout: float = 30) -> httpx2.Response:
    """One stateless tools/call that writes to the store, on a new connection (spread over the workers)."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "sequentialthinking", "arguments": thought(session), "_meta": meta}}  # fmt: skip
    with httpx2.Client(timeout=timeout) as http:
        routing = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "sequentialthinking"}
        return http.post(url, json=body, headers=MCP_HEADERS | routing)


def answered(response: httpx2.Response) -> bool:
    return response.status_code == 200 and '"isError":true' not in response.text.replace(" ", "")


def serving(url: str, calls: int = 10) -> bool:
    """Every one of `calls` calls (new connections: both workers) is answered."""
    try:
        return all(answered(call(url, uuid.uuid4().hex[:12], timeout=10)) for _ in range(calls))
    except httpx2.HTTPError:
        return False


def until(condition: Callable[[], Any], seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.02)  # polling other processes: there is no event to wait on
    pytest.fail(f"not {what} within {seconds} s")


def logged(server: HttpServer, text: str, times: int = 1) -> bool:
    return sum(text in line for line in server.stderr) >= times


def workers_of(server: HttpServer) -> set[int]:
    def both() -> set[int] | None:
        found = server.workers()
        return found if len(found) == 2 else None

    return set(until(both, 60, "two workers running"))


@pytest.fixture
def stoppable() -> Iterator[PostgresCluster]:
    with private_cluster() as cluster:
        yield cluster


def test_a_worker_killed_while_postgresql_is_down_is_replaced_and_serves_once_it_is_back(
    stoppable: PostgresCluster, tmp_path: Path
) -> None:
    env = server_env(tmp_path / "data", THINKING_STORE=stoppable.url())
    with http_server(env, "--workers", "2") as server:
        victim = min(workers_of(server))
        assert serving(server.url)
        stoppable.stop(keep=True)
        subprocess.run(["kill", "-9", str(victim)], check=True)
        until(lambda: logged(server, "could not start", 2), 60, "the replacement worker failing twice")
        stoppable.start(port=stoppable.port)
        back = time.monotonic()
        until(lambda: serving(server.url), RECOVERY_DEADLINE, "serving again")
        took = time.monotonic() - back
        health = httpx2.get(server.url.removesuffix("/mcp") + "/healthz", timeout=10)

    print(f"PostgreSQL back -> every call answered: {took:.1f} s")
    assert health.status_code == 200, health.text
    failures = [line for line in server.stderr if "could not start" in line]
    assert all("WARNING" in line and "cannot open the session store" in line for line in failures), failures
    assert "Traceback" not in "".join(server.stderr), "".join(server.stderr)
    delays = [float(line.rsplit("again in ", 1)[1].split(" s")[0]) for line in failures]
    assert delays[:3] == [0.25, 0.5, 1.0][: len(delays[:3])] and max(delays) <= 15  # doubling, capped


def test_workers_started_while_postgresql_is_down_serve_once_it_is_up(
    stoppable: PostgresCluster, tmp_path: Path
) -> None:
    stoppable.stop(keep=True)
    env = server_env(tmp_path / "data", THINKING_STORE=stoppable.url())
    with http_server(env, "--workers", "2") as server:
        until(lambda: logged(server, "could not start", 2), 60, "both workers failing to start")
        stoppable.start(port=stoppable.port)
        back = time.monotonic()
        until(lambda: serving(server.url), RECOVERY_DEADLINE, "serving")
        took = time.monotonic() - back

    print(f"PostgreSQL up after start-up -> every call answered: {took:.1f} s")
    assert "Traceback" not in "".join(server.stderr), "".join(server.stderr)


def hold_write_lock(path: Path) -> subprocess.Popen[str]:
    """Another process holding the SQLite file's write lock (BEGIN IMMEDIATE) until its stdin closes."""
    script = (
        "import sqlite3, sys\n"
        f"db = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
        "db.execute('PRAGMA journal_mode = WAL')\n"
        "db.execute('BEGIN IMMEDIATE')\n"
        "print('locked', flush=True)\n"
        "sys.stdin.read()\n"
        "db.execute('COMMIT')\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    return holder


def release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.close()
    assert holder.wait(timeout=30) == 0
    holder.stdout.close()


def end(holder: subprocess.Popen[str]) -> None:
    """Whatever happened in the test: the holder gone and its pipes closed."""
    if holder.poll() is None:
        holder.kill()
        holder.wait(timeout=30)
    for pipe in (holder.stdin, holder.stdout):
        if pipe is not None and not pipe.closed:
            pipe.close()


def test_workers_started_while_another_process_holds_the_sqlite_write_lock_serve_once_it_is_released(
    tmp_path: Path,
) -> None:
    # A new file: setting it up needs the write lock, which the other process holds.
    (tmp_path / "data").mkdir()
    holder = hold_write_lock(tmp_path / "data" / "sessions.sqlite3")
    env = server_env(tmp_path / "data", THINKING_STORE_LOCK_TIMEOUT="1")
    try:
        with http_server(env, "--workers", "2") as server:
            until(lambda: logged(server, "could not start", 2), 60, "both workers failing to start")
            release(holder)
            back = time.monotonic()
            until(lambda: serving(server.url), RECOVERY_DEADLINE, "serving")
            took = time.monotonic() - back
    finally:
        end(holder)
    print(f"SQLite lock released -> every call answered: {took:.1f} s")
    assert any("another process held its write lock" in line for line in server.stderr), "".join(server.stderr)
    assert "Traceback" not in "".join(server.stderr)


async def test_a_server_starts_and_answers_health_checks_and_reads_while_a_call_waits_for_the_sqlite_write_lock(
    tmp_path: Path,
) -> None:
    # The file exists at the current schema, with one session; another process holds its write lock from before
    # the server starts until after the server has answered everything below.
    path = tmp_path / "data" / "sessions.sqlite3"
    with http_server(server_env(tmp_path / "data")) as first:
        assert answered(call(first.url, "before"))
    holder = hold_write_lock(path)
    env = server_env(tmp_path / "data", THINKING_STORE_LOCK_TIMEOUT="30")
    try:
        with http_server(env) as server:
            waiting = asyncio.ensure_future(asyncio.to_thread(call, server.url, "waits", 60))
            health = server.url.removesuffix("/mcp") + "/healthz"
            latencies = []
            async with httpx2.AsyncClient(timeout=10) as http:
                for _ in range(10):
                    started = time.monotonic()
                    response = await http.get(health)
                    latencies.append(time.monotonic() - started)
                    assert response.status_code == 200, response.text
                async with Client(server.url, mode=MODERN) as client:  # type: ignore[arg-type]
                    started = time.monotonic()
                    listed = await client.read_resource("thinking://sessions")
                    read_took = time.monotonic() - started
            assert not waiting.done()  # the call is still waiting for the lock all along
            release(holder)
            waited = await waiting
    finally:
        end(holder)

    print(f"/healthz while the write lock is held: max {max(latencies) * 1000:.0f} ms over {len(latencies)}; "
          f"a read {read_took * 1000:.0f} ms")  # fmt: skip
    assert max(latencies) < 3 and read_took < 3
    assert "before" in getattr(listed.contents[0], "text", "")
    assert answered(waited), waited.text  # and the waiting call is recorded once the lock is released


async def test_a_call_on_a_session_locked_elsewhere_fails_fast_saying_it_is_busy_and_retry_succeeds(
    postgres_url: str,
) -> None:
    settings = Settings(thinking_store=postgres_url, thinking_store_lock_timeout=0.5)  # type: ignore[arg-type]
    async with Client(build_server(settings)) as client:
        first = await client.call_tool("sequentialthinking", thought("held", 1))
        other = await psycopg.AsyncConnection.connect(postgres_url)
        try:
            await other.execute("SELECT 1 FROM sessions WHERE id = 'held' FOR UPDATE")
            started = time.monotonic()
            busy = await client.call_tool("sequentialthinking", thought("held", 2))
            took = time.monotonic() - started
            elsewhere = await client.call_tool("sequentialthinking", thought("free", 1))
        finally:
            await other.rollback()
            await other.close()
        retried = await client.call_tool("sequentialthinking", thought("held", 2))

    assert not first.is_error and not elsewhere.is_error
    assert busy.is_error and "the session is busy with another call; retry" in text_of(busy), text_of(busy)
    assert "cannot be reached" not in text_of(busy) and "THINKING_STORE_LOCK_TIMEOUT" in text_of(busy)
    assert took < 5, took
    assert not retried.is_error, text_of(retried)


async def test_the_connection_pool_is_shared_out_over_the_workers(postgres_url: str) -> None:
    settings = Settings(thinking_store=postgres_url, thinking_store_pool_size=10)  # type: ignore[arg-type]
    sizes = []
    for workers in (1, 4, 32):
        store = await open_store_for(settings, workers)
        sizes.append(store.backend._pool.max_size)  # type: ignore[attr-defined]
        await store.close()
    assert sizes == [10, 3, 2]


def test_a_role_postgresql_refuses_is_reported_as_such_at_start_up(
    postgres_cluster: PostgresCluster, tmp_path: Path
) -> None:
    url = f"postgresql://nobody@127.0.0.1:{postgres_cluster.port}/postgres"
    command = [sys.executable, "-m", "thinking_hats", "serve", "--transport", "http", "--port", "0"]
    started = time.monotonic()
    done = subprocess.run(command, env=server_env(tmp_path / "data", THINKING_STORE=url), capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0
    assert 'role "nobody" does not exist' in done.stderr and "THINKING_STORE" in done.stderr, done.stderr
    assert "pool initialization incomplete" not in done.stderr and "Traceback" not in done.stderr
    assert time.monotonic() - started < 10  # at once, not after the pool's 10 s


def test_a_worker_that_cannot_open_its_store_exits_instead_of_serving_500s(
    stoppable: PostgresCluster, tmp_path: Path
) -> None:
    # One process, the store gone between the start-up check and the worker's own start: it must not serve.
    env = server_env(tmp_path / "data", THINKING_STORE=stoppable.url())
    with http_server(env, "--workers", "2") as server:
        workers = workers_of(server)
        stoppable.stop(keep=True)
        for pid in workers:
            subprocess.run(["kill", "-9", str(pid)], check=True)
        until(lambda: logged(server, "could not start", 2), 60, "both replacements failing")
        with pytest.raises(httpx2.ConnectError):  # nobody listens: a load balancer tries another replica
            call(server.url, "nobody", timeout=5)
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=60) == 0
