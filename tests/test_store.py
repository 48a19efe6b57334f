"""The session store's units of work, on both backends: every test runs on a SQLite file and on PostgreSQL.

The PostgreSQL runs use the test session's own server (tests/pg.py), a fresh database per test.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import thinking_hats.store as store_module
from thinking_hats.errors import InvalidThought, StoreError
from thinking_hats.store import Store, Write, _schema, open_store

TOOL = "sequentialthinking"
Opener = Callable[[], Awaitable[Store]]


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str | None, Path | None]:
    """open_store's arguments for one store shared by every Store instance of the test."""
    if request.param == "sqlite":
        return None, tmp_path / "store" / "sessions.sqlite3"
    return request.getfixturevalue("postgres_url"), None


@pytest.fixture
async def stores(location: tuple[str | None, Path | None]) -> AsyncIterator[Opener]:
    """Opens another Store on the same database, as another process would; all are closed afterwards."""
    opened: list[Store] = []

    async def another() -> Store:
        opened.append(await open_store(*location))
        return opened[-1]

    yield another
    for store in opened:
        await store.close()


@pytest.fixture
async def store(stores: Opener) -> Store:
    return await stores()


class Clock:
    """Stands in for the store's `time` module: retention is tested at chosen instants, not by waiting."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(store_module, "time", fake)
    return fake


def write(
    session: str = "s", number: int = 1, thought: str | None = None, principal: str = "alice", **extra: Any
) -> Write:
    text = thought if thought is not None else f"Thought {number}."
    data = {"thought": text, "thought_number": number}
    return Write(principal=principal, session_id=session, tool=extra.pop("tool", TOOL), number=number,
                 branch_id=extra.pop("branch_id", None), data=data, **extra)  # fmt: skip


class Replies:
    """A reply_for that records how often the store asked for a reply (a replay must not ask)."""

    def __init__(self, error: bool = False, label: str = "ok") -> None:
        self.error, self.label, self.calls = error, label, 0

    def __call__(self, count: int, branches: tuple[str, ...]) -> dict[str, Any]:
        self.calls += 1
        return {"reply": {"label": self.label, "count": count, "branches": list(branches)}, "is_error": self.error}


async def seqs(store: Store, session: str = "s", principal: str = "alice") -> list[int]:
    found = await store.session(principal, session)
    assert found is not None
    return [e.seq for e in found[1]]


# --- one thought: read and commit ---


async def test_a_committed_thought_reads_back_with_its_reply(store: Store) -> None:
    committed = await store.commit(write(number=1), Replies())
    await store.commit(write(number=2), Replies())
    await store.commit(write(number=3), Replies())
    view = await store.read("alice", TOOL, "s", numbers=[1, 3], window=2)

    assert not committed.replayed and committed.count == 1
    assert committed.entry.reply == {"reply": {"label": "ok", "count": 1, "branches": []}, "is_error": False}
    assert view.session is not None and view.session.tool == TOOL and view.count == 3
    assert (
        view.last is not None and view.last.data["thought"] == "Thought 3." and view.last.reply["reply"]["count"] == 3
    )
    assert sorted(view.found) == [1, 3] and view.found[1].reply == committed.entry.reply
    assert [e.number for e in view.recent] == [2, 3]  # the window, oldest first


async def test_the_same_call_committed_twice_is_stored_once_and_the_second_is_replayed(store: Store) -> None:
    first, again = Replies(label="first"), Replies(label="again")
    original = await store.commit(write(number=1), first)
    retried = await store.commit(write(number=1), again)

    assert not original.replayed and retried.replayed
    assert retried.entry.reply == original.entry.reply and retried.entry.seq == original.entry.seq
    assert again.calls == 0  # nothing was built or written for the retry
    assert retried.count == 1 and await seqs(store) == [1]


async def test_the_same_number_with_other_words_is_a_new_thought_not_a_replay(store: Store) -> None:
    await store.commit(write(number=1, thought="One wording."), Replies())
    other = await store.commit(write(number=1, thought="Another wording."), Replies())

    assert not other.replayed and other.count == 2 and await seqs(store) == [1, 2]


async def test_a_failed_analysis_is_replaced_in_place_by_its_retry(store: Store) -> None:
    await store.commit(write(number=1), Replies())
    failed = await store.commit(write(number=2), Replies(error=True, label="failed"))
    retried = await store.commit(write(number=2), Replies(label="analysed"))
    found = await store.session("alice", "s")

    assert failed.entry.reply["is_error"] and not retried.replayed
    assert retried.entry.seq == failed.entry.seq == 2 and retried.count == 2
    assert found is not None and [e.reply["reply"]["label"] for e in found[1]] == ["ok", "analysed"]


async def test_the_first_commit_creates_the_session(store: Store) -> None:
    before = await store.read("alice", TOOL, "fresh")
    await store.commit(write("fresh"), Replies())
    after = await store.read("alice", TOOL, "fresh")

    assert before.session is None and before.evicted is None and before.count == 0
    assert after.session is not None and after.session.tool == TOOL and after.session.principal == "alice"
    assert [(s.id, s.tool, s.entries) for s in await store.sessions("alice")] == [("fresh", TOOL, 1)]


async def test_usage_and_meta_accumulate_on_the_session_with_each_commit(store: Store) -> None:
    await store.commit(write(number=1, usage={"llmCalls": 2, "inputTokens": 100}, meta={"hint_shown": True}), Replies())
    await store.commit(write(number=2, usage={"llmCalls": 1, "outputTokens": 7}), Replies())
    view = await store.read("alice", TOOL, "s")

    assert view.session is not None
    assert view.session.meta == {"hint_shown": True, "usage": {"llmCalls": 3, "inputTokens": 100, "outputTokens": 7}}


async def test_a_reset_starts_the_session_afresh_in_the_same_commit(store: Store) -> None:
    for n in (1, 2, 3):
        await store.commit(write(number=n, meta={"completed_at": n}), Replies())
    restarted = await store.commit(write(number=1, thought="Start over.", reset=True), Replies())
    view = await store.read("alice", TOOL, "s")

    assert restarted.count == 1 and view.count == 1
    assert view.session is not None and view.session.meta == {}


# --- principals and tools ---


async def test_another_principals_session_is_invisible_to_read_list_and_load(store: Store) -> None:
    await store.commit(write("secret", principal="alice"), Replies())

    seen_by_bob = await store.read("bob", TOOL, "secret")
    assert seen_by_bob.session is None and seen_by_bob.evicted is None and seen_by_bob.last is None
    assert await store.sessions("bob") == []
    assert await store.session("bob", "secret") is None
    assert await store.numbers("bob", "secret") == []
    assert [s.id for s in await store.sessions("alice")] == ["secret"]


async def test_the_same_session_id_under_two_principals_is_two_sessions(store: Store) -> None:
    await store.commit(write("plan", number=1, thought="Alice's thought.", principal="alice"), Replies())
    bobs = await store.commit(write("plan", number=1, thought="Bob's thought.", principal="bob"), Replies())
    await store.commit(write("plan", number=2, thought="Alice again.", principal="alice"), Replies())

    alice, bob = await store.session("alice", "plan"), await store.session("bob", "plan")
    assert not bobs.replayed and bobs.count == 1
    assert alice is not None and [e.data["thought"] for e in alice[1]] == ["Alice's thought.", "Alice again."]
    assert bob is not None and [e.data["thought"] for e in bob[1]] == ["Bob's thought."]
    with pytest.raises(StoreError, match="several principals"):  # the local CLI must name one
        await store.session(None, "plan")
    assert {(s.principal, s.entries) for s in await store.sessions(None)} == {("alice", 2), ("bob", 1)}


async def test_a_session_belongs_to_one_tool(store: Store) -> None:
    await store.commit(write("mine"), Replies())

    with pytest.raises(InvalidThought, match="belongs to the sequentialthinking tool"):
        await store.commit(write("mine", number=2, tool="crash"), Replies())
    assert await seqs(store, "mine") == [1]  # the refused commit left nothing


# --- numbering, revisions, branches, trimming ---


async def test_entries_are_numbered_contiguously_through_revisions_and_branches(store: Store) -> None:
    await store.commit(write(number=1), Replies())
    second = await store.commit(write(number=2, thought="Option A."), Replies())
    revised = {"thought": "Option A.", "thought_number": 2, "revised_by": 3}
    await store.commit(write(number=3, thought="A is unsafe.", revised=(second.entry.seq, revised)), Replies())
    branched = await store.commit(write(number=4, thought="Option B.", branch_id="b"), Replies())
    await store.commit(write(number=4, thought="Option C.", branch_id="c"), Replies())
    view = await store.read("alice", TOOL, "s", numbers=[2, 4])

    assert await seqs(store) == [1, 2, 3, 4, 5]
    assert branched.branches == ("b",) and view.branches == ("b", "c")
    assert view.found[2].data == revised
    assert view.found[4].data["thought"] == "Option C."  # the newest entry of a number


async def test_keep_trims_the_oldest_entries_in_the_same_commit_and_numbering_goes_on(store: Store) -> None:
    for n in range(1, 6):
        last = await store.commit(write(number=n, keep=3), Replies())

    assert last.count == 3 and last.entry.reply["reply"]["count"] == 3
    assert await seqs(store) == [3, 4, 5]
    assert await store.numbers("alice", "s") == [3, 4, 5]


async def test_a_branch_whose_last_entry_is_trimmed_leaves_the_branch_list(store: Store) -> None:
    await store.commit(write(number=1), Replies())
    await store.commit(write(number=2, thought="Option B.", branch_id="b", keep=3), Replies())
    await store.commit(write(number=3, thought="Option C.", branch_id="c", keep=3), Replies())
    assert (await store.read("alice", TOOL, "s")).branches == ("b", "c")

    await store.commit(write(number=4, keep=3), Replies())  # trims thought 1: both branches still have entries
    last = await store.commit(write(number=5, keep=3), Replies())  # trims branch b's only entry

    assert last.count == 3 and last.branches == ("c",)
    view = await store.read("alice", TOOL, "s")
    assert (view.count, view.branches) == (3, ("c",))


async def test_a_session_stored_without_a_tally_is_counted_once_then_kept(store: Store) -> None:
    """Sessions written before commits kept their entry count and branches in the meta are counted on first
    use; after that neither a read nor a commit counts a session's entries (a long session costs no more)."""
    await store.commit(write(number=1), Replies())
    await store.commit(write(number=2, thought="B.", branch_id="b"), Replies())
    async with store.backend.transaction(write=True) as tx:  # as an older thinking-hats left it
        await tx.run("UPDATE sessions SET meta = '{}' WHERE id = 's'")
    assert (await store.read("alice", TOOL, "s")).count == 2

    third = await store.commit(write(number=3), Replies())
    assert (third.count, third.branches) == (3, ("b",))

    statements: list[str] = []
    transaction = store.backend.transaction

    @asynccontextmanager
    async def recording(write: bool) -> AsyncIterator[Any]:
        async with transaction(write) as tx:
            rows, run = tx.rows, tx.run

            async def rows_(sql: str, params: Any = ()) -> Any:
                statements.append(sql)
                return await rows(sql, params)

            async def run_(sql: str, params: Any = ()) -> Any:
                statements.append(sql)
                return await run(sql, params)

            tx.rows, tx.run = rows_, run_  # type: ignore[method-assign]
            yield tx

    store.backend.transaction = recording  # type: ignore[method-assign]
    view = await store.read("alice", TOOL, "s")
    fourth = await store.commit(write(number=4, existed=True), Replies())

    assert (view.count, view.branches, fourth.count, fourth.branches) == (3, ("b",), 4, ("b",))
    assert not [sql for sql in statements if "count(" in sql or "GROUP BY" in sql]


# --- retention ---


async def test_the_cap_evicts_the_least_recently_used_session_not_the_oldest(store: Store, clock: Clock) -> None:
    for at, session in ((0, "a"), (10, "b"), (20, "c"), (30, "d"), (35, "a")):
        clock.now = 1_000_000.0 + at
        await store.commit(write(session, number=2 if at == 35 else 1), Replies())
    clock.now = 1_001_000.0

    removed = await store.prune(retention_seconds=10**9, max_sessions=3, grace_seconds=60)

    assert removed == 1
    assert sorted(s.id for s in await store.sessions("alice")) == ["a", "c", "d"]  # "a" was used again


async def test_one_principals_sessions_never_make_room_for_anothers(store: Store, clock: Clock) -> None:
    clock.now = 1_000_000.0
    await store.commit(write("alice-1", principal="alice"), Replies())  # the oldest session in the store
    for n in range(200):  # the red team's flood: 200 stateless calls, each a new session
        clock.now = 1_000_001.0 + n
        await store.commit(write(f"bob-{n}", principal="bob"), Replies())
    clock.now = 1_001_000.0

    removed = await store.prune(retention_seconds=10**9, max_sessions=5, grace_seconds=0)

    assert [s.id for s in await store.sessions("alice")] == ["alice-1"]  # within its own cap: untouched
    assert sorted(s.id for s in await store.sessions("bob")) == sorted(f"bob-{n}" for n in range(195, 200))
    assert removed == 195


async def test_a_principal_beyond_its_own_cap_loses_its_least_recently_used_sessions(
    store: Store, clock: Clock
) -> None:
    for n, principal in enumerate(["alice", "bob", "alice", "bob", "alice", "alice"]):
        clock.now = 1_000_000.0 + n
        await store.commit(write(f"{principal}-{n}", principal=principal), Replies())
    clock.now = 1_001_000.0

    removed = await store.prune(retention_seconds=10**9, max_sessions=1000, grace_seconds=0, per_principal=2)

    assert removed == 2
    assert sorted(s.id for s in await store.sessions("alice")) == ["alice-4", "alice-5"]
    assert sorted(s.id for s in await store.sessions("bob")) == ["bob-1", "bob-3"]
    view = await store.read("alice", TOOL, "alice-0")
    assert view.evicted is not None and "THINKING_MAX_SESSIONS_PER_PRINCIPAL" in view.evicted.reason


async def test_the_cap_never_evicts_a_session_used_within_the_grace_period(store: Store, clock: Clock) -> None:
    for at, session in ((950, "a"), (960, "b"), (990, "c")):
        clock.now = at
        await store.commit(write(session), Replies())
    clock.now = 1000

    assert await store.prune(retention_seconds=10**9, max_sessions=1, grace_seconds=60) == 0
    assert len(await store.sessions("alice")) == 3  # over the cap for now: all three are in use

    clock.now = 1049  # a and b are past the grace period, c is not
    assert await store.prune(retention_seconds=10**9, max_sessions=1, grace_seconds=60) == 2
    assert [s.id for s in await store.sessions("alice")] == ["c"]


async def test_an_evicted_session_reads_as_evicted_to_its_principal_only(store: Store, clock: Clock) -> None:
    clock.now = 1000
    await store.commit(write("old"), Replies())
    clock.now = 5000
    await store.commit(write("new"), Replies())
    await store.prune(retention_seconds=10**9, max_sessions=1, grace_seconds=60)

    view = await store.read("alice", TOOL, "old")
    assert view.session is None and view.evicted is not None
    assert (view.evicted.id, view.evicted.tool, view.evicted.at) == ("old", TOOL, 5000)
    assert "THINKING_MAX_SESSIONS" in view.evicted.reason
    assert (await store.read("bob", TOOL, "old")).evicted is None
    assert (await store.read("alice", TOOL, "never-existed")).evicted is None


async def test_retention_deletes_idle_sessions_and_later_their_tombstones(store: Store, clock: Clock) -> None:
    clock.now = 0
    await store.commit(write("idle", connection="c1"), Replies())
    clock.now = 950
    await store.commit(write("busy"), Replies())
    clock.now = 1000

    assert await store.prune(retention_seconds=100, max_sessions=1000, grace_seconds=0) == 1
    gone = await store.read("alice", TOOL, "idle")
    assert [s.id for s in await store.sessions("alice")] == ["busy"]
    assert gone.evicted is not None and "THINKING_RETENTION_DAYS" in gone.evicted.reason
    assert (await store.read("alice", TOOL, None, connection="c1")).session_id is None  # its default went too

    clock.now = 1101  # the tombstone has been kept for one retention period
    await store.prune(retention_seconds=100, max_sessions=1000, grace_seconds=0)
    assert (await store.read("alice", TOOL, "idle")).evicted is None


async def test_a_default_in_use_is_rewritten_hourly_and_kept_while_its_session_lives(
    store: Store, clock: Clock
) -> None:
    clock.now = 0
    await store.commit(write("kept", connection="c1"), Replies())
    for number, at in ((2, 900), (3, 1800), (4, 5000)):  # the connection keeps using its session
        clock.now = at
        view = await store.read("alice", TOOL, None, connection="c1")
        await store.commit(
            write("kept", number=number, connection="c1", existed=True, default_at=view.default_at), Replies()
        )
    # Written at 0, kept through 900 and 1800 (under an hour old), rewritten at 5000.
    assert (await store.read("alice", TOOL, None, connection="c1")).default_at == 5000

    clock.now = 5000 + 86400 * 0.5
    await store.commit(write("kept", number=5, existed=True), Replies())  # named by id: the default is not touched
    assert await store.prune(retention_seconds=18000, max_sessions=1000, grace_seconds=0) == 0
    # The default's time (5000) is older than the retention period; its session is not.
    assert (await store.read("alice", TOOL, None, connection="c1")).session_id == "kept"


# --- across Store instances (processes) ---


async def test_a_connections_default_session_survives_into_another_store_instance(stores: Opener) -> None:
    first = await stores()
    await first.commit(write("s1", connection="conn-1"), Replies())
    await first.commit(write("s2", tool="crash", connection="conn-1"), Replies())
    await first.close()

    second = await stores()
    assert (await second.read("alice", TOOL, None, connection="conn-1")).session_id == "s1"
    assert (await second.read("alice", "crash", None, connection="conn-1")).session_id == "s2"
    assert (await second.read("bob", TOOL, None, connection="conn-1")).session_id is None
    assert (await second.read("alice", TOOL, None, connection="conn-2")).session_id is None


async def test_the_store_records_its_schema_version(store: Store) -> None:
    async with store.backend.transaction(write=False) as tx:
        rows = await tx.rows("SELECT version FROM schema_version")

    assert rows == [(_schema.VERSION,)] and _schema.VERSION == 4  # 4: reservations and the web view's progress
    assert (await store.ping())["schema"] == _schema.VERSION
    assert (await store.health())["schema"] == _schema.VERSION


async def test_concurrent_commits_from_several_stores_to_one_new_session_all_land_once(stores: Opener) -> None:
    writers, each = 4, 10
    opened = [await stores() for _ in range(writers)]

    async def append(index: int, store: Store) -> list[bool]:
        done = []
        for k in range(each):
            committed = await store.commit(
                write("race", number=k + 1, thought=f"writer {index} thought {k}"), Replies()
            )
            done.append(committed.replayed)
        return done

    results = await asyncio.gather(*(append(i, s) for i, s in enumerate(opened)))
    found = await opened[0].session("alice", "race")

    assert not any(replayed for done in results for replayed in done)
    assert found is not None
    entries = found[1]
    assert [e.seq for e in entries] == list(range(1, writers * each + 1))
    texts = [e.data["thought"] for e in entries]
    assert sorted(texts) == sorted(f"writer {i} thought {k}" for i in range(writers) for k in range(each))
    assert [e.reply["reply"]["count"] for e in entries] == list(range(1, writers * each + 1))


async def test_a_retry_racing_its_original_from_another_store_is_stored_once(stores: Opener) -> None:
    one, two = await stores(), await stores()
    await one.commit(write("dup", number=1), Replies())  # an existing session: creating it serialises nothing

    results = await asyncio.gather(*(s.commit(write("dup", number=2), Replies()) for s in (one, two, one, two)))

    assert sorted(r.replayed for r in results) == [False, True, True, True]
    assert await seqs(one, "dup") == [1, 2]


async def test_a_session_evicted_by_another_process_during_a_commit_is_reported_not_a_crash(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL only (SQLite's write lock covers the whole commit): another replica's prune deletes the session
    between the commit's upsert of it and its row lock."""
    import psycopg

    from thinking_hats.store import postgres

    store = await open_store(postgres_url)
    await store.commit(write("old"), Replies())
    run = postgres._PostgresTx.run

    async def run_then_evict(self: Any, sql: str, params: Any = ()) -> int:
        done = await run(self, sql, params)
        if sql.startswith("INSERT INTO sessions"):  # the upsert found the session: now another process prunes it
            async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as other:
                await other.execute("DELETE FROM sessions WHERE id = 'old'")
        return done

    monkeypatch.setattr(postgres._PostgresTx, "run", run_then_evict)
    try:
        with pytest.raises(StoreError, match="'old' was evicted while this call was being recorded"):
            await store.commit(write("old", number=2), Replies())
        monkeypatch.undo()
        assert await store.session("alice", "old") is None  # nothing was recorded
    finally:
        await store.close()


async def test_a_session_evicted_between_the_read_and_the_commit_is_reported_not_recreated_empty(
    store: Store, clock: Clock
) -> None:
    await store.commit(write("long-call"), Replies())
    view = await store.read("alice", TOOL, "long-call")  # the call reads its session, then waits on the model...
    clock.now += 10 * 86400
    assert await store.prune(retention_seconds=86400, max_sessions=100, grace_seconds=0) == 1  # ...meanwhile

    with pytest.raises(StoreError, match="'long-call' was evicted while this thought was being analysed"):
        await store.commit(write("long-call", number=2, existed=view.session is not None), Replies())
    assert await store.session("alice", "long-call") is None
    assert (await store.read("alice", TOOL, "long-call")).evicted is not None


def test_a_process_opening_a_new_file_while_another_holds_its_lock_waits_rather_than_fails(tmp_path: Path) -> None:
    """Two servers started at once on a new data directory both switch the file to WAL; the switch does not use
    SQLite's busy wait, so the second used to fail with 'database is locked'."""
    from concurrent.futures import ThreadPoolExecutor, wait

    from thinking_hats.store.sqlite import open_sqlite

    path = tmp_path / "new.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)  # the other process, mid-way through its own switch
    holder.execute("BEGIN IMMEDIATE")
    with ThreadPoolExecutor(1) as pool:
        opening = pool.submit(open_sqlite, path)
        done, _ = wait([opening], timeout=0.5)
        assert not done  # still waiting for the lock, not failed
        holder.execute("ROLLBACK")
        backend = opening.result(timeout=30)
    holder.close()

    asyncio.run(backend.close())
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_a_postgresql_read_is_one_read_only_snapshot_and_a_write_is_not(postgres_url: str) -> None:
    store = await open_store(postgres_url)
    try:
        for write, isolation, read_only in ((False, "repeatable read", "on"), (True, "read committed", "off")):
            async with store.backend.transaction(write=write) as tx:
                assert (await tx.rows("SHOW transaction_isolation"))[0][0] == isolation
                assert (await tx.rows("SHOW transaction_read_only"))[0][0] == read_only
    finally:
        await store.close()


async def test_a_pooled_connection_back_within_a_second_is_handed_out_unpinged_and_an_idle_one_is_pinged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from thinking_hats.store import postgres

    class Conn: ...

    class Clock:
        now = 100.0

        @classmethod
        def monotonic(cls) -> float:
            return cls.now

    pinged: list[Conn] = []

    async def ping(conn: Conn) -> None:
        pinged.append(conn)

    monkeypatch.setattr(postgres, "time", Clock)
    liveness, conn = postgres._Liveness(ping), Conn()
    await liveness.check(conn)  # never used: pinged
    await liveness.returned(conn)
    Clock.now += 0.5
    await liveness.check(conn)  # just used: not pinged
    Clock.now += 1.0
    await liveness.check(conn)  # idle for 1.5 s: pinged

    assert pinged == [conn, conn]
