"""The SQLite backend: one file in WAL mode shared by any number of processes, or an in-memory database.

Statements run synchronously on the event loop on purpose: a WAL commit with synchronous=NORMAL takes well
under a millisecond, cheaper than a hop to a thread. Write transactions begin IMMEDIATE, so the write lock is
taken before the first read and two processes can never number two thoughts alike.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from ..errors import StoreError
from . import _schema

_BUSY_MS = 10_000


class _SqliteTx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    async def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.execute(sql, params).fetchall()

    async def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._db.execute(sql, params).rowcount

    async def many(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        self._db.executemany(sql, params)


class SqliteBackend:
    name = "sqlite"
    lock = ""  # BEGIN IMMEDIATE already holds the database's write lock

    def __init__(self, db: sqlite3.Connection, path: Path | None) -> None:
        self._db = db
        self.path = path
        self.location = str(path) if path is not None else ":memory:"

    @asynccontextmanager
    async def transaction(self, write: bool) -> AsyncIterator[_SqliteTx]:
        try:
            self._db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except sqlite3.Error as exc:
            raise _store_error(exc, self.location) from exc
        try:
            yield _SqliteTx(self._db)
        except BaseException as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise _store_error(exc, self.location) from exc
            raise
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise _store_error(exc, self.location) from exc

    async def close(self) -> None:
        self._db.close()

    async def check(self) -> dict[str, Any]:
        return {
            "integrity": self._db.execute("PRAGMA quick_check").fetchone()[0],
            "journal_mode": self._db.execute("PRAGMA journal_mode").fetchone()[0],
            "schema": self._db.execute("SELECT version FROM schema_version").fetchone()[0],
        }


def open_sqlite(path: Path | None) -> SqliteBackend:
    target = ":memory:" if path is None else str(path)
    try:
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
        db.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        if path is not None:
            _into_wal(db)
            # NORMAL in WAL mode survives a killed process; only a power loss can drop the last commits.
            db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA foreign_keys = ON")
        _migrate(db)
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(
            f"cannot open the session store at {target}: {exc}. "
            "Set THINKING_DATA_DIR to a writable folder, or THINKING_STORE=memory to keep nothing on disk."
        ) from exc
    return SqliteBackend(db, path)


def _into_wal(db: sqlite3.Connection) -> None:
    """Switch a new file to WAL. Two processes starting at once on a new file both try: the switch takes its lock
    without SQLite's busy wait, so the one that loses waits here for the other to finish (it then finds WAL set)."""
    deadline = time.monotonic() + _BUSY_MS / 1000
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorname", "") not in ("SQLITE_BUSY", "SQLITE_LOCKED"):
                raise
            if time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def _migrate(db: sqlite3.Connection) -> None:
    """Bring the file to the current schema in one exclusive transaction (other processes wait)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "schema_version" in tables:
            version = int(db.execute("SELECT version FROM schema_version").fetchone()[0])
        elif "sessions" in tables:
            version = 1  # the single-user layout, before schemas were versioned
        else:
            version = 0
        if version > _schema.VERSION:
            raise StoreError(
                f"the session store has schema version {version}, newer than this thinking-hats understands "
                f"({_schema.VERSION}): upgrade thinking-hats, or point THINKING_DATA_DIR elsewhere."
            )
        if version == 1:
            _script(db, _schema.SQLITE_FROM_V1)
        elif version < _schema.VERSION:  # a new file, or one from version 2: every table is created if missing
            _script(db, _schema.SQLITE_TABLES)
        if version < _schema.VERSION:
            db.execute("DELETE FROM schema_version")
            db.execute("INSERT INTO schema_version(version) VALUES (?)", (_schema.VERSION,))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _script(db: sqlite3.Connection, sql: str) -> None:
    # executescript() would COMMIT the open transaction first; statement by statement keeps it atomic.
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


def _store_error(exc: sqlite3.Error, location: str) -> StoreError:
    code = getattr(exc, "sqlite_errorname", "")
    if code == "SQLITE_FULL":
        return StoreError(
            f"the session store at {location} is full (no space left on the disk or quota): nothing was recorded. "
            "Free space under THINKING_DATA_DIR, then send the same call again."
        )
    if code in ("SQLITE_BUSY", "SQLITE_LOCKED"):
        return StoreError(
            f"the session store at {location} stayed locked by another process for {_BUSY_MS // 1000} s: "
            "nothing was recorded. Send the same call again."
        )
    if code in ("SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_CANTOPEN") or code.startswith("SQLITE_IOERR"):
        return StoreError(
            f"the session store at {location} cannot be written ({exc}): nothing was recorded. "
            "Check the disk and the permissions of THINKING_DATA_DIR, then send the same call again."
        )
    return StoreError(f"the session store at {location} failed ({exc}): nothing was recorded. Send the call again.")
