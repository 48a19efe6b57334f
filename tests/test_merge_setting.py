"""THINKING_SYNTHESIS=merge: double and triple merge their hats in code (2 and 3 calls in 1 round); full still
synthesizes. Counted on the wire, against the fake provider."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client

from conftest import Build
from fakes import FakeLLM, Hold
from thinking_hats.analysis import Outcome, ThoughtContext
from thinking_hats.config import Settings
from thinking_hats.routing.router import STRATEGIES, route
from thinking_hats.server import build_server

DECISION = ThoughtContext(
    thought=(
        "Should we move the nightly exports to a managed queue, given the cost, the on-call load and the risk "
        "of losing a night's data? What else could we do?"
    ),
    thought_number=2,
    total_thoughts=4,
)


async def analyse(llm: FakeLLM, build: Build, strategy: str, synthesis: str) -> Outcome:
    orchestrator = build(llm.settings(thinking_synthesis=synthesis))
    return await orchestrator.analyse(DECISION, route(DECISION, 0.5, strategy), None)


@pytest.mark.parametrize(("strategy", "hats"), [("double", 2), ("triple", 3)])
async def test_merge_makes_one_call_per_hat_and_no_synthesis_call_on_every_wire_format(
    any_llm: FakeLLM, build: Build, strategy: str, hats: int
) -> None:
    outcome = await analyse(any_llm, build, strategy, "merge")

    assert len(any_llm.history) == hats
    assert "synthesis" not in any_llm.roles()
    assert outcome.usage.llm_calls == hats
    assert [h.hat for h in outcome.analysis.hats] == list(route(DECISION, 0.5, strategy).hats)
    assert outcome.failure is None and outcome.analysis.strategy == strategy


@pytest.mark.parametrize("strategy", ["double", "triple"])
async def test_merged_hats_run_in_one_round(openai_llm: FakeLLM, build: Build, strategy: str) -> None:
    hats = STRATEGIES[strategy].hats
    hold = Hold(expected=hats)
    openai_llm.enqueue("*", *([hold] * hats))
    task = asyncio.create_task(analyse(openai_llm, build, strategy, "merge"))

    # Every call of the thought is in flight at once: nothing waits for anything, so the thought is one round.
    await asyncio.wait_for(hold.all_arrived.wait(), timeout=10)
    assert openai_llm.in_flight == hats
    hold.release()
    outcome = await task
    assert len(openai_llm.history) == hats and openai_llm.peak == hats and outcome.failure is None


async def test_the_merged_synthesis_is_each_hat_output_under_its_name(openai_llm: FakeLLM, build: Build) -> None:
    outcome = await analyse(openai_llm, build, "triple", "merge")

    merged = outcome.analysis.synthesis
    assert merged is not None
    for run in outcome.analysis.hats:
        assert run.output is not None
        assert f"### {run.hat} hat\n\n{run.output}" in merged
    assert merged.index(f"### {outcome.analysis.hats[0].hat} hat") == 0


async def test_a_failed_hat_is_left_out_of_the_merge_and_named(openai_llm: FakeLLM, build: Build) -> None:
    chosen = route(DECISION, 0.5, "double")
    failing = chosen.hats[1]
    openai_llm.enqueue(failing, 401)

    outcome = await analyse(openai_llm, build, "double", "merge")

    assert outcome.analysis.synthesis is not None
    assert f"### {chosen.hats[0]} hat" in outcome.analysis.synthesis
    assert f"### {failing} hat" not in outcome.analysis.synthesis
    assert any(p.startswith(f"{failing} hat failed") for p in outcome.analysis.problems)
    assert "synthesis" not in openai_llm.roles()


@pytest.mark.parametrize(("strategy", "calls"), [("single", 1), ("full", 6)])
async def test_single_and_full_cost_the_same_under_merge(
    openai_llm: FakeLLM, build: Build, strategy: str, calls: int
) -> None:
    outcome = await analyse(openai_llm, build, strategy, "merge")

    assert len(openai_llm.history) == calls == outcome.usage.llm_calls
    if strategy == "full":
        assert openai_llm.roles()[-1] == "synthesis"  # five angles still get a model to reconcile them


@pytest.mark.parametrize(("strategy", "calls"), [("double", 3), ("triple", 4)])
async def test_the_default_keeps_the_synthesis_call(
    openai_llm: FakeLLM, build: Build, strategy: str, calls: int
) -> None:
    assert Settings().thinking_synthesis == "model"
    outcome = await analyse(openai_llm, build, strategy, "model")

    assert len(openai_llm.history) == calls == outcome.usage.llm_calls
    assert openai_llm.roles()[-1] == "synthesis"


def test_the_route_states_calls_and_rounds_under_each_setting() -> None:
    for strategy, model, merge in [
        ("single", (1, 1), (1, 1)),
        ("double", (3, 2), (2, 1)),
        ("triple", (4, 2), (3, 1)),
        ("full", (6, 2), (6, 2)),
    ]:
        chosen = route(DECISION, 0.5, strategy)
        assert (chosen.calls, chosen.rounds) == model, strategy
        merged = chosen.with_synthesis("merge")
        assert (merged.calls, merged.rounds) == merge, strategy
        assert merged.with_synthesis("model") == chosen


def thought(text: str, **extra: Any) -> dict[str, Any]:
    return {"thought": text, "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": True, **extra}


async def test_a_merged_reply_over_mcp_counts_its_calls(openai_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKING_SYNTHESIS", "merge")
    async with Client(build_server(openai_llm.settings())) as client:
        result = await client.call_tool("sequentialthinking", thought(DECISION.thought, strategy="triple"))

    assert not result.is_error
    reply = result.structured_content
    assert reply is not None
    assert reply["usage"]["llmCalls"] == 3 == len(openai_llm.history)
    assert "synthesis" not in [h["hat"] for h in reply["analysis"]["hats"]]
    assert reply["analysis"]["synthesis"].startswith("### ")
