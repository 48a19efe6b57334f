"""Exactly-once thoughts, through a real MCP client: a replay costs nothing and says so, a retry after a failed
model call runs the model again and replaces the failed attempt, and a call abandoned mid-model-call leaves
nothing behind."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from mcp import Client

from calls import read_json, text_of
from fakes import FakeLLM, Hold
from thinking_hats.server import build_server

TOOL = "sequentialthinking"
ZERO_USAGE = {"llmCalls": 0, "inputTokens": 0, "outputTokens": 0, "cachedInputTokens": 0, "cacheCreationTokens": 0}


def thought(text: str, number: int, **extra: Any) -> dict[str, Any]:
    return {
        "thought": text,
        "thoughtNumber": number,
        "totalThoughts": 3,
        "nextThoughtNeeded": True,
        "sessionId": "once",
        "strategy": "single",
        **extra,
    }


async def until(condition: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


async def test_a_replayed_call_makes_no_model_call_and_reports_zero_new_usage(openai_llm: FakeLLM) -> None:
    call = thought("Should we stagger the export and the archive, given the SLA?", 1, strategy="double")
    async with Client(build_server(openai_llm.settings())) as client:
        original = await client.call_tool(TOOL, call)
        paid = len(openai_llm.history)
        replayed = await client.call_tool(TOOL, call)
        session = await read_json(client, "thinking://sessions/once")

    assert paid == 3  # two hats and the synthesis
    assert len(openai_llm.history) == paid  # the replay called no model
    first, again = original.structured_content, replayed.structured_content
    assert first is not None and again is not None
    assert first["usage"]["llmCalls"] == 3
    assert again["usage"] == ZERO_USAGE
    assert first["replayed"] is False and again["replayed"] is True
    assert again == first | {"usage": ZERO_USAGE, "replayed": True}  # the same answer, at no new cost
    assert text_of(replayed) == text_of(original)
    assert [e["number"] for e in session["entries"]] == [1]
    assert session["usage"]["llmCalls"] == 3  # the session's running total counts the thought once


async def test_a_retry_after_a_failed_model_call_runs_the_model_again_and_replaces_the_failed_reply(
    openai_llm: FakeLLM,
) -> None:
    openai_llm.enqueue("*", 500)  # the first attempt's only model call fails; later calls are answered
    call = thought("Is the archive job the cause of the failures?", 1)
    async with Client(build_server(openai_llm.settings(thinking_max_retries=0))) as client:
        failed = await client.call_tool(TOOL, call)
        after_failure = len(openai_llm.history)
        retried = await client.call_tool(TOOL, call)
        session = await read_json(client, "thinking://sessions/once")

    assert failed.is_error and "500 from openai" in text_of(failed)
    assert after_failure == 1
    assert not retried.is_error, text_of(retried)
    assert len(openai_llm.history) == 2  # the retry ran the model again
    reply = retried.structured_content
    assert reply is not None and reply["replayed"] is False and reply["usage"]["llmCalls"] == 1
    assert reply["analysis"]["synthesis"] and reply["thoughtHistoryLength"] == 1
    (entry,) = session["entries"]  # exactly one thought stored
    assert entry["number"] == 1 and entry["reply"] == reply  # the failed reply was replaced
    assert session["usage"]["llmCalls"] == 2  # both attempts were paid for


async def test_a_call_abandoned_mid_model_call_stores_nothing_and_its_retry_stores_it_once(
    openai_llm: FakeLLM,
) -> None:
    hold = Hold()
    async with Client(build_server(openai_llm.settings())) as client:
        await client.call_tool(TOOL, thought("List what runs on the 1st.", 1))
        openai_llm.enqueue("*", hold)
        call = asyncio.create_task(client.call_tool(TOOL, thought("The archive holds a lock.", 2)))
        await asyncio.wait_for(hold.all_arrived.wait(), 10)
        call.cancel()  # the client gives up while the model is still thinking
        with contextlib.suppress(asyncio.CancelledError):
            await call
        await until(lambda: hold.cancelled == 1)  # the server abandoned the model call too
        abandoned = await read_json(client, "thinking://sessions/once")
        retried = await client.call_tool(TOOL, thought("The archive holds a lock.", 2))
        stored = await read_json(client, "thinking://sessions/once")

    assert [e["number"] for e in abandoned["entries"]] == [1]
    assert abandoned["usage"]["llmCalls"] == 1
    assert not retried.is_error and retried.structured_content is not None
    assert retried.structured_content["replayed"] is False and retried.structured_content["thoughtHistoryLength"] == 2
    assert [e["number"] for e in stored["entries"]] == [1, 2]
