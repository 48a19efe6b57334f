"""The multi-agent core against providers faked on the wire: calls, concurrency, failures, retries, cancellation."""

from __future__ import annotations

import asyncio

import httpcore2
import httpx
import pytest

from conftest import Build
from fakes import FakeLLM, Hold
from thinking_hats.analysis import ThoughtContext
from thinking_hats.hats.orchestrator import Orchestrator
from thinking_hats.routing.router import STRATEGIES, route

DECISION = ThoughtContext(
    thought=(
        "Should we migrate the billing database to Postgres this quarter, given the migration risk, "
        "the licence cost, and how the on-call team will cope? What are the alternatives?"
    ),
    thought_number=2,
    total_thoughts=5,
)


async def run(orchestrator: Orchestrator, strategy: str, ctx: ThoughtContext = DECISION) -> object:
    return await orchestrator.analyse(ctx, route(ctx, 0.5, strategy), None)


@pytest.mark.parametrize("strategy", ["single", "double", "triple", "full"])
async def test_each_strategy_makes_exactly_its_calls_on_every_wire_format(
    any_llm: FakeLLM, build: Build, strategy: str
) -> None:
    orchestrator = build(any_llm.settings())
    chosen = route(DECISION, 0.5, strategy)

    outcome = await orchestrator.analyse(DECISION, chosen, None)

    row = STRATEGIES[strategy]
    assert len(any_llm.history) == row.calls
    assert sorted(any_llm.roles()) == sorted([*chosen.hats] + (["synthesis"] if row.synthesis else []))
    if row.synthesis:
        assert any_llm.history[-1].role == "synthesis"  # the synthesis comes last, after every hat
    assert [h.hat for h in outcome.analysis.hats if h.hat != "synthesis"] == list(chosen.hats)
    assert outcome.analysis.synthesis and outcome.failure is None
    assert outcome.usage.llm_calls == row.calls
    assert outcome.usage.input_tokens > 0 and outcome.usage.output_tokens > 0


async def test_the_hats_run_at_the_same_time(openai_llm: FakeLLM, build: Build) -> None:
    hold = Hold(expected=5)
    for hat in ("factual", "emotional", "critical", "optimistic", "creative"):
        openai_llm.enqueue(hat, hold)
    task = asyncio.create_task(run(build(openai_llm.settings()), "full"))

    # All five requests are parked in the fake at once: none waited for another to finish.
    await asyncio.wait_for(hold.all_arrived.wait(), timeout=10)
    assert openai_llm.in_flight == 5
    assert "synthesis" not in openai_llm.roles()
    hold.release()
    await task
    assert openai_llm.peak == 5
    assert openai_llm.roles()[-1] == "synthesis"


async def test_progress_is_reported_as_each_hat_finishes_and_at_synthesis(openai_llm: FakeLLM, build: Build) -> None:
    seen: list[tuple[int, int, str]] = []

    async def progress(done: int, total: int, message: str) -> None:
        seen.append((done, total, message))

    ctx = DECISION
    await build(openai_llm.settings()).analyse(ctx, route(ctx, 0.5, "triple"), progress)

    assert [(d, t) for d, t, _ in seen] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert "synthesis" in seen[-1][2]


async def test_a_hat_failing_after_retries_is_named_and_kept_out_of_the_synthesis(
    openai_llm: FakeLLM, build: Build
) -> None:
    hat = route(DECISION, 0.5, "triple").hats[1]  # a hat the route runs, whichever the model ranks second
    openai_llm.enqueue(hat, 500, 502, 503)
    outcome = await run(build(openai_llm.settings(thinking_max_retries=2)), "triple")

    assert len(openai_llm.calls(hat)) == 3  # one try and two retries, no more
    problems = " ".join(outcome.analysis.problems)
    assert f"{hat} hat failed" in problems and "503 from openai" in problems
    failed = next(h for h in outcome.analysis.hats if h.hat == hat)
    assert failed.status == "failed" and failed.output is None
    synthesis_prompt = openai_llm.calls("synthesis")[0].user
    assert f"{hat} hat" not in synthesis_prompt and "fake provider error" not in synthesis_prompt
    assert "fake provider error" not in (outcome.analysis.synthesis or "")
    assert outcome.failure is None


async def test_a_transient_error_is_retried_and_then_succeeds(openai_llm: FakeLLM, build: Build) -> None:
    openai_llm.enqueue("factual", 503)
    outcome = await run(build(openai_llm.settings()), "single", ThoughtContext("Is 7 prime?", 1, 1))

    assert openai_llm.roles() == ["factual", "factual"]
    assert outcome.failure is None and outcome.analysis.problems == []
    assert outcome.usage.llm_calls == 2  # the retry is paid for, and counted


async def test_retry_after_from_the_server_is_honoured(openai_llm: FakeLLM, build: Build) -> None:
    openai_llm.enqueue("factual", openai_llm.error(429, retry_after="0.4"))
    await run(build(openai_llm.settings(thinking_retry_wait=0)), "single", ThoughtContext("Is 7 prime?", 1, 1))

    first, second = openai_llm.calls("factual")
    # The backoff alone would retry at once (THINKING_RETRY_WAIT=0): only Retry-After explains the gap.
    assert second.at - first.at >= 0.4


async def test_a_retry_after_beyond_the_deadline_is_not_waited_for(openai_llm: FakeLLM, build: Build) -> None:
    openai_llm.enqueue("factual", openai_llm.error(429, retry_after="3600"))
    outcome = await run(build(openai_llm.settings(thinking_deadline=5)), "single", ThoughtContext("Is 7 prime?", 1, 1))

    assert len(openai_llm.calls("factual")) == 1
    assert outcome.failure is not None and "429 from openai" in outcome.failure


async def test_a_hat_slower_than_its_timeout_is_cut_off_and_reported(openai_llm: FakeLLM, build: Build) -> None:
    hold = Hold()
    hat = route(DECISION, 0.5, "double").hats[1]  # a hat the route runs, whichever the model ranks second
    openai_llm.enqueue(hat, hold)
    settings = openai_llm.settings(thinking_hat_timeout=0.3, thinking_max_retries=0)
    outcome = await run(build(settings), "double")

    critical = next(h for h in outcome.analysis.hats if h.hat == hat)
    assert critical.status == "timeout"
    assert any("THINKING_HAT_TIMEOUT" in p for p in outcome.analysis.problems)
    assert hold.cancelled == 1  # the in-flight request was abandoned, not left running
    assert outcome.analysis.synthesis is not None  # synthesised from the hat that answered


async def test_a_malformed_body_is_a_failure_not_an_analysis(openai_llm: FakeLLM, build: Build) -> None:
    garbage = httpx.Response(200, content=b'{"choices": [ not json', headers={"content-type": "application/json"})
    openai_llm.enqueue("factual", garbage)
    outcome = await run(
        build(openai_llm.settings(thinking_max_retries=0)), "single", ThoughtContext("Is 7 prime?", 1, 1)
    )

    assert outcome.failure is not None and "unreadable response" in outcome.failure
    assert outcome.analysis.synthesis is None
    assert "not json" not in outcome.failure


async def test_an_empty_completion_is_a_failure(openai_llm: FakeLLM, build: Build) -> None:
    openai_llm.enqueue("factual", "")
    outcome = await run(build(openai_llm.settings()), "single", ThoughtContext("Is 7 prime?", 1, 1))

    assert outcome.failure is not None and "empty completion" in outcome.failure


async def test_a_refused_connection_is_retried_then_reported(openai_llm: FakeLLM, build: Build) -> None:
    refused = httpcore2.ConnectError("connection refused")
    openai_llm.enqueue("factual", refused, refused)
    outcome = await run(
        build(openai_llm.settings(thinking_max_retries=1)), "single", ThoughtContext("Is 7 prime?", 1, 1)
    )

    assert len(openai_llm.calls("factual")) == 2
    assert outcome.failure is not None and "no response from openai" in outcome.failure


async def test_a_failed_synthesis_returns_the_hat_analyses(openai_llm: FakeLLM, build: Build) -> None:
    openai_llm.enqueue("synthesis", 500, 500, 500)
    outcome = await run(build(openai_llm.settings()), "double")

    assert outcome.analysis.synthesis is None and outcome.failure is None
    assert any(p.startswith("synthesis failed") for p in outcome.analysis.problems)
    outputs = [h.output for h in outcome.analysis.hats if h.hat != "synthesis"]
    assert all(o and o.startswith("[") for o in outputs)


async def test_when_everything_fails_the_outcome_says_what_and_how_to_fix_it(any_llm: FakeLLM, build: Build) -> None:
    any_llm.enqueue("*", *([500] * 20))
    outcome = await run(build(any_llm.settings(thinking_max_retries=1)), "double")

    assert outcome.failure is not None and "500 from" in outcome.failure
    assert outcome.analysis.synthesis is None
    assert "synthesis" not in any_llm.roles()  # nothing to merge: no synthesis call


async def test_a_401_is_not_retried_and_names_the_key_to_check(any_llm: FakeLLM, build: Build) -> None:
    any_llm.enqueue("*", 401, 401)
    outcome = await run(build(any_llm.settings()), "double")

    assert len(any_llm.history) == 2  # one per hat: retrying a bad key cannot help
    variable = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "openai-compatible": "LLM_API_KEY"}
    provider = any_llm.settings().llm_provider
    assert provider is not None
    assert outcome.failure is not None and f"401 from {provider}: check {variable[provider]}" in outcome.failure


async def test_cancelling_a_thought_cancels_its_model_calls(openai_llm: FakeLLM, build: Build) -> None:
    hold = Hold(expected=3)
    for hat in ("factual", "emotional", "critical", "optimistic", "creative"):
        openai_llm.enqueue(hat, hold)
    task = asyncio.create_task(run(build(openai_llm.settings()), "triple"))
    await asyncio.wait_for(hold.all_arrived.wait(), timeout=10)

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert hold.cancelled == 3
    assert openai_llm.in_flight == 0
    assert "synthesis" not in openai_llm.roles()


async def test_the_prompt_carries_the_revised_thought_and_recent_history(openai_llm: FakeLLM, build: Build) -> None:
    ctx = ThoughtContext(
        thought="Actually the cache was never the bottleneck; the N+1 query was.",
        thought_number=6,
        total_thoughts=8,
        revised=(3, "The cache is the bottleneck."),
        recent=((4, "Profile the endpoint."), (5, "The query count is 240 per request.")),
        previous_synthesis="Measure before optimising.",
    )
    await run(build(openai_llm.settings()), "single", ctx)

    prompt = openai_llm.history[0].user
    assert "revises thought 3" in prompt and "The cache is the bottleneck." in prompt
    assert "Thought 5: The query count is 240 per request." in prompt
    assert "Measure before optimising." in prompt
    assert openai_llm.history[0].role == "critical"  # a revision is reviewed by the critical hat first


async def test_agent_logs_never_reach_stdout(
    openai_llm: FakeLLM, build: Build, capfd: pytest.CaptureFixture[str]
) -> None:
    openai_llm.enqueue("factual", 500)
    await run(build(openai_llm.settings(thinking_max_retries=0)), "single", ThoughtContext("Is 7 prime?", 1, 1))

    assert capfd.readouterr().out == ""


async def test_calls_that_succeed_at_once_never_start_the_retry_machinery(
    openai_llm: FakeLLM, build: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    import thinking_hats.hats.orchestrator as orchestrator_module

    def no_retry_machinery(*args: object, **kwargs: object) -> object:
        raise AssertionError("tenacity was started for a call that had not failed")

    monkeypatch.setattr(orchestrator_module, "AsyncRetrying", no_retry_machinery)
    outcome = await run(build(openai_llm.settings()), "full")

    assert outcome.failure is None  # type: ignore[attr-defined]
    assert len(openai_llm.history) == 6


async def test_a_failed_first_attempt_is_retried_by_the_same_rules(openai_llm: FakeLLM, build: Build) -> None:
    openai_llm.enqueue("*", 503)  # the first request fails, its retry succeeds
    outcome = await run(build(openai_llm.settings(thinking_retry_wait=0)), "single")

    assert outcome.failure is None  # type: ignore[attr-defined]
    assert len(openai_llm.history) == 2
