"""Schema migrations: a store written by the single-user version (schema 1, no principals, a thought stored
before its reply) opens under the current version with its sessions intact, and the server carries them on."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from thinking_hats.config import Settings
from thinking_hats.errors import StoreError
from thinking_hats.server import build_server
from thinking_hats.store import LOCAL, Charge, Write, _schema, open_store

# The version 1 layout, as thinking-hats up to commit af85f27 created it (src/thinking_hats/store.py there).
V1_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id       TEXT PRIMARY KEY,
    tool     TEXT NOT NULL,
    created  REAL NOT NULL,
    updated  REAL NOT NULL,
    meta     TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS entries (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    number     INTEGER NOT NULL,
    branch_id  TEXT,
    created    REAL NOT NULL,
    data       TEXT NOT NULL,
    reply      TEXT,
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX IF NOT EXISTS entries_by_number ON entries(session_id, number);
CREATE INDEX IF NOT EXISTS sessions_by_updated ON sessions(updated);
"""

PLAN = [  # (thoughtNumber, text, extra arguments) of the session "plan" as the v1 server recorded it
    (1, "Restate the problem.", {}),
    (2, "Option A: cache the results.", {}),
    (3, "A is unsafe: stale data.", {"isRevision": True, "revisesThought": 2}),
]
ORPHAN = "Option B: index the column."  # thought 4: the v1 server was killed before its reply was stored


def arguments(number: int, text: str, **extra: Any) -> dict[str, Any]:
    return {"thought": text, "thoughtNumber": number, "totalThoughts": 5, "nextThoughtNeeded": True,
            "sessionId": "plan", **extra}  # fmt: skip


def v1_reply(number: int, history: int) -> str:
    """A reply in the shape the v1 server stored (its sequentialthinking reply, record-only)."""
    reply = {
        "thoughtNumber": number, "totalThoughts": 5, "nextThoughtNeeded": True, "branches": [],
        "thoughtHistoryLength": history, "sessionId": "plan", "mode": "record-only", "shouldContinue": True,
        "nextThoughtNumber": number + 1,
        "analysis": {"strategy": "none", "complexity": {"score": 0.0, "factors": []}, "hats": [], "synthesis": None,
                     "problems": []},
        "usage": {"llmCalls": 0, "inputTokens": 0, "outputTokens": 0}, "notice": None,
    }  # fmt: skip
    markdown = f"Thought {number}/5 recorded (session `plan`).\nContinue with thought {number + 1}."
    return json.dumps({"reply": reply, "markdown": markdown, "is_error": False})


def build_v1_store(path: Path) -> None:
    now = time.time()
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript(V1_SCHEMA)
        db.execute("PRAGMA journal_mode = WAL")
        sessions = [
            ("plan", "sequentialthinking", now - 60, now - 10, '{"hint_shown": true}'),
            ("probe", "crash", now - 50, now - 40, "{}"),
            ("interrupted", "sequentialthinking", now - 30, now - 30, "{}"),
        ]
        db.executemany("INSERT INTO sessions VALUES (?, ?, ?, ?, ?)", sessions)
        rows: list[tuple[Any, ...]] = []
        for number, text, extra in PLAN:
            data = {"thought": text, "thought_number": number, "total_thoughts": 5, "next_thought_needed": True,
                    "session_id": "plan", "is_revision": bool(extra)} | (
                {"revises_thought": 2} if extra else {})  # fmt: skip
            rows.append(("plan", number, number, None, now - 60 + number, json.dumps(data), v1_reply(number, number)))
        orphan = {"thought": ORPHAN, "thought_number": 4, "total_thoughts": 5, "next_thought_needed": True}
        rows.append(("plan", 4, 4, None, now - 10, json.dumps(orphan), None))
        step = {
            "step_number": 1,
            "estimated_total": 2,
            "purpose": "analysis",
            "context": "c",
            "thought": "Let me look.",
            "outcome": "o",
            "next_action": "read",
            "rationale": "To see.",
            "session_id": "probe",
            "branch_depth": 0,
        }
        step_reply = {"step_number": 1, "estimated_total": 2, "completed": False, "total_steps": 1,
                      "next_action": "read", "session_id": "probe"}  # fmt: skip
        rows.append(("probe", 1, 1, None, now - 40, json.dumps(step), json.dumps(step_reply)))
        rows.append(("interrupted", 1, 1, None, now - 30, json.dumps({"thought": "Lost.", "thought_number": 1}), None))
        db.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


def step(number: int) -> dict[str, Any]:
    return {"step_number": number, "estimated_total": 2, "purpose": "validation", "context": "c",
            "thought": "Let me check.", "outcome": "Holds.", "next_action": "done", "rationale": "To be sure.",
            "session_id": "probe"}  # fmt: skip


async def test_a_v1_store_opens_with_its_sessions_under_the_local_principal_and_orphans_dropped(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    build_v1_store(path)

    store = await open_store(None, path)
    try:
        listed = {(s.principal, s.id, s.tool, s.entries) for s in await store.sessions(None)}
        plan = await store.session(LOCAL, "plan")
        version = (await store.ping())["schema"]
    finally:
        await store.close()

    assert listed == {(LOCAL, "plan", "sequentialthinking", 3), (LOCAL, "probe", "crash", 1),
                      (LOCAL, "interrupted", "sequentialthinking", 0)}  # fmt: skip
    assert plan is not None
    session, entries = plan
    assert session.meta == {"hint_shown": True}
    assert [(e.seq, e.data["thought"]) for e in entries] == [(n, text) for n, text, _ in PLAN]
    assert all(e.reply["reply"]["thoughtHistoryLength"] == e.seq for e in entries)
    assert version == _schema.VERSION
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
        assert raw.execute("SELECT version FROM schema_version").fetchall() == [(_schema.VERSION,)]
        tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    # no v1 leftovers
    assert tables == {"schema_version", "sessions", "entries", "evictions", "defaults", "principal_usage",
                      "progress", "reservations"}  # fmt: skip


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_v2_store_gains_the_usage_table_and_keeps_its_sessions(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    where: tuple[str | None, Path | None] = (
        (None, tmp_path / "sessions.sqlite3")
        if backend == "sqlite"
        else (request.getfixturevalue("postgres_url"), None)
    )
    store = await open_store(*where)
    await store.commit(Write(LOCAL, "kept", "sequentialthinking", 1, None, {"thought": "t"}), lambda c, b: {})
    async with store.backend.transaction(write=True) as tx:  # back to the version 2 layout
        await tx.run("DROP TABLE principal_usage")
        await tx.run("UPDATE schema_version SET version = 2")
    await store.close()

    store = await open_store(*where)
    try:
        version = (await store.ping())["schema"]
        kept = await store.session(LOCAL, "kept")
        await store.commit(
            Write(LOCAL, "kept", "sequentialthinking", 2, None, {"thought": "u"}, charge=Charge(calls=1)),
            lambda c, b: {},
        )
        usage = await store.usage()
    finally:
        await store.close()
    assert version == _schema.VERSION and kept is not None and len(kept[1]) == 1
    assert [(u.principal, u.calls, u.thoughts) for u in usage] == [(LOCAL, 1, 1)]


async def test_opening_a_migrated_store_again_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    build_v1_store(path)
    for _ in range(2):
        store = await open_store(None, path)
        listed = [(s.id, s.entries) for s in await store.sessions(None)]
        await store.close()

    assert sorted(listed) == [("interrupted", 0), ("plan", 3), ("probe", 1)]


async def test_the_server_carries_on_a_migrated_session() -> None:
    settings = Settings()
    database = settings.database_path()
    assert database is not None
    build_v1_store(database)

    async with Client(build_server(settings)) as client:
        replayed = await client.call_tool("sequentialthinking", arguments(3, PLAN[2][1], **PLAN[2][2]))
        retried = await client.call_tool("sequentialthinking", arguments(4, ORPHAN))
        revision = await client.call_tool(
            "sequentialthinking", arguments(5, "Thought 1 missed a constraint.", isRevision=True, revisesThought=1)
        )
        crash = await client.call_tool("crash", step(2))
        listing = json.loads((await client.read_resource("thinking://sessions")).contents[0].text)  # type: ignore[union-attr]

    assert not (replayed.is_error or retried.is_error or revision.is_error or crash.is_error)
    # The last v1 thought, sent again, is answered from its stored v1 reply.
    assert replayed.structured_content is not None and replayed.structured_content["replayed"] is True
    assert replayed.structured_content["thoughtHistoryLength"] == 3
    # The orphaned thought 4 left nothing behind: its retry is stored once, after the three migrated thoughts.
    assert retried.structured_content is not None and retried.structured_content["replayed"] is False
    assert retried.structured_content["thoughtHistoryLength"] == 4
    assert revision.structured_content is not None and revision.structured_content["thoughtHistoryLength"] == 5
    assert json.loads(crash.content[0].text)["total_steps"] == 2  # type: ignore[union-attr]
    assert {s["id"]: s["entries"] for s in listing} == {"plan": 5, "probe": 2, "interrupted": 0}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_store_with_a_newer_schema_is_refused_with_what_to_do(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    where: tuple[str | None, Path | None] = (
        (None, tmp_path / "sessions.sqlite3")
        if backend == "sqlite"
        else (request.getfixturevalue("postgres_url"), None)
    )
    store = await open_store(*where)
    async with store.backend.transaction(write=True) as tx:
        await tx.run(f"UPDATE schema_version SET version = {_schema.VERSION + 1}")
    await store.close()

    newer = rf"schema version {_schema.VERSION + 1}, newer than this thinking-hats understands.*upgrade"
    with pytest.raises(StoreError, match=newer):
        await open_store(*where)
