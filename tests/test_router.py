"""The router: a local, deterministic score that really changes how many hats (and which) see a thought."""

from __future__ import annotations

from typing import Any

import pytest

from thinking_hats.analysis import HATS, Complexity, ThoughtContext
from thinking_hats.config import load_settings
from thinking_hats.router import STRATEGIES, Route, route

DEFAULT = (25, 45, 65)

MIGRATION = (
    "Should we migrate our payment service from the monolith to microservices this quarter? First, the "
    "team is already stretched and morale is low; second, there is a real risk of outages and security "
    "regressions during the cutover; third, customers have been asking for faster releases. What are our "
    "options, and what are the trade-offs versus staying put?"
)
VENDORS = (
    "We must choose between three vendors for patient records. First, vendor A is cheapest but had a "
    "security breach last year; second, vendor B is loved by clinicians but may fail our compliance audit; "
    "third, vendor C offers the most potential long-term but the staff feel overwhelmed by its interface. "
    "What are the trade-offs, what could go wrong, and how do we keep the team on board?"
)
SUNSET = (
    "Decision: should we sunset the legacy API?\n"
    "- Risk: breaking integrations for 300 customers\n"
    "- Team morale: engineers are burned out maintaining it\n"
    "- Opportunity: savings of two engineers per quarter\n"
    "- Options: deprecate over 6 months, or freeze it as is"
)
TRACE = (
    "I traced the request path from the load balancer to the handler. The handler reads the session from the "
    "store, then renders the template. The template itself looks fine. The slowness seems to start after the "
    "session read, so I will look at the store next and time each query separately."
)


def ctx(thought: str, **extra: Any) -> ThoughtContext:
    return ThoughtContext(thought=thought, thought_number=2, total_thoughts=5, **extra)


# (label, thought, extra ThoughtContext fields, expected strategy, hats that must be among those chosen)
CASES: list[tuple[str, str, dict[str, Any], str, set[str]]] = [
    # factual one-liners: one call, the factual hat
    ("capital", "What is the capital of France?", {}, "single", {"factual"}),
    ("bytes", "How many bytes are in a kilobyte?", {}, "single", {"factual"}),
    ("release-date", "When did Python 3.0 come out?", {}, "single", {"factual"}),
    ("definition", "Define idempotency.", {}, "single", {"factual"}),
    ("who-wrote", "Who wrote The Mythical Man-Month?", {}, "single", {"factual"}),
    ("no-signal", "Let me list the files in the repository.", {}, "single", {"factual"}),
    ("fact-about-users", "Is the number of active users above 10,000 this month?", {}, "single", {"factual"}),
    (
        "short-plan",
        "Plan:\n1. freeze the branch\n2. run the tests\n3. tag and publish",
        {},
        "single",
        {"factual"},
    ),
    # one clear signal in one line: one call, the matching hat
    ("risk-one-liner", "What could go wrong if we deploy on Friday?", {}, "single", {"critical"}),
    (
        "people-one-liner",
        "How will the team feel about moving to a four-day week?",
        {},
        "single",
        {"emotional"},
    ),
    ("brainstorm-one-liner", "Brainstorm ideas for naming the new CLI.", {}, "single", {"creative"}),
    ("upside-one-liner", "The upside is that caching makes every page faster.", {}, "single", {"optimistic"}),
    (
        "branch",
        "Try the other approach from thought 3 instead.",
        {"branch_origin": (3, "Use a queue")},
        "single",
        {"creative"},
    ),
    # revisions and low confidence always get the critical hat
    (
        "revision",
        "Actually, the earlier estimate was off by a factor of ten.",
        {"revised": (1, "About 1 GB")},
        "single",
        {"critical"},
    ),
    (
        "low-confidence",
        "The cache layer probably explains the slowness.",
        {"confidence": 0.3},
        "single",
        {"critical"},
    ),
    (
        "revised-decision",
        "On reflection, choosing Redis for the job queue was wrong.",
        {"revised": (1, "Use Redis")},
        "double",
        {"critical"},
    ),
    ("unsure-bug", "The bug is probably in the cache layer.", {"confidence": 0.3}, "double", {"critical"}),
    (
        "unsure-decision",
        "Should we launch in Europe next quarter?",
        {"confidence": 0.2},
        "double",
        {"critical"},
    ),
    # a decision or a richer thought: two hats and a synthesis
    (
        "either-or",
        "Should we use Postgres or MongoDB for the analytics service?",
        {},
        "double",
        {"critical", "optimistic"},
    ),
    (
        "brainstorm",
        "What if we replaced the nightly batch job with an event stream? Brainstorm a few alternatives "
        "and novel approaches.",
        {},
        "double",
        {"creative"},
    ),
    ("long-reasoning-step", TRACE, {}, "double", {"factual"}),
    # several angles: three hats
    (
        "rewrite-or-patch",
        "We need to decide whether to rewrite the parser or patch it. A rewrite risks "
        "regressions; patching keeps the tech debt.",
        {},
        "triple",
        {"critical", "optimistic"},
    ),
    (
        "vendor-options",
        "Option A: keep the vendor. Option B: build in-house. Which option has the better upside, "
        "and what are the risks of each?",
        {},
        "triple",
        {"critical", "optimistic"},
    ),
    (
        "four-day-week",
        "What are the pros and cons of a four-day week for the team, what could go wrong, and are "
        "there creative alternatives?",
        {},
        "triple",
        {"critical", "creative"},
    ),
    (
        "outage",
        "The payment service keeps failing under load; the outage last night lost data for some "
        "customers. What are the options to prevent a repeat?",
        {},
        "triple",
        {"critical", "emotional"},
    ),
    # hard multi-part decisions: all five
    ("migration", MIGRATION, {}, "full", set(HATS)),
    ("vendors", VENDORS, {}, "full", set(HATS)),
    ("sunset-list", SUNSET, {}, "full", set(HATS)),
]


@pytest.mark.parametrize(
    ("thought", "extra", "strategy", "must_include"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_the_strategy_and_hats_follow_what_the_thought_says(
    thought: str, extra: dict[str, Any], strategy: str, must_include: set[str]
) -> None:
    chosen = route(ctx(thought, **extra), DEFAULT)
    explained = f"score {chosen.score}: " + "; ".join(f"{f.name}={f.points} ({f.detail})" for f in chosen.factors)
    assert chosen.strategy == strategy, explained
    assert must_include <= set(chosen.hats), explained
    assert len(chosen.hats) == STRATEGIES[strategy].hats
    assert len(set(chosen.hats)) == len(chosen.hats)


def test_the_table_covers_every_strategy() -> None:
    assert {case[3] for case in CASES} == set(STRATEGIES)
    assert len(CASES) >= 25


def test_a_factual_one_liner_costs_one_call() -> None:
    chosen = route(ctx("What is the capital of France?"), DEFAULT)
    assert (chosen.strategy, chosen.hats, chosen.calls, chosen.synthesis) == (
        "single",
        ("factual",),
        1,
        False,
    )


def test_a_hard_multi_part_decision_gets_all_five_hats_and_a_synthesis() -> None:
    chosen = route(ctx(MIGRATION), DEFAULT)
    assert chosen.strategy == "full"
    assert chosen.hats == HATS
    assert chosen.calls == 6
    names = {f.name for f in chosen.factors}
    assert {"length", "questions", "structure", "decision", "risk", "people"} <= names


@pytest.mark.parametrize(("strategy", "calls"), [("single", 1), ("double", 3), ("triple", 4), ("full", 6)])
def test_each_strategy_row_states_its_calls_and_the_route_agrees(strategy: str, calls: int) -> None:
    assert STRATEGIES[strategy].calls == calls
    assert STRATEGIES[strategy].rounds == (1 if strategy == "single" else 2)
    assert route(ctx(MIGRATION), DEFAULT, override=strategy).calls == calls


@pytest.mark.parametrize("override", ["single", "double", "triple", "full"])
def test_an_override_forces_the_strategy_but_keeps_the_score_and_factors(override: str) -> None:
    automatic = route(ctx(MIGRATION), DEFAULT)
    forced = route(ctx(MIGRATION), DEFAULT, override=override)
    assert forced.strategy == override
    assert (forced.score, forced.factors) == (automatic.score, automatic.factors)
    assert len(forced.hats) == STRATEGIES[override].hats


def test_a_forced_strategy_on_a_simple_thought_still_picks_sensible_hats() -> None:
    chosen = route(ctx("What is the capital of France?"), DEFAULT, override="triple")
    assert chosen.hats[0] == "factual"
    assert len(chosen.hats) == 3


def test_a_forced_single_on_a_revision_is_the_critical_hat() -> None:
    chosen = route(ctx(MIGRATION, revised=(1, "Stay on the monolith")), DEFAULT, override="single")
    assert chosen.hats == ("critical",)


@pytest.mark.parametrize("override", ["none", "quintuple", "", "Full"])
def test_an_unknown_override_is_refused(override: str) -> None:
    with pytest.raises(ValueError, match="unknown strategy"):
        route(ctx("What is 2 + 2?"), DEFAULT, override=override)


def test_thresholds_from_settings_change_the_outcome() -> None:
    thought = ctx("Should we use Postgres or MongoDB for the analytics service?")
    default = route(thought, load_settings().router_thresholds())
    eager = route(thought, load_settings(thinking_thresholds="5,10,20").router_thresholds())
    frugal = route(thought, load_settings(thinking_thresholds="60,80,95").router_thresholds())
    assert (default.strategy, eager.strategy, frugal.strategy) == ("double", "full", "single")
    assert default.score == eager.score == frugal.score


def test_thresholds_from_the_environment_reach_the_router(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKING_THRESHOLDS", "2,3,4")
    assert route(ctx("What is the capital of France?"), load_settings().router_thresholds()).strategy == "full"


def test_routing_is_deterministic() -> None:
    first = route(ctx(VENDORS, confidence=0.4), DEFAULT)
    for _ in range(20):
        assert route(ctx(VENDORS, confidence=0.4), DEFAULT) == first


@pytest.mark.parametrize(("label", "thought", "extra"), [(c[0], c[1], c[2]) for c in CASES])
def test_the_factors_add_up_to_the_score(label: str, thought: str, extra: dict[str, Any]) -> None:
    chosen = route(ctx(thought, **extra), DEFAULT)
    total = sum(f.points for f in chosen.factors)
    assert chosen.score == pytest.approx(min(100.0, total)), label
    assert all(f.points > 0 and f.detail for f in chosen.factors), label


def test_only_contributing_factors_are_listed() -> None:
    chosen = route(ctx("Define idempotency."), DEFAULT)
    assert [(f.name, f.detail) for f in chosen.factors] == [("facts", "define")]


def test_factor_details_explain_the_contribution() -> None:
    chosen = route(ctx(MIGRATION, revised=(3, "Stay"), confidence=0.25), DEFAULT)
    details = {f.name: f.detail for f in chosen.factors}
    assert details["questions"] == "2 questions"
    assert details["revision"] == "revises thought 3"
    assert details["low_confidence"] == "confidence 0.25"
    assert "should we" in details["decision"]
    assert details["length"].endswith("words")


@pytest.mark.parametrize(
    "thought",
    [
        "risk? team; should we brainstorm options? " * 5000,
        ("- item one\n" * 3000) + "What is it?",
        "word " * 50_000,
        "",
        "?" * 10_000,
    ],
    ids=["signals", "list", "words", "empty", "questions"],
)
def test_scores_stay_within_0_and_100_for_any_input(thought: str) -> None:
    chosen = route(ctx(thought, revised=(1, "x"), branch_origin=(1, "x"), confidence=0.0), DEFAULT)
    assert 0 <= chosen.score <= 100
    assert chosen.score == round(chosen.score, 1)
    plain = route(ctx(thought), DEFAULT)
    assert 0 <= plain.score <= 100


def test_a_huge_thought_with_every_signal_gets_the_full_team() -> None:
    chosen = route(ctx(MIGRATION * 200), DEFAULT)
    assert (chosen.strategy, chosen.score) == ("full", 100.0)


def test_complexity_carries_the_score_and_factors_for_the_reply() -> None:
    chosen = route(ctx(MIGRATION), DEFAULT)
    complexity = chosen.complexity()
    assert isinstance(complexity, Complexity)
    assert complexity.score == chosen.score
    assert [f.name for f in complexity.factors] == [f.name for f in chosen.factors]
    wire = complexity.model_dump()
    assert wire["score"] == chosen.score
    assert {"name", "points", "detail"} <= set(wire["factors"][0])


def test_full_lists_the_hats_in_their_canonical_order() -> None:
    chosen = route(ctx("Hello."), DEFAULT, override="full")
    assert chosen.hats == HATS


def test_ties_between_equally_relevant_hats_break_in_a_fixed_order() -> None:
    # Nothing in the thought favours any hat: factual first, then critical, optimistic, creative, emotional.
    chosen = route(ctx("Okay."), DEFAULT, override="triple")
    assert chosen.hats == ("factual", "critical", "optimistic")


def test_a_route_is_an_immutable_value() -> None:
    chosen = route(ctx("Okay."), DEFAULT)
    assert isinstance(chosen, Route)
    with pytest.raises(AttributeError):
        chosen.strategy = "full"  # type: ignore[misc]
