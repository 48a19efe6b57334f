"""What the web view reads and writes in the store, on both backends: pages of sessions, a session's entries since
the last one shown, a thought's progress in flight; and how the chain marks refused and failed thoughts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from thinking_hats.store import Store, Write, open_store
from thinking_hats.tools.chain import chain_of, mermaid, svg


@pytest.fixture(params=["sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    where = (
        (None, tmp_path / "s.sqlite3") if request.param == "sqlite" else (request.getfixturevalue("postgres_url"), None)
    )
    opened = await open_store(*where)
    yield opened
    await opened.close()


def reply(**fields: Any) -> Any:
    return lambda count, branches: {"reply": {"mode": "augmented", **fields}, "markdown": "", "is_error": False}


async def write(store: Store, principal: str, session: str, number: int, **data: Any) -> None:
    await store.commit(
        Write(
            principal,
            session,
            "sequentialthinking",
            number,
            data.pop("branch", None),
            {"thought": f"t{number}", **data},
        ),
        reply(analysis={"strategy": "single"}),
    )


async def test_pages_of_sessions_follow_a_keyset_cursor_newest_first_and_only_the_principals(store: Store) -> None:
    for i in range(7):
        await write(store, "alice", f"a{i}", 1)
    await write(store, "bob", "b0", 1)
    first = await store.page("alice", 3)
    assert [s.id for s, _, _ in first] == ["a6", "a5", "a4"]
    assert all(count == 1 and text == "t1" for _, count, text in first)
    last = first[-1][0]
    second = await store.page("alice", 3, (last.updated, last.id))
    assert [s.id for s, _, _ in second] == ["a3", "a2", "a1"]
    assert [s.id for s, _, _ in await store.page("bob", 10)] == ["b0"]


async def test_entries_since_a_seq_and_the_progress_of_the_thought_in_flight(store: Store) -> None:
    for n in (1, 2, 3):
        await write(store, "alice", "plan", n)
    assert await store.since("bob", "plan", 0) is None  # another principal's: not found
    found = await store.since("alice", "plan", 2)
    assert found is not None
    session, entries, progress = found
    assert [e.seq for e in entries] == [2, 3] and progress is None
    await store.note_progress("alice", "plan", {"number": 4, "done": 1, "total": 3, "steps": ["factual hat done"]})
    await store.note_progress("alice", "plan", {"number": 4, "done": 2, "total": 3, "steps": ["a", "b"]})
    found = await store.since("alice", "plan", 3)
    assert found is not None and found[2] is not None
    assert found[2]["done"] == 2 and found[2]["steps"] == ["a", "b"] and found[2]["updated"] > session.updated


async def test_the_chain_marks_refused_and_failed_thoughts_and_draws_revisions_and_branches(store: Store) -> None:
    await write(store, "alice", "c", 1)
    await store.commit(
        Write("alice", "c", "sequentialthinking", 2, None, {"thought": "over the limit"}),
        reply(analysis={"strategy": "double"}, limitReached={"limit": 10}),
    )
    await store.commit(
        Write("alice", "c", "sequentialthinking", 3, None, {"thought": "nothing worked"}),
        lambda count, branches: {"reply": {"mode": "augmented", "analysis": {"strategy": "triple"}}, "is_error": True},
    )
    await write(store, "alice", "c", 4, is_revision=True, revises_thought=2)
    await write(store, "alice", "c", 2, branch="alt", branch_from_thought=1, branch_id="alt")
    found = await store.session("alice", "c")
    assert found is not None
    chain = chain_of(found[1])
    assert [(n.number, n.strategy, n.status, n.lane) for n in chain.nodes] == [
        (1, "single", "ok", 0), (2, "double", "refused", 0), (3, "triple", "failed", 0), (4, "single", "ok", 0),
        (2, "single", "ok", 1),
    ]  # fmt: skip
    assert {(e.source, e.target, e.kind) for e in chain.edges} == {
        (1, 2, "next"), (2, 3, "next"), (3, 4, "next"), (4, 2, "revision"), (1, 5, "branch"),
    }  # fmt: skip
    drawn = svg(chain)
    assert 'class="node refused s-double"' in drawn and 'class="node failed s-triple"' in drawn
    assert "#2 double · refused" in drawn and "branch alt" in drawn
    assert '  t2["2 #183; double refused#58; over the limit"]' in mermaid(chain)
