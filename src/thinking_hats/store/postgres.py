"""The PostgreSQL backend (psycopg 3, async, pooled): the same SQL and rules as SQLite, for many replicas.

A write transaction locks its session's row (`SELECT ... FOR UPDATE`) right after the upsert that may create
it, so appends to one session from any number of replicas are numbered one after another, while different
sessions never wait for each other.
"""

from __future__ import annotations

import functools
import math
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from ..errors import StoreBusy, StoreError, StoreUnavailable
from ..ops.redaction import passwords_in, redact_url, scrub
from . import _schema

_POOL_SIZE = 10  # per process, unless the caller sizes it (THINKING_STORE_POOL_SIZE over --workers)
_CONNECT_S = 5  # the first connection at start-up: a database that is down fails the start at once
_FRESH_S = 1.0  # a pooled connection used this recently is handed out without a ping
_MIGRATION_LOCK = 0x7468696E6B  # pg_advisory_xact_lock key: one replica migrates, the others wait


@functools.lru_cache(maxsize=256)
def _sql(statement: str) -> str:
    return statement.replace("?", "%s")  # the store's SQL has no other '?' and no '%'


class _PostgresTx:
    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = await self._conn.execute(_sql(sql), params)
        return list(await cur.fetchall()) if cur.description is not None else []

    async def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        cur = await self._conn.execute(_sql(sql), params)
        return int(cur.rowcount)

    async def many(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        async with self._conn.cursor() as cur:
            await cur.executemany(_sql(sql), params)

    async def now(self) -> float:
        # The database's clock, not this replica's: every replica counts the same minute and day.
        cur = await self._conn.execute("SELECT extract(epoch FROM clock_timestamp())::float8")
        row = await cur.fetchone()
        return float(row[0])


class PostgresBackend:
    name = "postgresql"
    lock = " FOR UPDATE"

    def __init__(self, pool: Any, location: str, waits: Waits | None = None) -> None:
        self._pool = pool
        self.location = location
        self.waits = waits or Waits()
        self.connections = int(pool.max_size)  # what one session's queued commits must leave to the others

    @asynccontextmanager
    async def transaction(self, write: bool) -> AsyncIterator[_PostgresTx]:
        import psycopg
        import psycopg_pool

        try:
            async with self._pool.connection() as conn:
                # A read sees one snapshot in all its statements, as SQLite's read transaction does: said on its
                # BEGIN (no round trip of its own). Writes lock what they change and run at the default level.
                await conn.set_isolation_level(None if write else psycopg.IsolationLevel.REPEATABLE_READ)
                await conn.set_read_only(None if write else True)
                async with conn.transaction():
                    yield _PostgresTx(conn)
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            raise _store_error(exc, self.location, self.waits, self._pool) from exc

    async def close(self) -> None:
        await self._pool.close()

    async def check(self) -> dict[str, Any]:
        async with self.transaction(write=False) as tx:
            version = (await tx.rows("SELECT version FROM schema_version"))[0][0]
            server = (await tx.rows("SHOW server_version"))[0][0]
        return {"integrity": "ok", "schema": version, "server_version": server}


class _Liveness:
    """The pool's check before it hands out a connection: one back from a call within the last second is handed
    out as it is (a statement just ran on it), one idle for longer is pinged first (a restart of the database may
    lie behind it). On a busy replica, that spares most calls a round trip."""

    def __init__(self, ping: Callable[[Any], Awaitable[None]]) -> None:
        self._ping = ping
        self._returned: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()

    async def returned(self, conn: Any) -> None:
        self._returned[conn] = time.monotonic()

    async def check(self, conn: Any) -> None:
        if time.monotonic() - self._returned.get(conn, -math.inf) >= _FRESH_S:
            await self._ping(conn)


def redacted(url: str) -> str:
    """The URL without its password (in any form), for messages and `doctor`."""
    return redact_url(url)


class Waits:
    """How long a transaction may wait, server side (PostgreSQL's lock_timeout and statement_timeout): a row
    lock held by another call or a runaway statement ends the call with a retryable error, and its connection
    goes back to the pool, instead of holding it while every other tenant's call waits for one."""

    def __init__(self, lock_s: float = 5.0, statement_s: float = 15.0) -> None:
        self.lock_s, self.statement_s = lock_s, statement_s

    def options(self, url: str) -> str:
        """The connection's `options` startup parameter: the URL's own, then the timeouts (no round trip)."""
        from psycopg.conninfo import conninfo_to_dict

        given = str(conninfo_to_dict(url).get("options") or "")
        ours = f"-c lock_timeout={int(self.lock_s * 1000)} -c statement_timeout={int(self.statement_s * 1000)}"
        return f"{given} {ours}".strip()


async def open_postgres(url: str, pool_size: int = _POOL_SIZE, waits: Waits | None = None) -> PostgresBackend:
    location = redacted(url)
    waits = waits or Waits()
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise StoreError(
            f"THINKING_STORE is {location}, but the PostgreSQL driver is not installed: "
            "pip install 'thinking-hats[postgres]'"
        ) from None
    try:
        options = waits.options(url)
    except psycopg.Error as exc:  # a URL libpq cannot parse: its message quotes the URL, password and all
        said = " ".join(scrub(str(exc), passwords_in(url)).split())
        raise StoreError(
            f"THINKING_STORE is not a URL PostgreSQL can read ({said}): write it as "
            "postgresql://user:password@host:port/database, percent-encoding any '@', ':', '/', '[' or ']' in the "
            "password"
        ) from None
    # One plain connection first: a database that is down, or a role, password or database that is wrong, is
    # reported as itself at once (the pool would retry it for its whole timeout and then only say it is "incomplete").
    try:
        conn = await psycopg.AsyncConnection.connect(url, connect_timeout=_CONNECT_S, autocommit=True, options=options)
    except psycopg.Error as exc:
        raise _cannot_open(exc, url, location) from None
    try:
        async with conn.transaction():
            await _migrate(conn)
    except psycopg.Error as exc:
        raise _cannot_open(exc, url, location) from None
    finally:
        await conn.close()
    liveness = _Liveness(psycopg_pool.AsyncConnectionPool.check_connection)
    pool = psycopg_pool.AsyncConnectionPool(
        url,
        min_size=1,
        max_size=max(pool_size, 1),
        open=False,
        kwargs={"autocommit": True, "options": options},
        # A replica outlives restarts of the database: a connection found dead is replaced, not handed out.
        check=liveness.check,
        reset=liveness.returned,
        timeout=10,
        # A failed reconnection is retried with a doubling delay until this gives up, and a new attempt starts
        # only then: the default (300 s) left a replica failing for as long again as the database had been down.
        # Giving up within one request's wait means the first request after a restart reconnects at once.
        reconnect_timeout=10,
    )
    try:
        await pool.open(wait=True, timeout=10)
    except (psycopg.Error, psycopg_pool.PoolTimeout, OSError) as exc:
        await pool.close()
        raise _cannot_open(exc, url, location) from None
    except BaseException:
        await pool.close()
        raise
    return PostgresBackend(pool, location, waits)


def _cannot_open(exc: BaseException, url: str, location: str) -> StoreError:
    """Why the store cannot be opened: the server refused us (configuration) or is not there (yet)."""
    said = " ".join(scrub(str(exc), passwords_in(url)).split()) or type(exc).__name__  # one line, for logs
    said = said.removeprefix("connection failed: ")
    transient = ("starting up", "shutting down", "too many clients", "recovery mode")
    if "FATAL:" in said and not any(t in said for t in transient):
        return StoreError(
            f"the session store at {location} refused the connection: {said}. Check the role, its password and the "
            "database in THINKING_STORE (postgresql://user:password@host:port/database) and pg_hba.conf."
        )
    if isinstance(exc, StoreError):
        return exc
    return StoreUnavailable(
        f"cannot open the session store at {location}: {said}. "
        "Check THINKING_STORE (postgresql://user:password@host:port/database) and that the server is up."
    )


async def _migrate(conn: Any) -> None:
    await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
    cur = await conn.execute("SELECT to_regclass('schema_version') IS NOT NULL")
    row = await cur.fetchone()
    version = 0
    if row and row[0]:
        cur = await conn.execute("SELECT version FROM schema_version")
        found = await cur.fetchone()
        version = int(found[0]) if found else 0
    if version > _schema.VERSION:
        raise StoreError(
            f"the session store has schema version {version}, newer than this thinking-hats understands "
            f"({_schema.VERSION}): upgrade thinking-hats on every replica."
        )
    if version < _schema.VERSION:
        for statement in _schema.POSTGRES_TABLES.split(";"):
            if statement.strip():
                await conn.execute(statement)
        await conn.execute("DELETE FROM schema_version")
        await conn.execute("INSERT INTO schema_version(version) VALUES (%s)", (_schema.VERSION,))


def _store_error(exc: Exception, location: str, waits: Waits, pool: Any = None) -> StoreError:
    import psycopg
    import psycopg_pool

    said = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, psycopg.errors.DiskFull):
        return StoreError(
            f"the session store at {location} is out of disk space: nothing was recorded. "
            "Free space on the database server, then send the same call again."
        )
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return StoreBusy(
            f"the session is busy with another call; retry. (Its lock in the session store was held for longer "
            f"than THINKING_STORE_LOCK_TIMEOUT={waits.lock_s:g} s: nothing was recorded.)"
        )
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return StoreBusy(
            f"the session store at {location} did not finish within THINKING_STORE_STATEMENT_TIMEOUT="
            f"{waits.statement_s:g} s (it is overloaded or a statement is stuck): nothing was recorded; retry."
        )
    if isinstance(exc, psycopg_pool.PoolTimeout) and pool is not None:
        stats = pool.get_stats()
        if stats.get("pool_size", 0) >= pool.max_size and stats.get("pool_available", 0) == 0:
            return StoreBusy(
                f"all {pool.max_size} store connections of this process stayed in use for {pool.timeout:g} s: "
                "nothing was recorded; retry (or raise THINKING_STORE_POOL_SIZE)."
            )
    if isinstance(exc, (psycopg.OperationalError, psycopg_pool.PoolTimeout)):
        return StoreUnavailable(
            f"the session store at {location} cannot be reached ({said}): "
            "nothing was recorded. Check that PostgreSQL is up (THINKING_STORE), then send the same call again."
        )
    return StoreError(f"the session store at {location} failed ({said}): nothing was recorded. Send the call again.")
