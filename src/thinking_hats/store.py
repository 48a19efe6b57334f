"""Durable sessions: one SQLite file in WAL mode, or an in-memory database with the same code path.

Calls are synchronous on purpose: a WAL commit with synchronous=NORMAL takes well under a millisecond, which is
cheaper than hopping to a thread, and a single connection owned by the event loop needs no locking.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import StoreError

_SCHEMA = """
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


@dataclass(frozen=True)
class Session:
    id: str
    tool: str
    created: float
    updated: float
    meta: dict[str, Any]


@dataclass(frozen=True)
class Entry:
    session_id: str
    seq: int
    number: int
    branch_id: str | None
    created: float
    data: dict[str, Any]
    reply: dict[str, Any] | None


@dataclass(frozen=True)
class SessionSummary:
    id: str
    tool: str
    created: float
    updated: float
    entries: int


def new_session_id() -> str:
    return uuid.uuid4().hex[:16]


class Store:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._db = self._connect(path)
        self._writes = 0

    @staticmethod
    def _connect(path: Path | None) -> sqlite3.Connection:
        target = ":memory:" if path is None else str(path)
        try:
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA busy_timeout = 5000")
            if path is not None:
                db.execute("PRAGMA journal_mode = WAL")
                # NORMAL in WAL mode survives a killed process; only a power loss can drop the last commits.
                db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA foreign_keys = ON")
            db.executescript(_SCHEMA)
            db.execute("SELECT count(*) FROM sessions").fetchone()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(
                f"cannot open the session store at {target}: {exc}. "
                "Set THINKING_DATA_DIR to a writable folder, or THINKING_STORE=memory to keep nothing on disk."
            ) from exc
        return db

    def close(self) -> None:
        self._db.close()

    # --- sessions ---
    def session(self, session_id: str) -> Session | None:
        row = self._db.execute(
            "SELECT id, tool, created, updated, meta FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return None if row is None else Session(row[0], row[1], row[2], row[3], json.loads(row[4]))

    def create_session(self, session_id: str, tool: str) -> Session:
        now = time.time()
        self._db.execute(
            "INSERT INTO sessions(id, tool, created, updated) VALUES (?, ?, ?, ?)",
            (session_id, tool, now, now),
        )
        return Session(session_id, tool, now, now, {})

    def update_meta(self, session_id: str, **changes: Any) -> None:
        current = self.session(session_id)
        if current is None:
            return
        meta = {**current.meta, **changes}
        self._db.execute("UPDATE sessions SET meta = ? WHERE id = ?", (json.dumps(meta), session_id))

    def reset_session(self, session_id: str) -> None:
        with self._db:
            self._db.execute("DELETE FROM entries WHERE session_id = ?", (session_id,))
            self._db.execute("UPDATE sessions SET meta = '{}', updated = ? WHERE id = ?", (time.time(), session_id))

    def delete_session(self, session_id: str) -> bool:
        cur = self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        return cur.rowcount > 0

    def sessions(self, limit: int = 100) -> list[SessionSummary]:
        rows = self._db.execute(
            "SELECT s.id, s.tool, s.created, s.updated, (SELECT count(*) FROM entries e WHERE e.session_id = s.id)"
            " FROM sessions s ORDER BY s.updated DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [SessionSummary(*row) for row in rows]

    # --- entries ---
    def add(
        self,
        session_id: str,
        number: int,
        branch_id: str | None,
        data: dict[str, Any],
        reply: dict[str, Any] | None = None,
        keep: int | None = None,
    ) -> int:
        """Append an entry and commit it; entries beyond the newest `keep` are dropped in the same transaction."""
        now = time.time()
        # BEGIN IMMEDIATE takes the write lock up front, so two processes on one file cannot pick the same seq.
        self._db.execute("BEGIN IMMEDIATE")
        try:
            row = self._db.execute(
                "SELECT coalesce(max(seq), 0) FROM entries WHERE session_id = ?", (session_id,)
            ).fetchone()
            seq = int(row[0]) + 1
            self._db.execute(
                "INSERT INTO entries(session_id, seq, number, branch_id, created, data, reply)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, seq, number, branch_id, now, json.dumps(data), _dump(reply)),
            )
            self._db.execute("UPDATE sessions SET updated = ? WHERE id = ?", (now, session_id))
            if keep is not None:
                self._db.execute("DELETE FROM entries WHERE session_id = ? AND seq <= ?", (session_id, seq - keep))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._writes += 1
        return seq

    def set_reply(self, session_id: str, seq: int, reply: dict[str, Any]) -> None:
        self._db.execute(
            "UPDATE entries SET reply = ? WHERE session_id = ? AND seq = ?", (_dump(reply), session_id, seq)
        )

    def update_data(self, session_id: str, seq: int, data: dict[str, Any]) -> None:
        self._db.execute(
            "UPDATE entries SET data = ? WHERE session_id = ? AND seq = ?",
            (json.dumps(data), session_id, seq),
        )

    def last(self, session_id: str) -> Entry | None:
        rows = self._select("WHERE session_id = ? ORDER BY seq DESC LIMIT 1", (session_id,))
        return rows[0] if rows else None

    def find(self, session_id: str, number: int) -> Entry | None:
        """The latest entry with this number (a revision chain keeps the newest wording)."""
        rows = self._select("WHERE session_id = ? AND number = ? ORDER BY seq DESC LIMIT 1", (session_id, number))
        return rows[0] if rows else None

    def entries(self, session_id: str, last: int | None = None) -> list[Entry]:
        if last is None:
            return self._select("WHERE session_id = ? ORDER BY seq", (session_id,))
        rows = self._select("WHERE session_id = ? ORDER BY seq DESC LIMIT ?", (session_id, last))
        return rows[::-1]

    def count(self, session_id: str) -> int:
        row = self._db.execute("SELECT count(*) FROM entries WHERE session_id = ?", (session_id,)).fetchone()
        return int(row[0])

    def branches(self, session_id: str) -> list[str]:
        rows = self._db.execute(
            "SELECT branch_id FROM entries WHERE session_id = ? AND branch_id IS NOT NULL"
            " GROUP BY branch_id ORDER BY min(seq)",
            (session_id,),
        ).fetchall()
        return [r[0] for r in rows]

    def _select(self, where: str, params: tuple[Any, ...]) -> list[Entry]:
        rows = self._db.execute(
            "SELECT session_id, seq, number, branch_id, created, data, reply FROM entries " + where, params
        ).fetchall()
        return [
            Entry(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), None if r[6] is None else json.loads(r[6]))
            for r in rows
        ]

    # --- housekeeping ---
    def prune(self, retention_seconds: float, max_sessions: int) -> int:
        """Delete sessions idle past the retention period, then the oldest beyond the cap."""
        cutoff = time.time() - retention_seconds
        with self._db:
            removed = self._db.execute("DELETE FROM sessions WHERE updated < ?", (cutoff,)).rowcount
            removed += self._db.execute(
                "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions ORDER BY updated DESC LIMIT -1 OFFSET ?)",
                (max_sessions,),
            ).rowcount
        return removed

    def due_for_pruning(self, every: int = 200) -> bool:
        return self._writes % every == 0

    def health(self) -> dict[str, Any]:
        check = self._db.execute("PRAGMA quick_check").fetchone()[0]
        mode = self._db.execute("PRAGMA journal_mode").fetchone()[0]
        sessions = self._db.execute("SELECT count(*) FROM sessions").fetchone()[0]
        entries = self._db.execute("SELECT count(*) FROM entries").fetchone()[0]
        return {
            "path": str(self.path) if self.path else ":memory:",
            "integrity": check,
            "journal_mode": mode,
            "sessions": sessions,
            "entries": entries,
        }


def _dump(reply: dict[str, Any] | None) -> str | None:
    return None if reply is None else json.dumps(reply)
