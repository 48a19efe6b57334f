"""What the hats see of a session: exactly the last THINKING_CONTEXT_THOUGHTS thoughts before the current one (and
the previous synthesis only when that window is open), never a thought whose call was abandoned. Asserted on the
prompt text the model actually received."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from typing import Any

import pytest
from mcp import Client

from fakes import FakeLLM, Hold, Seen
from thinking_hats.server import build_server

TOOL = "sequentialthinking"
MARK = re.compile(r"clue-(\d+)\b")  # in every thought's text: which thoughts a prompt carries
VERDICT = re.compile(r"verdict-(\d+)\b")  # in every model answer: which syntheses a prompt carries


def thought(number: int, total: int = 10, **extra: Any) -> dict[str, Any]:
    return {
        "thought": f"Step {number}: check the next log file for the timeout pattern (clue-{number}).",
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": True,
        "sessionId": "window",
        "strategy": "single",
        **extra,
    }


def answer_with_verdicts(llm: FakeLLM) -> None:
    """Each answer names the call it answers, so a later prompt shows which synthesis it carries."""
    llm.answer = lambda seen: f"[{seen.role}] verdict-{len(llm.history)}: keep going."


def carried(seen: Seen, current: int) -> list[int]:
    """The earlier thoughts a prompt carries, in the order it gives them."""
    return [int(n) for n in MARK.findall(seen.user) if int(n) != current]


async def until(condition: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("window", [0, 1, 3, 5])
async def test_the_hats_receive_exactly_the_last_context_thoughts_before_the_current_one(
    openai_llm: FakeLLM, window: int
) -> None:
    answer_with_verdicts(openai_llm)
    last = window + 2  # thought numbers below, at and above the window
    async with Client(build_server(openai_llm.settings(thinking_context_thoughts=window))) as client:
        for number in range(1, last + 1):
            result = await client.call_tool(TOOL, thought(number))
            assert not result.is_error

    prompts = openai_llm.history
    assert len(prompts) == last  # one model call per thought (strategy single)
    for number, seen in enumerate(prompts, start=1):
        assert f"clue-{number}" in seen.user
        expected = list(range(max(1, number - window), number))
        assert carried(seen, number) == expected, f"thought {number}, window {window}: {seen.user}"
        # The previous thought's synthesis comes with the window, and only with it.
        verdicts = [int(v) for v in VERDICT.findall(seen.user)]
        assert verdicts == ([number - 1] if window and number > 1 else []), seen.user
        if not window:
            assert "Recent thoughts" not in seen.user and "Previous synthesis" not in seen.user


async def test_a_thought_whose_call_was_abandoned_never_reaches_a_later_prompt(openai_llm: FakeLLM) -> None:
    answer_with_verdicts(openai_llm)
    hold = Hold()
    async with Client(build_server(openai_llm.settings(thinking_context_thoughts=3))) as client:
        for number in (1, 2):
            await client.call_tool(TOOL, thought(number))
        openai_llm.enqueue("*", hold)
        abandoned = {**thought(3), "thought": "A dead end the client gave up on (clue-99)."}
        call = asyncio.create_task(client.call_tool(TOOL, abandoned))
        await asyncio.wait_for(hold.all_arrived.wait(), 10)
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call
        await until(lambda: hold.cancelled == 1)
        for number in (3, 4):
            result = await client.call_tool(TOOL, thought(number))
            assert not result.is_error

    later = openai_llm.history[3:]
    assert [carried(seen, n) for seen, n in zip(later, (3, 4), strict=True)] == [[1, 2], [1, 2, 3]]
    assert all("clue-99" not in seen.user for seen in later)
