"""Storage is bounded per principal: the session cap holds during the grace period too (a new session over it
takes the place of one idle past the grace period, or is refused), thoughts recorded over a limit are bounded
per day, and eviction tombstones are capped as well as pruned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from calls import text_of
from fakes import FakeLLM
from thinking_hats import store as store_module
from thinking_hats.config import Settings
from thinking_hats.server import build_server
from thinking_hats.store import LOCAL, Write, open_store

TOOL = "sequentialthinking"


def thought(session: str, number: int = 1, **extra: Any) -> dict[str, Any]:
    return {"thought": f"note {number} for {session}", "thoughtNumber": number, "totalThoughts": 9,
            "nextThoughtNeeded": True, "sessionId": session, **extra}  # fmt: skip


async def count(settings: Settings, table: str) -> int:
    store = await open_store(None, settings.database_path())
    try:
        async with store.backend.transaction(write=False) as tx:
            return int((await tx.rows(f"SELECT count(*) FROM {table}"))[0][0])
    finally:
        await store.close()


async def test_a_principal_at_its_session_cap_cannot_open_another_while_all_are_in_use(tmp_path: Path) -> None:
    settings = Settings(thinking_data_dir=tmp_path, thinking_max_sessions_per_principal=3, disable_thought_logging=True)
    async with Client(build_server(settings)) as client:
        for n in range(3):
            assert not (await client.call_tool(TOOL, thought(f"s{n}"))).is_error
        refused = await client.call_tool(TOOL, thought("s3"))
        kept = await client.call_tool(TOOL, thought("s0", 2))  # an existing session goes on as ever

    assert refused.is_error
    assert "THINKING_MAX_SESSIONS_PER_PRINCIPAL=3" in text_of(refused) and "grace" in text_of(refused).lower()
    assert not kept.is_error
    assert await count(settings, "sessions") == 3  # before: 4, and as many more as asked within the grace


async def test_a_new_session_over_the_cap_takes_the_place_of_one_idle_past_the_grace_period(tmp_path: Path) -> None:
    settings = Settings(
        thinking_data_dir=tmp_path,
        thinking_max_sessions_per_principal=2,
        thinking_session_grace_minutes=0,
        disable_thought_logging=True,
    )
    async with Client(build_server(settings)) as client:
        for name in ("old", "mid", "new"):
            assert not (await client.call_tool(TOOL, thought(name))).is_error
        gone = await client.call_tool(TOOL, thought("old", 2))

    assert await count(settings, "sessions") == 2
    assert gone.is_error and "was evicted" in text_of(gone) and "THINKING_MAX_SESSIONS_PER_PRINCIPAL" in text_of(gone)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_tombstones_are_capped_per_principal_as_sessions_are(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres_url") if backend == "postgresql" else None
    store = await open_store(url, tmp_path / "s.sqlite3")
    try:
        for n in range(8):  # a cap of 2, no grace: each new session evicts the oldest
            write = Write("mallory", f"m{n}", TOOL, 1, None, {"thought": "x"}, cap=2, grace_s=0)
            await store.commit(write, lambda c, b: {})
        async with store.backend.transaction(write=True) as tx:  # tombstones from before the cap, all fresh
            await tx.many(
                "INSERT INTO evictions(principal, id, tool, at, reason) VALUES (?, ?, ?, ?, ?)",
                [("mallory", f"old{n}", TOOL, 1e12, "test") for n in range(50)],
            )
        await store.prune(365 * 86400, 1000, 0, per_principal=2)
        async with store.backend.transaction(write=False) as tx:
            sessions = (await tx.rows("SELECT count(*) FROM sessions WHERE principal = 'mallory'"))[0][0]
            tombstones = (await tx.rows("SELECT count(*) FROM evictions WHERE principal = 'mallory'"))[0][0]
    finally:
        await store.close()
    assert (sessions, tombstones) == (2, 2)  # before: 6 tombstones kept by the commits, 56 after the insert


async def test_thoughts_recorded_over_a_limit_are_bounded_per_day(
    openai_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "REFUSED_KEPT_PER_DAY", 2)
    settings = openai_llm.settings(thinking_data_dir=tmp_path, thinking_principal_calls_per_minute=1)
    async with Client(build_server(settings)) as client:
        replies = [await client.call_tool(TOOL, thought("busy", n, strategy="single")) for n in range(1, 5)]

    paid, *refused, dropped = replies
    assert paid.structured_content["mode"] == "augmented"
    assert all(r.structured_content["limitReached"] is not None for r in refused)
    assert dropped.is_error and "not recorded" in text_of(dropped) and "2 thoughts" in text_of(dropped)
    store = await open_store(None, settings.database_path())
    try:
        found = await store.session(LOCAL, "busy")
        [day] = await store.usage(LOCAL)
    finally:
        await store.close()
    assert found is not None and [e.number for e in found[1]] == [1, 2, 3]
    assert day.refusals == 2
