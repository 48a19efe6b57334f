"""`sequentialthinking` and `crash` with a provider configured, through a real in-process MCP client."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client

from calls import text_of
from fakes import FakeLLM
from thinking_hats.config import Settings
from thinking_hats.server import build_server

HARD = (
    "Should we split the monolith into services this year, weighing the hiring plan, the outage risk, "
    "the migration cost and the team's morale? What would we do instead?"
)


def thought(text: str, number: int, total: int = 3, **extra: Any) -> dict[str, Any]:
    return {"thought": text, "thoughtNumber": number, "totalThoughts": total, "nextThoughtNeeded": True, **extra}


async def test_an_augmented_reply_carries_the_synthesis_the_analysis_and_the_footer(openai_llm: FakeLLM) -> None:
    async with Client(build_server(openai_llm.settings())) as client:
        result = await client.call_tool("sequentialthinking", thought(HARD, 1, strategy="triple"))

    assert not result.is_error
    reply = result.structured_content
    assert reply is not None
    assert reply["mode"] == "augmented"
    assert reply["analysis"]["strategy"] == "triple"
    assert reply["analysis"]["synthesis"].startswith("[synthesis]")
    assert [h["hat"] for h in reply["analysis"]["hats"]][-1] == "synthesis"
    assert reply["usage"]["llmCalls"] == 4
    assert reply["analysis"]["complexity"]["factors"]  # the router explains its score
    text = text_of(result)
    assert text.startswith("[synthesis]")
    assert "*triple · score" in text and "tokens" in text


async def test_the_router_decides_how_many_calls_a_thought_costs(openai_llm: FakeLLM) -> None:
    async with Client(build_server(openai_llm.settings())) as client:
        await client.call_tool("sequentialthinking", thought("What is 2 + 2?", 1, sessionId="cheap"))
        cheap = len(openai_llm.history)
        await client.call_tool("sequentialthinking", thought(HARD, 1, sessionId="dear"))
    assert cheap == 1
    assert len(openai_llm.history) - cheap >= 3  # the learned router: double or dearer


async def test_progress_notifications_reach_the_client_per_hat_and_at_synthesis(openai_llm: FakeLLM) -> None:
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async with Client(build_server(openai_llm.settings())) as client:
        await client.call_tool("sequentialthinking", thought(HARD, 1, strategy="double"), progress_callback=on_progress)

    assert [(p, t) for p, t, _ in updates] == [(1, 3), (2, 3), (3, 3)]
    assert "synthesis" in (updates[-1][2] or "")


async def test_when_every_call_fails_the_reply_is_an_error_with_the_fix_and_the_thought_is_kept(
    openai_llm: FakeLLM,
) -> None:
    openai_llm.enqueue("*", 401, 401)
    async with Client(build_server(openai_llm.settings())) as client:
        failed = await client.call_tool("sequentialthinking", thought(HARD, 1, strategy="double", sessionId="s1"))
        after = await client.call_tool(
            "sequentialthinking", thought("Next step: list the services.", 2, sessionId="s1")
        )
        session = await client.read_resource("thinking://sessions/s1")

    assert failed.is_error
    assert "401 from openai: check OPENAI_API_KEY" in text_of(failed)
    assert "fake provider error" not in text_of(failed)
    assert not after.is_error
    recorded = json.loads(session.contents[0].text)  # type: ignore[union-attr]
    assert [e["number"] for e in recorded["entries"]] == [1, 2]
    assert recorded["usage"]["llmCalls"] == 3  # per-session usage: two failed hats and one answer


async def test_a_misconfigured_provider_is_named_in_the_reply_and_thinking_still_works() -> None:
    settings = Settings(llm_provider="anthropic")  # no ANTHROPIC_API_KEY
    async with Client(build_server(settings)) as client:
        result = await client.call_tool("sequentialthinking", thought("A first thought.", 1))

    assert not result.is_error
    reply = result.structured_content
    assert reply is not None and reply["mode"] == "record-only"
    assert any("ANTHROPIC_API_KEY" in p for p in reply["analysis"]["problems"])


async def test_prompt_size_does_not_grow_with_the_length_of_the_session(openai_llm: FakeLLM) -> None:
    async with Client(build_server(openai_llm.settings())) as client:
        for n in range(1, 51):
            await client.call_tool(
                "sequentialthinking",
                thought(f"Step {n}: check the next log file for the error pattern.", n, 50, strategy="single"),
            )
    sizes = [seen.prompt_chars for seen in openai_llm.history]
    assert len(sizes) == 50
    assert sizes[49] <= 1.5 * sizes[2]


async def test_a_revision_is_sent_with_the_thought_it_revises(openai_llm: FakeLLM) -> None:
    async with Client(build_server(openai_llm.settings())) as client:
        await client.call_tool("sequentialthinking", thought("The cache is the bottleneck.", 1, strategy="single"))
        await client.call_tool(
            "sequentialthinking",
            thought("No: the N+1 query is.", 2, isRevision=True, revisesThought=1, strategy="single"),
        )
    revision = openai_llm.history[-1]
    assert revision.role == "critical"
    assert "revises thought 1" in revision.user and "The cache is the bottleneck." in revision.user


async def test_a_branch_is_sent_with_the_thought_it_starts_from(openai_llm: FakeLLM) -> None:
    async with Client(build_server(openai_llm.settings())) as client:
        await client.call_tool("sequentialthinking", thought("Option A: buy a vendor tool.", 1, strategy="single"))
        await client.call_tool(
            "sequentialthinking",
            thought("Option B: build it in-house.", 2, branchFromThought=1, branchId="build", strategy="single"),
        )
    assert "starts branch 'build' from thought 1" in openai_llm.history[-1].user
    assert "Option A: buy a vendor tool." in openai_llm.history[-1].user


async def test_the_session_report_shows_each_hat_and_the_synthesis(openai_llm: FakeLLM) -> None:
    async with Client(build_server(openai_llm.settings())) as client:
        await client.call_tool("sequentialthinking", thought(HARD, 1, strategy="double", sessionId="rep"))
        report = await client.read_resource("thinking://sessions/rep/report")

    markdown = report.contents[0].text  # type: ignore[union-attr]
    # A model's text is escaped as a client's is: its brackets cannot make a link.
    assert "### Synthesis" in markdown and "\\[synthesis\\]" in markdown
    for seen in openai_llm.history[:-1]:
        assert f"\\[{seen.role}\\]" in markdown


def crash_step(number: int, thought: str, confidence: float | None = 0.3, **extra: Any) -> dict[str, Any]:
    return {
        "step_number": number,
        "estimated_total": 4,
        "purpose": "analysis",
        "context": "The nightly deploy failed",
        "thought": thought,
        "outcome": "A guess",
        "next_action": "check the config",
        "rationale": "It changed last week",
        "session_id": "crash-review",
        **({"confidence": confidence} if confidence is not None else {}),
        **extra,
    }


async def test_a_low_confidence_crash_step_is_reviewed_by_the_hats_the_router_chooses(openai_llm: FakeLLM) -> None:
    async with Client(build_server(openai_llm.settings())) as client:
        result = await client.call_tool("crash", crash_step(1, "Maybe the config changed."))

    assert not result.is_error
    reply = result.structured_content or {}
    # low confidence is a floor: two angles at least, then their synthesis (3 calls in 2 rounds)
    assert reply["review_strategy"] == "double" and reply["review_score"] >= 25
    roles = openai_llm.roles()
    assert len(roles) == 3 and roles[0] == "critical" and roles[-1] == "synthesis"
    assert reply["review"].startswith("[synthesis]") and "[synthesis]" in text_of(result)
    # the hats see the step's context, outcome and rationale around the thought the router read
    assert "Rationale: It changed last week" in openai_llm.history[0].user


async def test_a_low_confidence_crash_step_with_lives_and_parties_at_stake_gets_more_than_the_floor(
    openai_llm: FakeLLM,
) -> None:
    thought = (
        "Not sure the dosing error is in the pump firmware: two ICU patients got double doses overnight, the vendor "
        "denies any fault, the head nurse wants every pump pulled now and the hospital board fears the lawsuit."
    )
    async with Client(build_server(openai_llm.settings())) as client:
        reply = (await client.call_tool("crash", crash_step(1, thought, confidence=0.35))).structured_content or {}

    assert reply["review_strategy"] in ("triple", "full"), reply
    calls = {"triple": 4, "full": 6}[reply["review_strategy"]]
    assert len(openai_llm.history) == calls and openai_llm.roles()[-1] == "synthesis"


async def test_a_crash_revision_and_branch_reach_the_router_and_the_hats(openai_llm: FakeLLM) -> None:
    async with Client(build_server(openai_llm.settings())) as client:
        await client.call_tool("crash", crash_step(1, "The cache TTL is 60 seconds.", confidence=None))
        revised = await client.call_tool(
            "crash", crash_step(2, "Wrong: the TTL is 600 seconds in production.", revises_step=1)
        )
        revision_prompt = openai_llm.history[0].user
        before = len(openai_llm.history)
        branched = await client.call_tool(
            "crash", crash_step(3, "Try a cache per tenant instead.", branch_from=1, branch_id="per-tenant")
        )

    assert (revised.structured_content or {})["review_strategy"] == "double"
    assert "The cache TTL is 60 seconds." in revision_prompt
    assert (branched.structured_content or {})["review_strategy"] == "double"
    assert any("per-tenant" in seen.user for seen in openai_llm.history[before:])


async def test_a_confident_crash_step_and_crash_review_low_confidence_off_cost_no_call(openai_llm: FakeLLM) -> None:
    async with Client(build_server(openai_llm.settings())) as client:
        sure = await client.call_tool("crash", crash_step(1, "The config changed.", confidence=0.9))
    async with Client(build_server(openai_llm.settings(crash_review_low_confidence=False))) as client:
        off = await client.call_tool("crash", crash_step(2, "Maybe the config changed.", session_id="off"))

    assert openai_llm.history == []
    for result in (sure, off):
        reply = result.structured_content or {}
        assert not result.is_error and not {"review", "review_strategy", "review_score"} & set(reply)
    assert "Low confidence" in (off.structured_content or {})["warning"]
