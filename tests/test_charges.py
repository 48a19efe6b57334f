"""Every model call is charged, once, whatever happens to its thought: the charge is written in a store
transaction of its own as the call ends, so a thought that then fails to save (its session taken by the other
tool, evicted, the store locked) still pays, a client that leaves mid-call pays the input it sent, and a retried
thought answered from the store pays nothing. Through the real stack: an MCP client, our server, agno and the
OpenAI SDK, with the provider faked at the HTTP layer."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from mcp import Client

from calls import step, text_of
from fakes import FakeLLM, Hold
from thinking_hats.config import Settings
from thinking_hats.ops.ledger import drain
from thinking_hats.server import build_server
from thinking_hats.store import LOCAL, DayUsage, open_store

TOOL = "sequentialthinking"


def thought(text: str, number: int = 1, session: str = "s", **extra: Any) -> dict[str, Any]:
    return {
        "thought": text,
        "thoughtNumber": number,
        "totalThoughts": 3,
        "nextThoughtNeeded": True,
        "sessionId": session,
        "strategy": "single",
        **extra,
    }


async def usage_of(settings: Settings) -> DayUsage | None:
    store = await open_store(settings.postgres_url(), settings.database_path())
    try:
        rows = await store.usage(LOCAL)
    finally:
        await store.close()
    return rows[0] if rows else None


async def until_charged(settings: Settings, done: Callable[[DayUsage], bool], seconds: float = 20) -> DayUsage:
    """The principal's usage once `done` holds of it (charges are written by tasks of their own)."""
    deadline = time.monotonic() + seconds
    while True:
        row = await usage_of(settings)
        if row is not None and done(row):
            return row
        assert time.monotonic() < deadline, f"usage never got there: {row}"
        await asyncio.sleep(0.02)


def reported(llm: FakeLLM) -> tuple[int, int]:
    """The input and output tokens the fake provider reported for every request it answered."""
    calls = llm.history
    return sum(max(1, c.prompt_chars // 4) for c in calls), sum(max(1, len(llm.answer(c)) // 4) for c in calls)


async def held_thought(
    llm: FakeLLM, client: Client, call: dict[str, Any], meanwhile: Callable[[], Awaitable[None]]
) -> Any:
    """Send `call`, park its model request, run `meanwhile`, then let the model answer: the tool's result."""
    hold = Hold()
    llm.enqueue("*", hold)
    sent = asyncio.ensure_future(client.call_tool(TOOL, call))
    await hold.all_arrived.wait()
    await meanwhile()
    hold.release()
    return await sent


async def test_a_thought_whose_new_session_the_crash_tool_took_meanwhile_is_still_charged(
    openai_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = openai_llm.settings(thinking_data_dir=tmp_path)
    async with Client(build_server(settings)) as client:

        async def crash_takes_the_id() -> None:
            await client.call_tool("crash", step(1, session_id="race"))

        lost = await held_thought(
            openai_llm, client, thought("Which cache to drop first?", session="race"), crash_takes_the_id
        )

    assert lost.is_error and "belongs to the crash tool" in text_of(lost)  # not saved: the id is crash's now
    row = await until_charged(settings, lambda r: r.calls == 1)
    # Charged in full (before: calls 0, tokens 0): what the provider reported for the one request made.
    assert (row.input_tokens, row.output_tokens) == reported(openai_llm)
    assert (row.thoughts, row.refusals) == (1, 0)  # the crash step; the lost thought was never recorded


async def test_a_thought_whose_session_was_evicted_meanwhile_is_still_charged(
    openai_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = openai_llm.settings(thinking_data_dir=tmp_path)
    async with Client(build_server(settings)) as client:
        await client.call_tool(TOOL, thought("Start with the slow query log.", session="ev"))

        async def evict() -> None:
            store = await open_store(None, settings.database_path())
            try:
                assert await store.prune(0, 1000, 0) == 1  # idle past a retention of 0 s: the session goes
            finally:
                await store.close()

        lost = await held_thought(openai_llm, client, thought("Then the lock waits.", 2, session="ev"), evict)

    assert lost.is_error and "evicted" in text_of(lost)
    row = await until_charged(settings, lambda r: r.calls == 2)
    assert (row.input_tokens, row.output_tokens) == reported(openai_llm)  # before: the second call was lost


async def test_a_thought_that_meets_a_locked_store_at_save_time_is_still_charged(
    openai_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = openai_llm.settings(thinking_data_dir=tmp_path, thinking_store_lock_timeout=0.2)
    blocker: sqlite3.Connection | None = None
    async with Client(build_server(settings)) as client:
        await client.call_tool(TOOL, thought("Is the index used at all?", session="busy"))

        async def lock_the_store() -> None:
            nonlocal blocker
            blocker = sqlite3.connect(settings.database_path(), isolation_level=None)
            blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock past the lock timeout

        lost = await held_thought(
            openai_llm, client, thought("Or is it the planner?", 2, session="busy"), lock_the_store
        )
        assert blocker is not None
        blocker.execute("ROLLBACK")  # the blip passes
        blocker.close()

    assert lost.is_error and "THINKING_STORE_LOCK_TIMEOUT" in text_of(lost)
    row = await until_charged(settings, lambda r: r.calls == 2)
    assert (row.input_tokens, row.output_tokens) == reported(openai_llm)


async def test_a_client_that_leaves_mid_call_is_charged_the_input_tokens_it_sent(
    openai_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = openai_llm.settings(thinking_data_dir=tmp_path, thinking_synthesis="merge")
    hold = Hold(expected=2)
    openai_llm.enqueue("*", hold, hold)
    async with Client(build_server(settings)) as client:
        call = asyncio.ensure_future(
            client.call_tool(TOOL, thought("Split the team or the service?", strategy="double"))
        )
        await hold.all_arrived.wait()
        call.cancel()  # the client leaves while both hats are thinking
        with contextlib.suppress(asyncio.CancelledError):
            await call
        row = await until_charged(settings, lambda r: r.calls == 2)

    sent = sum(max(1, c.prompt_chars // 4) for c in openai_llm.history)  # what the provider counts as input
    assert row.input_tokens >= sent > 0  # before: 0 tokens, only the calls
    assert row.output_tokens == 0 and row.thoughts == 0


async def test_a_reply_without_usage_is_charged_at_least_the_input_tokens_sent(
    openai_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = openai_llm.settings(thinking_data_dir=tmp_path)
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Look at the pool."}, "finish_reason": "stop"}
        ],
    }  # no "usage": some gateways leave it out
    openai_llm.enqueue("*", httpx.Response(200, json=completion))
    async with Client(build_server(settings)) as client:
        result = await client.call_tool(TOOL, thought("Why are the workers idle?"))

    assert not result.is_error
    row = await until_charged(settings, lambda r: r.calls == 1)
    [seen] = openai_llm.history
    assert row.input_tokens >= max(1, seen.prompt_chars // 4)


async def test_a_retried_thought_answered_from_the_store_pays_nothing_and_no_call_is_charged_twice(
    openai_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = openai_llm.settings(thinking_data_dir=tmp_path)
    call = thought("Weigh the offer against building it.", strategy="double")
    async with Client(build_server(settings)) as client:
        first = await client.call_tool(TOOL, call)
        await drain()
        retried = await client.call_tool(TOOL, call)
        await drain()

    assert retried.structured_content["replayed"] and retried.structured_content["usage"]["llmCalls"] == 0
    row = await usage_of(settings)
    assert row is not None
    paid = first.structured_content["usage"]
    # Each call once: written as it ended, never again by the thought's own transaction, nor by the retry.
    assert row.calls == paid["llmCalls"] == len(openai_llm.history) == 3
    assert (row.input_tokens, row.output_tokens) == (paid["inputTokens"], paid["outputTokens"])
    assert (row.input_tokens, row.output_tokens) == reported(openai_llm)
    assert row.thoughts == 1
