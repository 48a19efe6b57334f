"""Retries within the deadline: a retry starts only when it can still finish, and a timeout names what cut it."""

from __future__ import annotations

import re

from conftest import Build
from fakes import FakeLLM, Hold
from thinking_hats.analysis import Outcome, ThoughtContext
from thinking_hats.hats.orchestrator import Orchestrator
from thinking_hats.routing.router import route

DECISION = ThoughtContext(
    thought=(
        "Should we migrate the billing database to Postgres this quarter, given the migration risk, "
        "the licence cost, and how the on-call team will cope? What are the alternatives?"
    ),
    thought_number=2,
    total_thoughts=5,
)


async def run(orchestrator: Orchestrator, strategy: str) -> Outcome:
    return await orchestrator.analyse(DECISION, route(DECISION, 0.5, strategy), None)


def error_of(outcome: Outcome, hat: str) -> str:
    run = next(h for h in outcome.analysis.hats if h.hat == hat)
    assert run.error is not None, run
    return run.error


async def test_a_timed_out_hat_is_not_retried_when_a_whole_attempt_no_longer_fits(
    openai_llm: FakeLLM, build: Build
) -> None:
    hold = Hold()
    openai_llm.enqueue("*", hold)  # the first request hangs; a retry would be answered at once
    settings = openai_llm.settings(thinking_hat_timeout=0.6, thinking_deadline=1, thinking_max_retries=2)

    outcome = await run(build(settings), "single")

    assert len(openai_llm.history) == 1 and hold.cancelled == 1
    (hat,) = outcome.analysis.hats
    assert hat.status == "timeout"
    assert error_of(outcome, hat.hat) == "timed out after 0.6 s (THINKING_HAT_TIMEOUT=0.6 s)"
    assert outcome.failure is not None and "THINKING_DEADLINE" not in outcome.failure


async def test_full_makes_six_calls_when_a_hat_times_out_late_in_the_thought(openai_llm: FakeLLM, build: Build) -> None:
    hold = Hold()
    openai_llm.enqueue("critical", hold, hold)  # a retry would hang too, and be cut by the deadline
    # The hats must finish 0.5 s before the 1.5 s deadline (the synthesis's share): 0.4 s are left after the
    # critical hat's 0.6 s timeout, less than a whole attempt.
    settings = openai_llm.settings(thinking_hat_timeout=0.6, thinking_deadline=1.5, thinking_max_retries=2)

    outcome = await run(build(settings), "full")

    assert len(openai_llm.history) == 6  # five hats and the synthesis; the retry made it 7 (10 if all timed out)
    assert outcome.usage.llm_calls == 6
    assert error_of(outcome, "critical") == "timed out after 0.6 s (THINKING_HAT_TIMEOUT=0.6 s)"
    assert outcome.analysis.synthesis is not None


async def test_a_retry_that_fits_runs_and_the_message_gives_every_attempt_and_the_whole_time(
    openai_llm: FakeLLM, build: Build
) -> None:
    hold = Hold()
    openai_llm.enqueue("*", hold, hold)
    settings = openai_llm.settings(thinking_hat_timeout=0.3, thinking_deadline=10, thinking_max_retries=1)

    outcome = await run(build(settings), "single")

    assert len(openai_llm.history) == 2 and hold.cancelled == 2
    (hat,) = outcome.analysis.hats
    error = error_of(outcome, hat.hat)
    expected = r"timed out after 0\.3 s \(THINKING_HAT_TIMEOUT=0\.3 s\); 2 attempts, ([\d.]+) s in all"
    found = re.fullmatch(expected, error)
    assert found, error
    assert float(found.group(1)) >= 0.6  # both attempts ran their whole timeout, and the total says so


async def test_a_retry_after_a_timeout_succeeds_when_it_has_a_whole_attempt(openai_llm: FakeLLM, build: Build) -> None:
    openai_llm.enqueue("*", Hold())
    settings = openai_llm.settings(thinking_hat_timeout=0.3, thinking_deadline=10, thinking_max_retries=1)

    outcome = await run(build(settings), "single")

    assert len(openai_llm.history) == 2
    assert outcome.failure is None and outcome.analysis.synthesis


async def test_a_hat_cut_by_the_deadline_names_the_deadline(openai_llm: FakeLLM, build: Build) -> None:
    openai_llm.enqueue("*", Hold())
    settings = openai_llm.settings(thinking_hat_timeout=5, thinking_deadline=1, thinking_max_retries=2)

    outcome = await run(build(settings), "single")

    assert len(openai_llm.history) == 1
    (hat,) = outcome.analysis.hats
    # What was left of the deadline when the attempt began: 1.0 s, or a little less on a busy machine.
    error = error_of(outcome, hat.hat)
    assert re.fullmatch(r"timed out after (1\.0|0\.9) s: THINKING_DEADLINE \(1 s\) was reached", error), error


async def test_a_quick_failure_is_not_retried_without_time_for_an_answer(openai_llm: FakeLLM, build: Build) -> None:
    openai_llm.enqueue("*", 503)
    # Under 1 s left after an instant 503: less than the hat timeout of 2 s, so a retry could not finish.
    settings = openai_llm.settings(thinking_hat_timeout=2, thinking_deadline=1, thinking_max_retries=2)

    outcome = await run(build(settings), "single")

    assert len(openai_llm.history) == 1
    assert outcome.failure is not None and outcome.failure.startswith("503 from openai")
