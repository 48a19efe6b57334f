"""Many processes on one store: real OS processes append to one session and start the same new sessions at the
same moment, on SQLite and on PostgreSQL. Nothing is lost, nothing is stored twice, numbering has no gap, and
the database checks clean. Storage failures reach the client as the tool's own error, saying what to do.

Workers line up behind a barrier before each race, so the races really overlap (no sleeps anywhere).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import queue
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg_pool
import pytest
from mcp import Client

from calls import text_of
from pg import PostgresCluster, private_cluster
from stdio_peer import Peer, server_env, spawn
from store_worker import Acknowledged, Location, race
from thinking_hats.config import Settings
from thinking_hats.server import build_server
from thinking_hats.store import open_store

TOOL = "sequentialthinking"
ROUNDS = 8  # new sessions every worker starts at the same moment
APPENDS = 40  # thoughts every worker appends to the one shared session
DEADLINE = 120.0  # for a worker to finish: far beyond the ~2 s the races take, short of a hung CI job


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Location:
    if request.param == "sqlite":
        return None, tmp_path / "shared" / "sessions.sqlite3"
    return request.getfixturevalue("postgres_url"), None


# --- the store from several processes ---


def run_workers(location: Location, count: int) -> list[Acknowledged]:
    """`count` spawned processes racing on one store (store_worker.race); what each was told was stored."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(count, timeout=DEADLINE)
    results = ctx.Queue()
    processes = [ctx.Process(target=race, args=(location, i, ROUNDS, APPENDS, barrier, results)) for i in range(count)]
    for p in processes:
        p.start()
    acknowledged: list[Acknowledged] = []
    failures: list[str] = []
    try:
        for _ in processes:
            try:
                _, done, failure = results.get(timeout=DEADLINE)
            except queue.Empty:
                failures.append(f"a worker sent nothing within {DEADLINE} s")
                break
            acknowledged += done
            if failure:
                failures.append(failure)
    finally:
        for p in processes:
            p.join(timeout=DEADLINE)
            if p.is_alive():
                p.kill()
                p.join()
    assert not failures, "\n".join(failures)
    assert all(p.exitcode == 0 for p in processes)
    return acknowledged


async def stored(location: Location) -> dict[str, list[tuple[int, str]]]:
    store = await open_store(*location)
    try:
        sessions = {s.id for s in await store.sessions("local", limit=1000)}
        out: dict[str, list[tuple[int, str]]] = {}
        for session_id in sorted(sessions):
            found = await store.session("local", session_id)
            assert found is not None
            out[session_id] = [(e.seq, str(e.data["thought"])) for e in found[1]]
        return out
    finally:
        await store.close()


def database_checks(location: Location) -> None:
    """SQLite's integrity and foreign-key checks; on PostgreSQL, amcheck on every index and the same promises in SQL."""
    url, path = location
    if path is not None:
        with sqlite3.connect(path) as raw:
            assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
        return
    import psycopg

    assert url is not None
    with psycopg.connect(url) as conn:
        no_session = conn.execute(
            "SELECT count(*) FROM entries e WHERE NOT EXISTS"
            " (SELECT 1 FROM sessions s WHERE s.principal = e.principal AND s.id = e.session_id)"
        ).fetchone()
        gaps = conn.execute(
            "SELECT principal, session_id FROM entries GROUP BY principal, session_id"
            " HAVING count(*) <> max(seq) OR count(DISTINCT seq) <> count(*) OR min(seq) <> 1"
        ).fetchall()
        # amcheck (shipped with the server) verifies every B-tree index, the primary keys among them.
        conn.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        conn.execute(
            "SELECT bt_index_check(c.oid, true) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'btree' AND c.relnamespace = 'public'::regnamespace"
        )
    assert no_session == (0,) and gaps == []


@pytest.mark.parametrize("processes", [2, 4])
async def test_processes_appending_and_starting_the_same_sessions_lose_and_duplicate_nothing(
    location: Location, processes: int
) -> None:
    acknowledged = await asyncio.to_thread(run_workers, location, processes)
    sessions = await stored(location)

    assert not any(replayed for *_, replayed in acknowledged)  # every thought was new: none taken for a retry
    assert sorted(sessions) == sorted(["shared", *(f"new-{r}" for r in range(ROUNDS))])
    for session_id, entries in sessions.items():
        # numbering 1..N with no gap, and exactly the thoughts the processes were told were stored, at that seq
        assert [seq for seq, _ in entries] == list(range(1, len(entries) + 1)), session_id
        told = sorted((seq, text) for sid, text, seq, _ in acknowledged if sid == session_id)
        assert sorted(entries) == told, session_id
    assert len(sessions["shared"]) == processes * APPENDS
    assert all(len(sessions[f"new-{r}"]) == processes for r in range(ROUNDS))
    database_checks(location)


# --- the real server, several processes over stdio ---


def _thought(session: str, number: int, text: str) -> dict[str, Any]:
    return {"thought": text, "thoughtNumber": number, "totalThoughts": number, "nextThoughtNeeded": True,
            "sessionId": session}  # fmt: skip


@pytest.fixture
def servers(location: Location, tmp_path: Path) -> Iterator[list[Peer]]:
    url, _ = location
    env = server_env(
        tmp_path / "shared" if url is None else tmp_path / "unused", **({"THINKING_STORE": url} if url else {})
    )
    processes = [spawn(env) for _ in range(2)]
    try:
        peers = [Peer(p) for p in processes]
        for p in peers:
            p.initialize()
        yield peers
    finally:
        for process in processes:
            process.kill()
            process.wait(timeout=30)
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()


def test_two_servers_starting_the_same_new_sessions_at_once_both_record_their_thoughts(
    servers: list[Peer], location: Location
) -> None:
    barrier = threading.Barrier(len(servers), timeout=DEADLINE)
    replies: list[dict[str, Any]] = []
    lock = threading.Lock()

    def client(index: int, peer: Peer) -> None:
        for r in range(ROUNDS):
            barrier.wait()
            reply = peer.call(TOOL, _thought(f"new-{r}", 1, f"server {index} opens new-{r}"))
            with lock:
                replies.append(reply)
        for k in range(APPENDS // 2):
            reply = peer.call(TOOL, _thought("shared", k + 1, f"server {index} thought {k}"))
            with lock:
                replies.append(reply)

    threads = [threading.Thread(target=client, args=(i, p)) for i, p in enumerate(servers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=DEADLINE)
    sessions = asyncio.run(stored(location))

    assert len(replies) == len(servers) * (ROUNDS + APPENDS // 2)
    problems = [r for r in replies if "error" in r or r["result"].get("isError")]
    assert problems == []  # the issue: ~1 in 10 failed with "UNIQUE constraint failed" as "Error executing tool"
    for r in range(ROUNDS):
        assert sorted(text for _, text in sessions[f"new-{r}"]) == [f"server {i} opens new-{r}" for i in range(2)]
    assert [seq for seq, _ in sessions["shared"]] == list(range(1, len(servers) * APPENDS // 2 + 1))
    assert len({text for _, text in sessions["shared"]}) == len(servers) * APPENDS // 2
    database_checks(location)


# --- storage failures reach the client as the tool's error, with what to do ---


def _crash_step(number: int) -> dict[str, Any]:
    return {"step_number": number, "estimated_total": 3, "purpose": "validation", "context": "c",
            "thought": f"Let me check part {number}.", "outcome": "Holds.", "next_action": "next",
            "rationale": "To be sure.", "session_id": "steps"}  # fmt: skip


def _live_sqlite(server: Any) -> sqlite3.Connection:
    db: sqlite3.Connection = server.core.store().backend._writer  # the connection writes go through
    return db


@pytest.mark.parametrize(
    ("condition", "undo", "said"),
    [
        # An open connection keeps writing to a file chmod-ed read-only (and root ignores modes), so the server's
        # own connection is made read-only, and full, in place.
        ("PRAGMA query_only = ON", "PRAGMA query_only = OFF", "cannot be written"),
        ("PRAGMA max_page_count = {pages}", "PRAGMA max_page_count = 1000000000", "is full"),
    ],
    ids=["read-only", "full"],
)
async def test_a_sqlite_store_that_cannot_be_written_is_a_tool_error_saying_what_to_do(
    condition: str, undo: str, said: str
) -> None:
    server = build_server(Settings())
    async with Client(server) as client:
        first = await client.call_tool(TOOL, _thought("plan", 1, "Restate the problem."))
        first_step = await client.call_tool("crash", _crash_step(1))
        db = _live_sqlite(server)
        db.execute(condition.format(pages=db.execute("PRAGMA page_count").fetchone()[0]))
        refused = await client.call_tool(TOOL, _thought("plan", 2, "A long thought. " * 400))
        refused_step = await client.call_tool("crash", _crash_step(2) | {"context": "x" * 8000})
        db.execute(undo)
        retried = await client.call_tool(TOOL, _thought("plan", 2, "A long thought. " * 400))

    assert not (first.is_error or first_step.is_error)
    assert refused.is_error and said in text_of(refused) and "THINKING_DATA_DIR" in text_of(refused)
    assert "nothing was recorded" in text_of(refused) and "Error executing tool" not in text_of(refused)
    crash_error = json.loads(text_of(refused_step))
    assert refused_step.is_error and crash_error["status"] == "failed" and said in crash_error["error"]
    assert not retried.is_error  # the same call, once the disk is fixed: stored once
    assert retried.structured_content is not None and retried.structured_content["thoughtHistoryLength"] == 2


SCALE = 0.1  # psycopg_pool's clock in the outage test: its timeouts and its reconnection backoff, tenfold faster


@pytest.fixture
def fast_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's pool with every delay scaled by SCALE, so a 40 s outage plays out in 4 s of test time."""
    from psycopg_pool.base import AttemptWithBackoff

    class FastPool(psycopg_pool.AsyncConnectionPool):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["timeout"] = kwargs.get("timeout", 30.0) * SCALE
            kwargs["reconnect_timeout"] = kwargs.get("reconnect_timeout", 300.0) * SCALE
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(AttemptWithBackoff, "INITIAL_DELAY", AttemptWithBackoff.INITIAL_DELAY * SCALE)
    monkeypatch.setattr(psycopg_pool, "AsyncConnectionPool", FastPool)


@pytest.fixture
def stoppable() -> Iterator[PostgresCluster]:
    with private_cluster() as cluster:
        yield cluster


@pytest.mark.usefixtures("fast_pool")
async def test_postgresql_down_is_a_tool_error_naming_thinking_store_and_its_restart_is_picked_up_at_once(
    stoppable: PostgresCluster,
) -> None:
    settings = Settings(thinking_store=stoppable.url())
    async with Client(build_server(settings)) as client:
        first = await client.call_tool(TOOL, _thought("plan", 1, "Restate the problem."))
        stoppable.stop(keep=True)
        refused = await client.call_tool(TOOL, _thought("plan", 2, "List the options."))
        refused_step = await client.call_tool("crash", _crash_step(1))
        for _ in range(2):  # clients keep calling through a (scaled) 40 s outage: each waits the pool's timeout
            still_down = await client.call_tool(TOOL, _thought("plan", 2, "List the options."))
            assert still_down.is_error
        stoppable.start(port=stoppable.port)
        retried = await client.call_tool(TOOL, _thought("plan", 2, "List the options."))

    assert not first.is_error
    message = text_of(refused)
    assert refused.is_error and "THINKING_STORE" in message and "cannot be reached" in message, message
    assert "Error executing tool" not in message and "nothing was recorded" in message
    assert refused_step.is_error and "THINKING_STORE" in json.loads(text_of(refused_step))["error"]
    # The first call after the restart is served: the pool was not still backing off from the outage.
    assert not retried.is_error, text_of(retried)
    assert retried.structured_content is not None and retried.structured_content["thoughtHistoryLength"] == 2
