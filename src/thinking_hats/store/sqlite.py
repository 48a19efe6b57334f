"""The SQLite backend: one file in WAL mode shared by any number of processes, or an in-memory database.

Statements run synchronously on the event loop on purpose: a WAL commit with synchronous=NORMAL takes well
under a millisecond, cheaper than a hop to a thread. Write transactions begin IMMEDIATE, so the write lock is
taken before the first read and two processes can never number two thoughts alike.

Only taking that lock can wait long (another process holds it), so it never waits on the loop: the write
connection has no busy timeout, and BEGIN IMMEDIATE is tried again after an asynchronous pause until
THINKING_STORE_LOCK_TIMEOUT; meanwhile the loop serves every other call and `/healthz`. Reads use a connection
of their own (in WAL mode a reader never waits for the writer), and nothing awaits inside a transaction, so
the two connections are never used by two calls at once.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from ..errors import StoreBusy, StoreError
from . import _schema

_BUSY_MS = 10_000  # at start-up (opening, migrating: before the loop serves anything)
_READ_BUSY_MS = 200  # a reader waits only for a checkpoint or another process's recovery: briefly, if ever
_FIRST_PAUSE_S, _LONGEST_PAUSE_S = 0.001, 0.05


class _SqliteTx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    async def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.execute(sql, params).fetchall()

    async def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._db.execute(sql, params).rowcount

    async def many(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        self._db.executemany(sql, params)

    async def now(self) -> float:
        # One machine, one clock: every process sharing the file reads the same one.
        return time.time()


class SqliteBackend:
    name = "sqlite"
    lock = ""  # BEGIN IMMEDIATE already holds the database's write lock

    def __init__(
        self, db: sqlite3.Connection, path: Path | None, writer: sqlite3.Connection | None = None, lock_s: float = 5.0
    ) -> None:
        self._db = db
        self._writer = writer or db  # in memory there is one database, so one connection
        self.path = path
        self.location = str(path) if path is not None else ":memory:"
        self.lock_s = lock_s

    @asynccontextmanager
    async def transaction(self, write: bool) -> AsyncIterator[_SqliteTx]:
        db = self._writer if write else self._db
        try:
            if write:
                await self._begin_immediate(db)
            else:
                db.execute("BEGIN")
        except sqlite3.Error as exc:
            raise _store_error(exc, self.location, self.lock_s) from exc
        try:
            yield _SqliteTx(db)
        except BaseException as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise _store_error(exc, self.location, self.lock_s) from exc
            raise
        try:
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise _store_error(exc, self.location, self.lock_s) from exc

    async def _begin_immediate(self, db: sqlite3.Connection) -> None:
        """Take the write lock without blocking the loop: each try returns at once (no busy timeout)."""
        deadline = time.monotonic() + self.lock_s
        pause = _FIRST_PAUSE_S
        while True:
            try:
                db.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorname", "") not in ("SQLITE_BUSY", "SQLITE_LOCKED"):
                    raise
                if time.monotonic() + pause > deadline:
                    raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE_S)

    async def close(self) -> None:
        if self._writer is not self._db:
            self._writer.close()
        self._db.close()

    async def check(self) -> dict[str, Any]:
        return {
            "integrity": self._db.execute("PRAGMA quick_check").fetchone()[0],
            "journal_mode": self._db.execute("PRAGMA journal_mode").fetchone()[0],
            "schema": self._db.execute("SELECT version FROM schema_version").fetchone()[0],
        }


def open_sqlite(path: Path | None, lock_s: float = 5.0) -> SqliteBackend:
    target = ":memory:" if path is None else str(path)
    try:
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        db = _connect(target, _BUSY_MS)
        if path is not None:
            _into_wal(db)
        _migrate(db)
        writer = None
        if path is not None:
            db.execute(f"PRAGMA busy_timeout = {_READ_BUSY_MS}")
            writer = _connect(target, 0)  # its lock waits are the backend's own, off the loop's back
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED"):
            from ..errors import StoreUnavailable

            raise StoreUnavailable(
                f"cannot open the session store at {target}: another process held its write lock for "
                f"{_BUSY_MS // 1000} s while this one needed to set the file up; it will be tried again."
            ) from exc
        raise _cannot_open(exc, target) from exc
    except (sqlite3.Error, OSError) as exc:
        raise _cannot_open(exc, target) from exc
    return SqliteBackend(db, path, writer, lock_s)


def _connect(target: str, busy_ms: int) -> sqlite3.Connection:
    db = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
    db.execute(f"PRAGMA busy_timeout = {busy_ms}")
    if target != ":memory:":
        # NORMAL in WAL mode survives a killed process; only a power loss can drop the last commits.
        db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA foreign_keys = ON")
    return db


def _cannot_open(exc: BaseException, target: str) -> StoreError:
    return StoreError(
        f"cannot open the session store at {target}: {exc}. "
        "Set THINKING_DATA_DIR to a writable folder, or THINKING_STORE=memory to keep nothing on disk."
    )


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
    """Bring the file to the current schema in one exclusive transaction (other processes wait).

    A file already at the current schema is only read: a process starts while another holds the write lock."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "schema_version" in tables:
        current = db.execute("SELECT version FROM schema_version").fetchone()
        if current is not None and int(current[0]) == _schema.VERSION:
            return
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


def _store_error(exc: sqlite3.Error, location: str, lock_s: float) -> StoreError:
    code = getattr(exc, "sqlite_errorname", "")
    if code == "SQLITE_FULL":
        return StoreError(
            f"the session store at {location} is full (no space left on the disk or quota): nothing was recorded. "
            "Free space under THINKING_DATA_DIR, then send the same call again."
        )
    if code in ("SQLITE_BUSY", "SQLITE_LOCKED"):
        return StoreBusy(
            f"the session store at {location} stayed locked by another process for longer than "
            f"THINKING_STORE_LOCK_TIMEOUT={lock_s:g} s: nothing was recorded; retry."
        )
    if code in ("SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_CANTOPEN") or code.startswith("SQLITE_IOERR"):
        return StoreError(
            f"the session store at {location} cannot be written ({exc}): nothing was recorded. "
            "Check the disk and the permissions of THINKING_DATA_DIR, then send the same call again."
        )
    return StoreError(f"the session store at {location} failed ({exc}): nothing was recorded. Send the call again.")
