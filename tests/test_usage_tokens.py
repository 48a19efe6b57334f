"""Token usage counts cached prompt tokens the same way on every wire format, and shows them."""

from __future__ import annotations

import json
from collections.abc import Callable

from mcp import Client

from conftest import Build
from fakes import FakeLLM
from thinking_hats.analysis import ThoughtContext, Usage
from thinking_hats.routing.router import route
from thinking_hats.server import build_server

QUESTION = ThoughtContext(
    thought="Should we cache the rendered invoices, given how often the templates change and what a miss costs?",
    thought_number=1,
    total_thoughts=3,
)
CACHED, WRITTEN = 120, 30  # of each prompt's tokens: read from / written to the provider's prompt cache


def prompt_tokens(llm: FakeLLM) -> int:
    """The whole prompt of every request, as the fake counts it before splitting off what was cached."""
    return sum(max(1, seen.prompt_chars // 4) for seen in llm.history)


async def test_input_tokens_include_cached_and_cache_written_tokens_on_every_wire_format(
    any_llm: FakeLLM, build: Build
) -> None:
    any_llm.cached_tokens, any_llm.cache_creation_tokens = CACHED, WRITTEN
    orchestrator = build(any_llm.settings())

    outcome = await orchestrator.analyse(QUESTION, route(QUESTION, 0.5, "double"), None)

    calls = len(any_llm.history)
    assert calls == 3
    # Anthropic reports input_tokens without the cached part, OpenAI with it: both come out as the whole prompt.
    assert outcome.usage.input_tokens == prompt_tokens(any_llm)
    assert outcome.usage.cached_input_tokens == CACHED * calls
    assert outcome.usage.cache_creation_tokens == WRITTEN * calls
    assert all(h.tokens > CACHED + WRITTEN for h in outcome.analysis.hats)


async def test_without_a_cache_the_counts_are_unchanged(any_llm: FakeLLM, build: Build) -> None:
    outcome = await build(any_llm.settings()).analyse(QUESTION, route(QUESTION, 0.5, "single"), None)

    assert outcome.usage.input_tokens == prompt_tokens(any_llm)
    assert (outcome.usage.cached_input_tokens, outcome.usage.cache_creation_tokens) == (0, 0)


async def test_the_reply_shows_cached_tokens_and_the_session_adds_them_up(make_llm: Callable[[str], FakeLLM]) -> None:
    llm = make_llm("anthropic")
    llm.cached_tokens = CACHED
    thought = {"thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": True, "strategy": "single"}

    async with Client(build_server(llm.settings())) as client:
        first = await client.call_tool("sequentialthinking", {"thought": QUESTION.thought, **thought, "sessionId": "c"})
        second = await client.call_tool(
            "sequentialthinking",
            {"thought": "And if the cache is cold?", **thought, "thoughtNumber": 2, "sessionId": "c"},
        )
        session = await client.read_resource("thinking://sessions/c")

    replies = [r.structured_content for r in (first, second)]
    assert all(r is not None for r in replies)
    usages = [Usage.model_validate(r["usage"]) for r in replies if r is not None]
    for reply in replies:
        assert reply is not None
        assert reply["usage"]["cachedInputTokens"] == CACHED and reply["usage"]["cacheCreationTokens"] == 0
    assert sum(u.input_tokens for u in usages) == prompt_tokens(llm)
    total = Usage.model_validate(json.loads(session.contents[0].text)["usage"])  # type: ignore[union-attr]
    assert total == usages[0].add(usages[1]) and total.cached_input_tokens == 2 * CACHED
