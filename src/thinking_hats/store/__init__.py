"""Durable sessions, spoken in units of work: one call reads what a thought needs, one transaction writes it.

`Store` owns who a session belongs to (its principal), its entries (a thought or CRASH step together with the
reply that was sent for it), its usage, the default session of each client connection, and retention. It runs
the same SQL on two backends: SQLite (embedded default; any number of processes on one machine) and PostgreSQL
(many replicas on many machines). Nothing about a session lives only in a process, so any process or replica can
answer any request.

Exactly-once: a thought is written together with its reply, after the model call, in one transaction. A call
whose reply was never produced (cancelled, killed, disk full) leaves nothing behind, so its retry stores it once
and no half-written thought reaches another call as context. A retry of a committed call is answered from the
stored reply; a retry of a call whose analysis failed replaces that failed attempt in place.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from time import perf_counter  # not through `time`: the tests move that clock
from typing import Any, Protocol

from ..errors import InvalidThought, StoreBusy, StoreError
from ..ops.limits import Hold, Limit, Refusal, Spent, day_of, minute_of, over
from ..ops.metrics import current as metrics
from ..ops.telemetry import current as tracer

LOCAL = "local"  # the one principal of stdio and of loopback HTTP without tokens

_ENTRY_COLUMNS = "session_id, seq, number, branch_id, created, data, reply"
_SESSION_COLUMNS = "s.principal, s.id, s.tool, s.created, s.updated, s.meta"
# Every commit keeps a session's tally, its entry count and branch ids in order of first use, in its meta (under
# these keys, which Session.meta leaves out), so that no call has to count the session's entries.
_COUNT, _BRANCHES = "entries", "branches"
_DEFAULT_REFRESH_S = 3600.0
QUEUE_PER_SESSION = 3  # commits of one process on one session at once: one writing, two waiting for it
# Thoughts recorded over a limit (refused: no model call) per principal and UTC day; beyond, they are answered
# but not stored, so a principal past its limits cannot fill the store with them either.
REFUSED_KEPT_PER_DAY = 1000
_CAP_REASON = "least recently used beyond THINKING_MAX_SESSIONS_PER_PRINCIPAL"
Tally = tuple[int, tuple[str, ...]]


@dataclass(frozen=True)
class Caller:
    """Who is calling: the principal owns sessions; the connection (None on stateless HTTP) has a default one."""

    principal: str = LOCAL
    connection: str | None = None


@dataclass(frozen=True)
class Session:
    principal: str
    id: str
    tool: str
    created: float
    updated: float  # last written: retention and the cap evict the least recently used first
    meta: dict[str, Any]


@dataclass(frozen=True)
class Entry:
    session_id: str
    seq: int
    number: int
    branch_id: str | None
    created: float
    data: dict[str, Any]
    # The reply as sent, or its JSON as stored: parsed only when asked for (a replay, a report), as most calls
    # read the session's last entry only to see that it is another call.
    stored_reply: dict[str, Any] | str = field(repr=False)

    @cached_property
    def reply(self) -> dict[str, Any]:
        stored = self.stored_reply
        return json.loads(stored) if isinstance(stored, str) else stored

    def same_call(self, number: int, branch_id: str | None, thought: str) -> bool:
        return self.number == number and self.branch_id == branch_id and self.data.get("thought") == thought

    @property
    def failed(self) -> bool:
        return bool(self.reply.get("is_error"))


@dataclass(frozen=True)
class SessionSummary:
    principal: str
    id: str
    tool: str
    created: float
    updated: float
    entries: int


@dataclass(frozen=True)
class Eviction:
    id: str
    tool: str
    at: float
    reason: str


@dataclass(frozen=True)
class View:
    """What one call needs of its session, read in one trip (a consistent snapshot)."""

    session_id: str | None  # the session named, or the connection's current one (None: it has none)
    session: Session | None
    evicted: Eviction | None  # set when the session named was removed by retention or the cap
    last: Entry | None
    found: dict[int, Entry]  # the newest entry of each number asked for (revision and branch targets)
    recent: tuple[Entry, ...]  # the last `window` entries, oldest first
    branches: tuple[str, ...]
    count: int
    default_at: float | None = None  # when the connection's default was last set to this session (if read so)
    spent: Spent | None = None  # what the principal spent today and this minute (when read with spent=True)


EMPTY = View(None, None, None, None, {}, (), (), 0)


@dataclass(frozen=True)
class Charge:
    """What one call spent, added to its principal's row of the day in the transaction that records the call."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    refused: bool = False  # a limit was reached: recorded without model calls

    @property
    def paid(self) -> bool:
        return bool(self.calls or self.input_tokens or self.output_tokens)


@dataclass(frozen=True)
class DayUsage:
    """One principal's usage on one UTC day (`thinking-hats usage`)."""

    principal: str
    day: str  # YYYY-MM-DD
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    calls: int
    thoughts: int
    refusals: int


@dataclass
class Write:
    """One entry and everything that changes with it; committed whole or not at all."""

    principal: str
    session_id: str
    tool: str
    number: int
    branch_id: str | None
    data: dict[str, Any]
    keep: int | None = None  # entries beyond the newest `keep` go in the same transaction
    usage: dict[str, int] | None = None  # added to the session's running usage
    meta: dict[str, Any] = field(default_factory=dict)  # merged into the session's meta
    connection: str | None = None  # this session becomes the connection's default for `tool`
    revised: tuple[int, dict[str, Any]] | None = None  # (seq, new data) of the entry this one revises
    reset: bool = False  # start the session afresh (CRASH_SESSION_TIMEOUT)
    existed: bool = False  # the session was there when the call read it: if it is gone now, it was evicted
    default_at: float | None = None  # View.default_at: the connection's default already names this session
    charge: Charge | None = None  # added to the principal's usage of the day (None: this call is not counted)
    # The sessions the principal may keep (None: no cap here), and how long a session stays safe from the cap
    # after its last use: a new session over the cap takes the place of one idle past that, or is refused.
    cap: int | None = None
    grace_s: float = 0.0


@dataclass(frozen=True)
class Committed:
    entry: Entry
    replayed: bool  # the same call was already committed: `entry` is the stored one, nothing was written
    count: int
    branches: tuple[str, ...]


# reply_for(count, branches) -> the reply stored with the entry; called inside the transaction.
ReplyFn = Callable[[int, tuple[str, ...]], dict[str, Any]]


class Tx(Protocol):
    async def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...
    async def run(self, sql: str, params: Sequence[Any] = ()) -> int: ...
    async def many(self, sql: str, params: Sequence[Sequence[Any]]) -> None: ...
    async def now(self) -> float: ...  # the store's clock: limits count its minutes and days, not a replica's


class Backend(Protocol):
    """A database that runs the store's SQL (`?` placeholders) in transactions and maps its errors to
    StoreError with the fix."""

    name: str
    location: str
    lock: str  # appended to a SELECT that must lock the session row until commit ("" where BEGIN locks)

    def transaction(self, write: bool) -> AbstractAsyncContextManager[Tx]: ...
    async def close(self) -> None: ...
    async def check(self) -> dict[str, Any]: ...


def new_session_id() -> str:
    return uuid.uuid4().hex[:16]


class Store:
    """The session store: the only place thinking state lives. See the module docstring for its rules."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._writes = 0
        # Commits of this process waiting on one session, and how many may: each holds a store connection while it
        # waits for the session's lock, so more would starve every other session of the pool (see commit).
        self._queued: dict[tuple[str, str], int] = {}
        connections = getattr(backend, "connections", None)
        self.queue_per_session = (
            QUEUE_PER_SESSION if connections is None else max(1, min(QUEUE_PER_SESSION, connections - 1))
        )

    @asynccontextmanager
    async def _transaction(self, operation: str, write: bool) -> AsyncIterator[Tx]:
        """The backend's transaction, timed and counted for /metrics and traced (a span) when tracing is on."""
        started = perf_counter()
        failed = False
        with tracer().store_span(self.backend.name, operation) as span:
            try:
                async with self.backend.transaction(write) as tx:
                    yield tx
            except StoreError as exc:
                # The database failed (the backend says so with its error as the cause); not a rule of ours,
                # such as a session evicted meanwhile.
                failed = exc.__cause__ is not None
                if failed:
                    span.error(type(exc.__cause__).__name__)
                raise
            finally:
                metrics().store(self.backend.name, operation, perf_counter() - started, failed)

    @property
    def location(self) -> str:
        return self.backend.location

    async def close(self) -> None:
        await self.backend.close()

    # --- the unit of work of one call ---
    async def read(
        self,
        principal: str,
        tool: str,
        session_id: str | None,
        connection: str | None = None,
        numbers: Sequence[int] = (),
        window: int = 0,
        spent: bool = False,
    ) -> View:
        """The named session (or the connection's default session for `tool`) with what a call needs of it.

        With `spent`, also what the principal spent today and this minute (for its limits): read by the statement
        that reads the session (a join), so the check costs no round trip of its own. Only a call with neither a
        session nor a connection (a new stateless chain), which reads nothing else, reads it on its own."""
        if session_id is None and connection is None and not spent:
            return EMPTY
        now = time.time()
        usage_join, usage_params = ("", ()) if not spent else (_USAGE_JOIN, (principal, day_of(now)))
        usage_columns = _USAGE_COLUMNS if spent else ""
        async with self._transaction("read", write=False) as tx:
            if session_id is None and connection is not None:
                # The default session and its row in one statement (a LEFT JOIN: a default whose session was
                # evicted still names it); the one-row FROM keeps the principal's usage when there is no default.
                rows = await tx.rows(
                    f"SELECT d.session_id, d.updated, {_SESSION_COLUMNS}{usage_columns} FROM (SELECT 1 AS one) o"
                    " LEFT JOIN defaults d ON d.principal = ? AND d.connection = ? AND d.tool = ?"
                    f" LEFT JOIN sessions s ON s.principal = d.principal AND s.id = d.session_id{usage_join}",
                    (principal, connection, tool, *usage_params),
                )
                used = _spent_of(rows[0][8:], now) if spent else None
                if rows[0][0] is None:
                    return replace(EMPTY, spent=used)
                session_id, default_at, read = rows[0][0], rows[0][1], _session_of(rows[0][2:8])
            elif session_id is None:
                rows = await tx.rows(f"SELECT {_USAGE_COLUMNS[2:]} FROM (SELECT 1 AS one) o{_USAGE_JOIN}", usage_params)
                return replace(EMPTY, spent=_spent_of(rows[0], now))
            else:
                rows = await tx.rows(
                    f"SELECT {_SESSION_COLUMNS}{usage_columns} FROM (SELECT 1 AS one) o"
                    f" LEFT JOIN sessions s ON s.principal = ? AND s.id = ?{usage_join}",
                    (principal, session_id, *usage_params),
                )
                default_at, read = None, _session_of(rows[0][:6])
                used = _spent_of(rows[0][6:], now) if spent else None
            if read is None:
                rows = await tx.rows(
                    "SELECT id, tool, at, reason FROM evictions WHERE principal = ? AND id = ?", (principal, session_id)
                )
                evicted = Eviction(*rows[0]) if rows else None
                return View(session_id, None, evicted, None, {}, (), (), 0, spent=used)
            session, tally = read
            key = (principal, session_id)
            latest = await _entries(
                tx, "WHERE principal = ? AND session_id = ? ORDER BY seq DESC LIMIT ?", (*key, max(window, 1))
            )
            found: dict[int, Entry] = {}
            wanted = sorted(set(numbers))
            if wanted:
                marks = ",".join("?" * len(wanted))
                for entry in await _entries(
                    tx, f"WHERE principal = ? AND session_id = ? AND number IN ({marks}) ORDER BY seq", (*key, *wanted)
                ):
                    found[entry.number] = entry  # ordered by seq: the newest wording wins
            count, branches = tally or await _count(tx, key)
            return View(
                session_id,
                session,
                None,
                latest[0] if latest else None,
                found,
                tuple(reversed(latest[:window])) if window else (),
                branches,
                count,
                default_at,
                used,
            )

    async def commit(self, write: Write, reply_for: ReplyFn) -> Committed:
        """Write the entry, its reply, the session's usage and meta, and the connection's default: all or nothing.

        Creating the session is part of it, so two processes starting the same new session both succeed. If the
        session's newest entry is this very call, the stored reply is returned instead (a retry that raced its
        original); if that entry's analysis had failed, this attempt replaces it.

        At most `queue_per_session` commits of this process wait on one session at a time (each holds a store
        connection meanwhile); one more fails at once with the retryable "session is busy", so calls queued on
        one busy session can never take the connections other sessions' calls need.
        """
        key = (write.principal, write.session_id)
        queued = self._queued.get(key, 0)
        if queued >= self.queue_per_session:
            raise StoreBusy(
                f"the session is busy with another call; retry. ({queued} calls to it were already waiting here, "
                "the most one session may queue: nothing was recorded.)"
            )
        self._queued[key] = queued + 1
        try:
            return await self._commit(write, reply_for)
        finally:
            left = self._queued[key] - 1
            if left:
                self._queued[key] = left
            else:
                del self._queued[key]

    async def _commit(self, write: Write, reply_for: ReplyFn) -> Committed:
        now = time.time()
        key = (write.principal, write.session_id)
        thought = str(write.data.get("thought", ""))
        async with self._transaction("commit", write=True) as tx:
            if write.charge is not None and write.charge.refused:
                await _refusals_kept(tx, write.principal, now)
            if not write.existed:
                created = await tx.run(
                    "INSERT INTO sessions(principal, id, tool, created, updated, meta) VALUES (?, ?, ?, ?, ?, '{}')"
                    " ON CONFLICT (principal, id) DO NOTHING",
                    (*key, write.tool, now, now),
                )
                if created and write.cap is not None:
                    await _make_room(tx, write.principal, write.session_id, write.cap, now - write.grace_s, now)
            found = await tx.rows(
                "SELECT tool, meta FROM sessions WHERE principal = ? AND id = ?" + self.backend.lock, key
            )
            if not found:
                # Evicted during the model call; or, on PostgreSQL, by another replica's prune between the upsert
                # and the row lock.
                during = "this thought was being analysed" if write.existed else "this call was being recorded"
                raise StoreError(
                    f"session '{write.session_id}' was evicted while {during}: nothing was recorded. "
                    "Start a new session (another session id, or none)."
                )
            tool, meta_text = found[0]
            if tool != write.tool:
                raise wrong_tool(write.session_id, tool, write.tool)
            meta, tally = _split(meta_text)
            if write.reset:
                await tx.run("DELETE FROM entries WHERE principal = ? AND session_id = ?", key)
                meta, tally = {}, (0, ())
            count, branches = tally or await _count(tx, key)
            last = await _entries(tx, "WHERE principal = ? AND session_id = ? ORDER BY seq DESC LIMIT 1", key)
            data_text = json.dumps(write.data)
            replacing = bool(last) and last[0].same_call(write.number, write.branch_id, thought)
            if replacing and not last[0].failed:
                # A racing duplicate: nothing is written of the thought, but what its model calls cost is counted.
                if write.charge is not None and write.charge.paid:
                    await _charge(tx, write.principal, replace(write.charge, refused=False), now, thought=False)
                return Committed(last[0], True, count, branches)
            if not replacing:
                count += 1
                if write.branch_id is not None and write.branch_id not in branches:
                    branches += (write.branch_id,)
            seq = last[0].seq if replacing else (last[0].seq + 1 if last else 1)
            keep = write.keep
            if keep is not None and not replacing and count > keep:
                trimmed = await tx.rows(
                    "DELETE FROM entries WHERE principal = ? AND session_id = ? AND seq <= ? RETURNING branch_id",
                    (*key, seq - keep),
                )
                count -= len(trimmed)
                for branch in {r[0] for r in trimmed} - {None, write.branch_id}:
                    if not await tx.rows(
                        "SELECT 1 FROM entries WHERE principal = ? AND session_id = ? AND branch_id = ? LIMIT 1",
                        (*key, branch),
                    ):
                        branches = tuple(b for b in branches if b != branch)  # its last entry went
            reply = reply_for(count, branches)
            if replacing:
                await tx.run(
                    "UPDATE entries SET data = ?, created = ?, reply = ? WHERE principal = ? AND session_id = ?"
                    " AND seq = ?",
                    (data_text, now, json.dumps(reply), *key, seq),
                )
            else:
                await tx.run(
                    "INSERT INTO entries(principal, session_id, seq, number, branch_id, created, data, reply)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (*key, seq, write.number, write.branch_id, now, data_text, json.dumps(reply)),
                )
            if write.revised is not None:
                await tx.run(
                    "UPDATE entries SET data = ? WHERE principal = ? AND session_id = ? AND seq = ?",
                    (json.dumps(write.revised[1]), *key, write.revised[0]),
                )
            meta.update(write.meta)
            if write.usage:
                running = meta.get("usage") or {}
                meta["usage"] = {k: int(running.get(k, 0)) + int(v) for k, v in write.usage.items()} | {
                    k: v for k, v in running.items() if k not in write.usage
                }
            await tx.run(
                "UPDATE sessions SET updated = ?, meta = ? WHERE principal = ? AND id = ?",
                (now, json.dumps(meta | {_COUNT: count, _BRANCHES: list(branches)}), *key),
            )
            # Rewriting a default that already names this session would only move its time (kept for inspection),
            # so it is refreshed hourly: most commits are spared the write to two more pages.
            fresh = write.default_at is not None and now - write.default_at < _DEFAULT_REFRESH_S
            if write.connection is not None and not fresh:
                await tx.run(
                    "INSERT INTO defaults(principal, connection, tool, session_id, updated) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT (principal, connection, tool)"
                    " DO UPDATE SET session_id = excluded.session_id, updated = excluded.updated",
                    (write.principal, write.connection, write.tool, write.session_id, now),
                )
            if write.charge is not None:  # last: the principal's row is locked only until the commit just after
                await _charge(tx, write.principal, write.charge, now, thought=not replacing)
        if not write.existed:
            metrics().session_started(write.tool)
        self._writes += 1
        entry = Entry(write.session_id, seq, write.number, write.branch_id, now, write.data, reply)
        return Committed(entry, False, count, branches)

    # --- reading for reports and resources (principal None: every principal, for the local CLI) ---
    async def sessions(self, principal: str | None, limit: int = 100) -> list[SessionSummary]:
        where, params = ("WHERE s.principal = ?", (principal,)) if principal is not None else ("", ())
        async with self._transaction("list", write=False) as tx:
            rows = await tx.rows(
                "SELECT s.principal, s.id, s.tool, s.created, s.updated,"
                " (SELECT count(*) FROM entries e WHERE e.principal = s.principal AND e.session_id = s.id)"
                f" FROM sessions s {where} ORDER BY s.updated DESC, s.id LIMIT ?",
                (*params, limit),
            )
        return [SessionSummary(r[0], r[1], r[2], r[3], r[4], int(r[5])) for r in rows]

    async def session(self, principal: str | None, session_id: str) -> tuple[Session, list[Entry]] | None:
        """One session with all its entries; with principal None, the one session of that id (an id that
        several principals use is ambiguous: StoreError says so)."""
        async with self._transaction("session", write=False) as tx:
            if principal is None:
                owners = await tx.rows("SELECT principal FROM sessions WHERE id = ? LIMIT 2", (session_id,))
                if len(owners) > 1:
                    raise StoreError(f"several principals have a session '{session_id}': name one with --principal.")
                if not owners:
                    return None
                principal = str(owners[0][0])
            read = await _session(tx, principal, session_id)
            if read is None:
                return None
            entries = await _entries(tx, "WHERE principal = ? AND session_id = ? ORDER BY seq", (principal, session_id))
        return read[0], entries

    async def numbers(self, principal: str, session_id: str, limit: int = 200) -> list[int]:
        async with self._transaction("numbers", write=False) as tx:
            rows = await tx.rows(
                "SELECT DISTINCT number FROM entries WHERE principal = ? AND session_id = ? ORDER BY number LIMIT ?",
                (principal, session_id, limit),
            )
        return [int(r[0]) for r in rows]

    # --- the web view: pages of sessions, a session's new entries, and the progress of its thought in flight ---
    async def page(
        self, principal: str, limit: int, before: tuple[float, str] | None = None
    ) -> list[tuple[Session, int, str | None]]:
        """A page of the principal's sessions, newest first, each with its entry count and first thought. Keyset
        pagination (`before`: the last row of the previous page), so page 200 costs what page 1 does."""
        where, params = "s.principal = ?", list[Any]([principal])
        if before is not None:
            where += " AND (s.updated < ? OR (s.updated = ? AND s.id > ?))"
            params += [before[0], before[0], before[1]]
        async with self._transaction("page", write=False) as tx:
            rows = await tx.rows(
                f"SELECT {_SESSION_COLUMNS}, (SELECT e.data FROM entries e WHERE e.principal = s.principal"
                " AND e.session_id = s.id ORDER BY e.seq LIMIT 1)"
                f" FROM sessions s WHERE {where} ORDER BY s.updated DESC, s.id LIMIT ?",
                (*params, limit),
            )
        found = []
        for r in rows:
            read = _session_of(r[:6])
            if read is None:
                continue
            session, tally = read
            first = json.loads(r[6]).get("thought") if r[6] else None
            found.append((session, tally[0] if tally else -1, first if isinstance(first, str) else None))
        return found

    async def since(
        self, principal: str, session_id: str, seq: int
    ) -> tuple[Session, list[Entry], dict[str, Any] | None] | None:
        """A session's entries from `seq` on (the last one seen is read again: a failed call's retry replaces it
        in place), with the progress of its thought in flight; None when the session is not the principal's."""
        async with self._transaction("since", write=False) as tx:
            read = await _session(tx, principal, session_id)
            if read is None:
                return None
            entries = await _entries(
                tx, "WHERE principal = ? AND session_id = ? AND seq >= ? ORDER BY seq", (principal, session_id, seq)
            )
            rows = await tx.rows(
                "SELECT updated, data FROM progress WHERE principal = ? AND session_id = ?", (principal, session_id)
            )
        progress = json.loads(rows[0][1]) | {"updated": float(rows[0][0])} if rows else None
        return read[0], entries, progress

    async def note_progress(self, principal: str, session_id: str, data: dict[str, Any]) -> None:
        """Where the analysis of a session's thought in flight has got to (the web view shows it live). One row
        per session, overwritten: a thought's progress is worth nothing once its entry is committed."""
        async with self._transaction("progress", write=True) as tx:
            await tx.run(
                "INSERT INTO progress(principal, session_id, updated, data) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (principal, session_id) DO UPDATE SET updated = excluded.updated, data = excluded.data",
                (principal, session_id, time.time(), json.dumps(data)),
            )

    # --- retention ---
    async def prune(
        self, retention_seconds: float, max_sessions: int, grace_seconds: float, per_principal: int | None = None
    ) -> int:
        """Delete sessions idle past the retention period, then each principal's least recently used beyond its
        own cap (`per_principal`, default `max_sessions`), but never one used within the grace period (the store
        may exceed a cap meanwhile). One principal's sessions never make room for another's: a principal within
        its own cap loses nothing, however full the store. Each removal leaves a tombstone for one retention
        period, so a client naming the session hears that it was evicted."""
        now = time.time()
        cutoff = now - retention_seconds
        cap = max_sessions if per_principal is None else per_principal
        async with self._transaction("prune", write=True) as tx:
            expired = await tx.rows("SELECT principal, id, tool FROM sessions WHERE updated < ?", (cutoff,))
            # --- fair tenancy: the cap is per principal ---
            crowded = await tx.rows(
                "SELECT principal, count(*) FROM sessions WHERE updated >= ? GROUP BY principal HAVING count(*) > ?"
                " ORDER BY count(*) DESC, principal",
                (cutoff, cap),
            )
            capped: list[tuple[Any, ...]] = []
            for principal, held in crowded:
                capped += await tx.rows(
                    "SELECT principal, id, tool FROM sessions WHERE principal = ? AND updated >= ? AND updated < ?"
                    " ORDER BY updated, id LIMIT ?",
                    (principal, cutoff, now - grace_seconds, int(held) - cap),
                )
            reason = (
                "least recently used beyond THINKING_MAX_SESSIONS"
                if per_principal is None
                else "least recently used beyond THINKING_MAX_SESSIONS_PER_PRINCIPAL"
            )
            # --- end fair tenancy ---
            victims = [(*r, "idle past THINKING_RETENTION_DAYS") for r in expired] + [(*r, reason) for r in capped]
            victims.sort()  # one lock order for every replica pruning at once: no deadlock between them
            if victims:
                await tx.many(
                    "INSERT INTO evictions(principal, id, tool, at, reason) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT (principal, id) DO UPDATE SET tool = excluded.tool, at = excluded.at,"
                    " reason = excluded.reason",
                    [(p, i, t, now, why) for p, i, t, why in victims],
                )
                await tx.many("DELETE FROM sessions WHERE principal = ? AND id = ?", [(p, i) for p, i, _, _ in victims])
            await tx.run("DELETE FROM evictions WHERE at < ?", (cutoff,))
            # Tombstones are capped too: a principal keeps at most as many as it may keep sessions, newest first.
            for principal, held in await tx.rows(
                "SELECT principal, count(*) FROM evictions GROUP BY principal HAVING count(*) > ?", (cap,)
            ):
                await _drop_tombstones(tx, principal, int(held) - cap)
            # A default goes with its session (a connection creates the sessions it defaults to, so they are as
            # many): its own time is refreshed only hourly and says nothing of whether the session is in use.
            await tx.run(
                "DELETE FROM defaults WHERE NOT EXISTS (SELECT 1 FROM sessions s"
                " WHERE s.principal = defaults.principal AND s.id = defaults.session_id)"
            )
            await tx.run(
                "DELETE FROM progress WHERE NOT EXISTS (SELECT 1 FROM sessions s"
                " WHERE s.principal = progress.principal AND s.id = progress.session_id)"
            )
        return len(victims)

    async def charge(self, principal: str, charge: Charge, reservation: str | None = None) -> None:
        """Add what model calls spent to the principal's day, in a transaction of its own (so the charge stands
        whatever then happens to the thought), and give back that much of the thought's reservation."""
        async with self._transaction("charge", write=True) as tx:
            await _charge(tx, principal, charge, await tx.now(), thought=False)
            if reservation is not None:
                tokens = charge.input_tokens + charge.output_tokens
                await tx.run(
                    "UPDATE reservations SET tokens = CASE WHEN tokens > ? THEN tokens - ? ELSE 0 END,"
                    " calls = CASE WHEN calls > ? THEN calls - ? ELSE 0 END WHERE id = ?",
                    (tokens, tokens, charge.calls, charge.calls, reservation),
                )

    async def reserve(
        self, principal: str, limit: Limit, wanted: Hold, hold_s: float, more: str | None = None
    ) -> str | Refusal:
        """Hold `wanted` against the principal's limits for at most `hold_s` seconds: the reservation's id, or the
        limit it would go past (`more`: add to that reservation instead, for a retry). Atomic on every backend:
        the upsert of the principal's row of the day takes its lock (PostgreSQL; SQLite's write lock is the
        database's), so reservations of one principal are decided one after another, each seeing what was spent
        and what the others hold."""
        async with self._transaction("reserve", write=True) as tx:
            now = await tx.now()
            day = day_of(now)
            await tx.run(
                "INSERT INTO principal_usage(principal, day) VALUES (?, ?)"
                " ON CONFLICT (principal, day) DO UPDATE SET minute = principal_usage.minute",
                (principal, day),
            )
            row = (
                await tx.rows(
                    "SELECT input_tokens + output_tokens, minute, minute_calls FROM principal_usage"
                    " WHERE principal = ? AND day = ?",
                    (principal, day),
                )
            )[0]
            await tx.run("DELETE FROM reservations WHERE principal = ? AND expires < ?", (principal, now))
            held_row = (
                await tx.rows(
                    "SELECT coalesce(sum(tokens), 0), coalesce(sum(calls), 0) FROM reservations WHERE principal = ?",
                    (principal,),
                )
            )[0]
            spent = Spent(day, int(row[0]), int(row[1]), int(row[2]))
            refusal = over(principal, limit, spent, Hold(int(held_row[0]), int(held_row[1])), wanted, now)
            if refusal is not None:
                return refusal
            if more is not None:
                await tx.run(
                    "UPDATE reservations SET tokens = tokens + ?, calls = calls + ? WHERE id = ?",
                    (wanted.tokens, wanted.calls, more),
                )
                return more
            reservation = uuid.uuid4().hex
            await tx.run(
                "INSERT INTO reservations(id, principal, tokens, calls, expires) VALUES (?, ?, ?, ?, ?)",
                (reservation, principal, wanted.tokens, wanted.calls, now + hold_s),
            )
        return reservation

    async def release(self, reservation: str) -> None:
        """Give back what is left of a reservation: its thought has ended and its calls are charged."""
        async with self._transaction("release", write=True) as tx:
            await tx.run("DELETE FROM reservations WHERE id = ?", (reservation,))

    async def usage(
        self, principal: str | None = None, since: str | None = None, until: str | None = None
    ) -> list[DayUsage]:
        """Usage per principal and UTC day (YYYY-MM-DD bounds, both included), oldest day first."""
        where: list[str] = ["1 = 1"]
        params: list[Any] = []
        if principal is not None:
            where.append("principal = ?")
            params.append(principal)
        for bound, op in ((since, ">="), (until, "<=")):
            if bound is not None:
                where.append(f"day {op} ?")
                params.append(_day_number(bound))
        async with self._transaction("usage", write=False) as tx:
            rows = await tx.rows(
                "SELECT principal, day, input_tokens, output_tokens, cached_tokens, calls, thoughts, refusals"
                f" FROM principal_usage WHERE {' AND '.join(where)} ORDER BY day, principal",
                params,
            )
        return [
            DayUsage(r[0], time.strftime("%Y-%m-%d", time.gmtime(int(r[1]) * 86400)), *(int(v) for v in r[2:]))
            for r in rows
        ]

    def due_for_pruning(self, every: int = 200) -> bool:
        return self._writes % every == 0

    async def ping(self) -> dict[str, Any]:
        """A cheap round trip, for load balancers' health checks."""
        async with self._transaction("ping", write=False) as tx:
            version = (await tx.rows("SELECT version FROM schema_version"))[0][0]
        return {"backend": self.backend.name, "schema": int(version)}

    async def health(self) -> dict[str, Any]:
        report: dict[str, Any] = {"backend": self.backend.name, "location": self.backend.location}
        report.update(await self.backend.check())
        async with self.backend.transaction(write=False) as tx:
            report["sessions"] = int((await tx.rows("SELECT count(*) FROM sessions"))[0][0])
            report["entries"] = int((await tx.rows("SELECT count(*) FROM entries"))[0][0])
        return report


def wrong_tool(session_id: str, owner: str, wanted: str) -> InvalidThought:
    return InvalidThought(
        f"session '{session_id}' belongs to the {owner} tool; a session belongs to one tool",
        hint=f"Use another {'session_id' if wanted == 'crash' else 'sessionId'} for {wanted}, "
        f"or call {owner} to continue this one.",
    )


async def _session(tx: Tx, principal: str, session_id: str) -> tuple[Session, Tally | None] | None:
    rows = await tx.rows(
        f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.principal = ? AND s.id = ?", (principal, session_id)
    )
    return _session_of(rows[0]) if rows else None


def _session_of(r: Sequence[Any]) -> tuple[Session, Tally | None] | None:
    if r[0] is None:  # a LEFT JOIN that found no session
        return None
    meta, tally = _split(r[5])
    return Session(r[0], r[1], r[2], r[3], r[4], meta), tally


def _split(meta_text: str) -> tuple[dict[str, Any], Tally | None]:
    """A session's meta, and the tally every commit keeps in it (None for a session written before that)."""
    meta: dict[str, Any] = json.loads(meta_text)
    count, branches = meta.pop(_COUNT, None), meta.pop(_BRANCHES, None)
    return meta, None if count is None or branches is None else (int(count), tuple(branches))


# What a principal spent, joined onto the statement that reads the session: today's row of principal_usage.
_USAGE_COLUMNS = ", u.day, u.input_tokens + u.output_tokens, u.minute, u.minute_calls"
_USAGE_JOIN = " LEFT JOIN principal_usage u ON u.principal = ? AND u.day = ?"


def _spent_of(r: Sequence[Any], now: float) -> Spent:
    if r[0] is None:  # nothing spent today
        return Spent(day_of(now))
    return Spent(int(r[0]), int(r[1]), int(r[2]), int(r[3]))


async def _charge(tx: Tx, principal: str, charge: Charge, now: float, thought: bool) -> None:
    """Add a call's cost to its principal's row of the day. The minute's calls start afresh in a new minute."""
    await tx.run(
        "INSERT INTO principal_usage(principal, day, input_tokens, output_tokens, cached_tokens, calls, thoughts,"
        " refusals, minute, minute_calls) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (principal, day) DO UPDATE SET"
        " input_tokens = principal_usage.input_tokens + excluded.input_tokens,"
        " output_tokens = principal_usage.output_tokens + excluded.output_tokens,"
        " cached_tokens = principal_usage.cached_tokens + excluded.cached_tokens,"
        " calls = principal_usage.calls + excluded.calls,"
        " thoughts = principal_usage.thoughts + excluded.thoughts,"
        " refusals = principal_usage.refusals + excluded.refusals,"
        " minute_calls = CASE WHEN excluded.minute > principal_usage.minute THEN excluded.minute_calls"
        " ELSE principal_usage.minute_calls + excluded.minute_calls END,"
        " minute = CASE WHEN excluded.minute > principal_usage.minute THEN excluded.minute"
        " ELSE principal_usage.minute END",
        (
            principal, day_of(now), charge.input_tokens, charge.output_tokens, charge.cached_tokens, charge.calls,
            int(thought), int(charge.refused), minute_of(now), charge.calls,
        ),
    )  # fmt: skip


async def _make_room(tx: Tx, principal: str, new_id: str, cap: int, idle_before: float, now: float) -> None:
    """A principal's new session over its cap: its least recently used sessions idle since before the grace
    period go (each leaving a tombstone), or, when every one of them is in use, the new session is refused. The
    principal's row of usage is locked first, so two new sessions of one principal are decided one at a time,
    on every replica."""
    await tx.run(
        "INSERT INTO principal_usage(principal, day) VALUES (?, ?)"
        " ON CONFLICT (principal, day) DO UPDATE SET minute = principal_usage.minute",
        (principal, day_of(now)),
    )
    held = int((await tx.rows("SELECT count(*) FROM sessions WHERE principal = ?", (principal,)))[0][0])
    if held <= cap:
        return
    victims = await tx.rows(
        "SELECT id, tool FROM sessions WHERE principal = ? AND id <> ? AND updated < ? ORDER BY updated, id LIMIT ?",
        (principal, new_id, idle_before, held - cap),
    )
    if len(victims) < held - cap:
        grace = (now - idle_before) / 60
        raise InvalidThought(
            f"principal '{principal}' already keeps {held - 1:,} sessions, the most it may "
            f"(THINKING_MAX_SESSIONS_PER_PRINCIPAL={cap:,}), and each was used within the last {grace:g} minutes "
            "(THINKING_SESSION_GRACE_MINUTES): nothing was recorded",
            hint="Continue one of your sessions (send its sessionId), or start a new one once some have been idle "
            "longer than the grace period.",
        )
    await tx.many(
        "INSERT INTO evictions(principal, id, tool, at, reason) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (principal, id) DO UPDATE SET tool = excluded.tool, at = excluded.at, reason = excluded.reason",
        [(principal, i, t, now, _CAP_REASON) for i, t in victims],
    )
    await tx.many("DELETE FROM sessions WHERE principal = ? AND id = ?", [(principal, i) for i, _ in victims])
    tombstones = int((await tx.rows("SELECT count(*) FROM evictions WHERE principal = ?", (principal,)))[0][0])
    if tombstones > cap:
        await _drop_tombstones(tx, principal, tombstones - cap)


async def _drop_tombstones(tx: Tx, principal: str, excess: int) -> None:
    await tx.run(
        "DELETE FROM evictions WHERE principal = ? AND id IN"
        " (SELECT id FROM evictions WHERE principal = ? ORDER BY at, id LIMIT ?)",
        (principal, principal, excess),
    )


async def _refusals_kept(tx: Tx, principal: str, now: float) -> None:
    """Refuse to store one more refused thought of a principal that has had REFUSED_KEPT_PER_DAY today."""
    rows = await tx.rows(
        "SELECT refusals FROM principal_usage WHERE principal = ? AND day = ?", (principal, day_of(now))
    )
    if rows and int(rows[0][0]) >= REFUSED_KEPT_PER_DAY:
        raise InvalidThought(
            f"principal '{principal}' is over its limits and already has {REFUSED_KEPT_PER_DAY:,} thoughts recorded "
            "without model analysis today, the most that are kept: this one was not recorded",
            hint="Wait until the limit resets (the earlier replies say when), then send it again.",
        )


def _day_number(day: str) -> int:
    import calendar

    try:
        parsed = time.strptime(day, "%Y-%m-%d")
    except ValueError:
        raise InvalidThought(f"'{day}' is not a day: write it as YYYY-MM-DD (UTC)") from None
    return calendar.timegm(parsed) // 86400


async def _entries(tx: Tx, where: str, params: Sequence[Any]) -> list[Entry]:
    rows = await tx.rows(f"SELECT {_ENTRY_COLUMNS} FROM entries {where}", params)
    return [Entry(r[0], int(r[1]), int(r[2]), r[3], r[4], json.loads(r[5]), r[6]) for r in rows]


async def _count(tx: Tx, key: tuple[str, str]) -> Tally:
    """Count a session's entries and branches: only for a session written before commits kept its tally."""
    count = int((await tx.rows("SELECT count(*) FROM entries WHERE principal = ? AND session_id = ?", key))[0][0])
    rows = await tx.rows(
        "SELECT branch_id FROM entries WHERE principal = ? AND session_id = ? AND branch_id IS NOT NULL"
        " GROUP BY branch_id ORDER BY min(seq)",
        key,
    )
    return count, tuple(r[0] for r in rows)


async def open_store(
    url: str | None,
    sqlite_path: Any = None,
    *,
    pool_size: int | None = None,
    lock_s: float = 5.0,
    statement_s: float = 15.0,
) -> Store:
    """`url` postgresql://... opens PostgreSQL; otherwise SQLite at `sqlite_path` (None: in memory).
    `pool_size`: PostgreSQL connections of this process; `lock_s`/`statement_s`: how long a transaction may wait
    for a lock / one statement may run (THINKING_STORE_LOCK_TIMEOUT, THINKING_STORE_STATEMENT_TIMEOUT)."""
    if url is not None and url.startswith(("postgresql://", "postgres://")):
        from .postgres import _POOL_SIZE, Waits, open_postgres

        return Store(await open_postgres(url, pool_size or _POOL_SIZE, Waits(lock_s, statement_s)))
    from .sqlite import open_sqlite

    return Store(open_sqlite(sqlite_path, lock_s))


async def open_store_for(settings: Any, processes: int = 1) -> Store:
    """open_store with the operator's settings: the replica's pool shared out over its `processes` (workers)."""
    import math

    return await open_store(
        settings.postgres_url(),
        settings.database_path(),
        pool_size=max(2, math.ceil(settings.thinking_store_pool_size / max(processes, 1))),
        lock_s=settings.thinking_store_lock_timeout,
        statement_s=settings.thinking_store_statement_timeout,
    )
