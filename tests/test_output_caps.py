"""Model output is bounded: what is read per response, kept per hat and synthesis, passed on, replied and stored."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
import respx
from mcp import Client

from fakes import FakeLLM, Seen
from thinking_hats.config import Settings
from thinking_hats.hats.providers import (
    Exchange,
    ResponseTooLarge,
    current_exchange,
    http_client,
    resolve_provider,
    response_byte_cap,
)
from thinking_hats.server import build_server

HARD = (
    "Should we split the monolith into services this year, weighing the hiring plan, the outage risk, "
    "the migration cost and the team's morale? What would we do instead?"
)
CAP = 8000  # THINKING_MAX_REPLY_CHARS by default


def thought(session: str) -> dict[str, object]:
    return {
        "thought": HARD,
        "thoughtNumber": 1,
        "totalThoughts": 2,
        "nextThoughtNeeded": True,
        "strategy": "full",
        "sessionId": session,
    }


def words(chars: int, tag: str) -> str:
    """About `chars` characters of prose, tagged so a test can find it in a prompt."""
    return (f"{tag} " + "lorem ipsum dolor sit amet " * (chars // 27 + 1))[: chars - 1] + "."


async def ask(settings: Settings, session: str) -> tuple[dict[str, object], int, int]:
    """(structured reply, size of the whole tool result, size of the stored session) of one `full` thought."""
    async with Client(build_server(settings)) as client:
        result = await client.call_tool("sequentialthinking", thought(session))
        stored = await client.read_resource(f"thinking://sessions/{session}")
    assert result.structured_content is not None
    stored_text = stored.contents[0].text  # type: ignore[union-attr]
    return result.structured_content, len(result.model_dump_json()), len(stored_text)


async def test_a_multi_megabyte_completion_is_not_read_and_the_hat_is_reported(openai_llm: FakeLLM) -> None:
    huge = words(4_000_000, "HUGE")
    default = openai_llm.answer
    openai_llm.answer = lambda seen: huge if seen.role == "critical" else default(seen)

    reply, size, stored = await ask(openai_llm.settings(), "huge")

    analysis = reply["analysis"]
    assert isinstance(analysis, dict)
    critical = next(h for h in analysis["hats"] if h["hat"] == "critical")
    assert critical["status"] == "failed" and critical["output"] is None
    problem = next(p for p in analysis["problems"] if p.startswith("critical hat failed"))
    cap_kb = response_byte_cap(700) // 1024
    assert f"over {cap_kb} KB, not read" in problem and "THINKING_MAX_OUTPUT_TOKENS" in problem
    assert len(openai_llm.calls("critical")) == 1  # a runaway reply is not asked for again
    assert analysis["synthesis"]  # the other four hats still make a synthesis
    (synthesis,) = openai_llm.calls("synthesis")
    assert "HUGE" not in synthesis.user and len(synthesis.user) < 10_000
    # A 4 MB completion once made a 12 MB reply; now the reply and the store stay small.
    assert size < 60_000 and stored < 60_000


async def test_a_long_analysis_is_cut_before_it_is_kept_passed_on_or_stored(openai_llm: FakeLLM) -> None:
    long = 200_000  # inside the byte cap, far beyond THINKING_MAX_REPLY_CHARS

    def answer(seen: Seen) -> str:
        return words(long, f"[{seen.role}]")

    openai_llm.answer = answer

    reply, size, stored = await ask(openai_llm.settings(), "long")

    analysis = reply["analysis"]
    assert isinstance(analysis, dict)
    outputs = [h["output"] for h in analysis["hats"] if h["hat"] != "synthesis"]
    assert len(outputs) == 5 and all(o and CAP - 50 < len(o) <= CAP + 2 for o in outputs)
    assert analysis["synthesis"] and len(analysis["synthesis"]) <= CAP + 2
    assert (
        f"critical hat's analysis cut from {long:,} to {CAP:,} characters (THINKING_MAX_REPLY_CHARS)"
        in (analysis["problems"])
    )
    assert f"synthesis cut from {long:,} to {CAP:,} characters (THINKING_MAX_REPLY_CHARS)" in analysis["problems"]
    # The synthesis sees each hat's kept analysis, not the 200,000 characters the model wrote.
    (synthesis,) = openai_llm.calls("synthesis")
    assert 5 * (CAP - 50) < len(synthesis.user) < 5 * CAP + 3000
    # A reply carries the outputs twice (structured and text) and the stored entry keeps the same reply.
    assert size < 3 * 6 * (CAP + 500) and stored < 3 * 6 * (CAP + 500)


async def test_the_reply_cap_is_a_setting(openai_llm: FakeLLM) -> None:
    openai_llm.answer = lambda seen: words(5000, f"[{seen.role}]")

    reply, _, _ = await ask(openai_llm.settings(thinking_max_reply_chars=1000), "short")

    analysis = reply["analysis"]
    assert isinstance(analysis, dict)
    assert all(len(h["output"]) <= 1002 for h in analysis["hats"])
    assert len(analysis["problems"]) == 6  # five hats and the synthesis, each cut once


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
async def test_a_response_body_is_read_only_up_to_the_byte_cap(
    openai_llm: FakeLLM, llm_router: respx.Router, declared: bool
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(100):
            yield b"x" * 10_000

    body = httpx.Response(200, content=b"x" * 1_000_000) if declared else httpx.Response(200, content=chunks())
    llm_router.get("https://api.openai.com/v1/big").mock(return_value=body)
    provider = resolve_provider(openai_llm.settings())
    assert provider is not None
    http = http_client(provider, max_response_bytes=50_000)
    exchange = Exchange()
    token = current_exchange.set(exchange)
    try:
        with pytest.raises(ResponseTooLarge):
            await http.get("https://api.openai.com/v1/big")
        assert exchange.oversize == 50_000 and exchange.status == 200
        small = httpx.Response(200, json={"ok": True})
        llm_router.get("https://api.openai.com/v1/small").mock(return_value=small)
        assert (await http.get("https://api.openai.com/v1/small")).json() == {"ok": True}
        assert exchange.oversize is None  # each exchange starts afresh
    finally:
        current_exchange.reset(token)
        await http.aclose()


def test_the_byte_cap_leaves_room_for_any_completion_within_the_output_token_cap() -> None:
    # A token of escaped non-Latin text is at most a few characters of 6 bytes each (`\uXXXX`).
    for tokens in (16, 700, 32_000):
        assert response_byte_cap(tokens) >= 256 * 1024 + tokens * 4 * 12
    assert response_byte_cap(700) < 1024 * 1024  # while a runaway 10 MB completion is refused
