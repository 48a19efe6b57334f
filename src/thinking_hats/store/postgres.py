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
from urllib.parse import urlsplit, urlunsplit

from ..errors import StoreError
from . import _schema

_POOL_SIZE = 10  # per process: enough for the thoughts one event loop has in flight between model calls
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


class PostgresBackend:
    name = "postgresql"
    lock = " FOR UPDATE"

    def __init__(self, pool: Any, location: str) -> None:
        self._pool = pool
        self.location = location

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
            raise _store_error(exc, self.location) from exc

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
    """The URL without its password, for messages and `doctor`."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


async def open_postgres(url: str) -> PostgresBackend:
    location = redacted(url)
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise StoreError(
            f"THINKING_STORE is {location}, but the PostgreSQL driver is not installed: "
            "pip install 'thinking-hats[postgres]'"
        ) from None
    liveness = _Liveness(psycopg_pool.AsyncConnectionPool.check_connection)
    pool = psycopg_pool.AsyncConnectionPool(
        url,
        min_size=1,
        max_size=_POOL_SIZE,
        open=False,
        kwargs={"autocommit": True},
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
        async with pool.connection() as conn, conn.transaction():
            await _migrate(conn)
    except (psycopg.Error, psycopg_pool.PoolTimeout, OSError) as exc:
        await pool.close()
        raise StoreError(
            f"cannot open the session store at {location}: {str(exc).strip() or type(exc).__name__}. "
            "Check THINKING_STORE (postgresql://user:password@host:port/database) and that the server is up."
        ) from exc
    except BaseException:
        await pool.close()
        raise
    return PostgresBackend(pool, location)


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


def _store_error(exc: Exception, location: str) -> StoreError:
    import psycopg
    import psycopg_pool

    if isinstance(exc, psycopg.errors.DiskFull):
        return StoreError(
            f"the session store at {location} is out of disk space: nothing was recorded. "
            "Free space on the database server, then send the same call again."
        )
    if isinstance(exc, (psycopg.OperationalError, psycopg_pool.PoolTimeout)):
        return StoreError(
            f"the session store at {location} cannot be reached ({str(exc).strip() or type(exc).__name__}): "
            "nothing was recorded. Check that PostgreSQL is up (THINKING_STORE), then send the same call again."
        )
    return StoreError(f"the session store at {location} failed ({exc}): nothing was recorded. Send the call again.")
