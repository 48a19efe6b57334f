"""The learned router: a local, deterministic model that really changes how many hats (and which) see a thought,
and says why."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thinking_hats.analysis import HATS, Complexity, ThoughtContext
from thinking_hats.config import load_settings
from thinking_hats.routing import features as router_features
from thinking_hats.routing import model as router_model
from thinking_hats.routing import router
from thinking_hats.routing.router import DEFAULT_ESCALATION, STRATEGIES, Route, route

ROOT = Path(__file__).resolve().parent.parent
LOOKUP = "How many bytes are in a kilobyte?"
DECISION = (
    "Should we shut down the European business? It is 30% of revenue, 400 people work there, the works council "
    "opposes it and the board is split; the bank wants an answer by Friday."
)
PROGRESS = (
    "Ran the migration chain against Tuesday's staging snapshot: 38 of 41 tables migrated cleanly. Next I'll add "
    "the backfill and re-run the whole chain on a fresh snapshot."
)


def ctx(thought: str, **extra: Any) -> ThoughtContext:
    return ThoughtContext(thought=thought, thought_number=2, total_thoughts=5, **extra)


def script(name: str) -> ModuleType:
    # tests/routing/*.py are scripts (tests/ is not a package): load one by path.
    path = ROOT / "tests" / "routing" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"routing_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_lookup_costs_one_factual_call_and_a_hard_decision_costs_more() -> None:
    lookup = route(ctx(LOOKUP))
    decision = route(ctx(DECISION))

    assert (lookup.strategy, lookup.hats, lookup.calls) == ("single", ("factual",), 1)
    assert STRATEGIES[decision.strategy].calls >= 3 and decision.synthesis
    assert decision.score > lookup.score + 20


def test_a_progress_note_stays_single_and_a_low_confidence_crash_step_is_not_cheaper_than_a_confident_one() -> None:
    assert route(ctx(PROGRESS)).strategy == "single"
    doubt = "The cache probably explains the slowness; it could also be the new index."
    low, high = route(ctx(doubt, confidence=0.2)), route(ctx(doubt, confidence=0.95))
    order = list(STRATEGIES)
    assert order.index(low.strategy) >= order.index(high.strategy)
    assert low.score > high.score


def test_the_route_reads_every_language() -> None:
    for thought in (
        "我们应该关闭欧洲业务吗？",
        "ヨーロッパ事業を閉鎖すべきでしょうか？",
        "¿Deberíamos cerrar el negocio en Europa?",
    ):
        assert route(ctx(thought)).strategy != "single", thought
    for thought in ("法国的首都是哪里？", "フランスの首都はどこですか？", "Wie viele Bytes hat ein Kilobyte?"):
        assert route(ctx(thought)).strategy == "single", thought


def test_routing_is_deterministic() -> None:
    first = route(ctx(DECISION, confidence=0.4))
    for _ in range(3):
        assert route(ctx(DECISION, confidence=0.4)) == first


def test_the_factors_give_each_strategys_probability_and_add_up_to_the_score() -> None:
    chosen = route(ctx(DECISION))
    strategies = [f for f in chosen.factors if f.name in STRATEGIES]

    assert [f.name for f in strategies] == list(STRATEGIES)
    probabilities = [float(f.detail.split()[1]) for f in strategies]
    assert sum(probabilities) == pytest.approx(1.0, abs=0.02)
    assert chosen.score == pytest.approx(sum(f.points for f in chosen.factors), abs=0.11)
    assert 0 <= chosen.score <= 100


def test_the_explanation_names_the_features_that_weighed_most_in_plain_words() -> None:
    chosen = route(ctx(DECISION))
    explained = [f.detail for f in chosen.factors if f.name == "feature"]

    assert len(explained) == 3
    assert all(" towards " in d and ("text '" in d or "crash" in d or "revises" in d) for d in explained)
    crash = route(ctx("The cache probably explains the slowness.", confidence=0.3))
    assert any(f.detail.startswith("crash confidence 0.3 (") for f in crash.factors if f.name == "feature")


def test_complexity_carries_the_score_and_factors_for_the_reply() -> None:
    chosen = route(ctx(DECISION))
    complexity = chosen.complexity()
    assert isinstance(complexity, Complexity)
    assert complexity.score == chosen.score and len(complexity.factors) == len(chosen.factors)


@pytest.mark.parametrize(("strategy", "calls"), [("single", 1), ("double", 3), ("triple", 4), ("full", 6)])
def test_an_override_forces_the_strategy_and_the_model_still_picks_the_hats(strategy: str, calls: int) -> None:
    automatic = route(ctx(LOOKUP))
    forced = route(ctx(LOOKUP), DEFAULT_ESCALATION, strategy)

    assert (forced.strategy, forced.calls) == (strategy, calls)
    assert forced.score == automatic.score and forced.factors == automatic.factors
    assert forced.hats[0] == "factual" and len(set(forced.hats)) == len(forced.hats)
    assert strategy != "full" or forced.hats == HATS


def test_a_forced_single_on_a_revision_is_the_critical_hat() -> None:
    chosen = route(
        ctx("The queue choice was wrong: Redis drops jobs on failover.", revised=(1, "Use Redis.")), 0.5, "single"
    )
    assert chosen.hats == ("critical",)


@pytest.mark.parametrize("override", ["none", "quad", ""])
def test_an_unknown_override_is_refused(override: str) -> None:
    with pytest.raises(ValueError, match="unknown strategy"):
        route(ctx("What is 2 + 2?"), DEFAULT_ESCALATION, override)


@pytest.mark.parametrize("escalation", [0.0, 1.0, -0.2, 3.0])
def test_an_escalation_outside_0_and_1_is_refused(escalation: float) -> None:
    with pytest.raises(ValueError, match="probability between 0 and 1"):
        route(ctx(LOOKUP), escalation)


def test_the_escalation_setting_trades_spending_and_reaches_the_router(monkeypatch: pytest.MonkeyPatch) -> None:
    order = list(STRATEGIES)
    thoughts = [DECISION, PROGRESS, LOOKUP, "Should we use Postgres or MongoDB for the analytics service?"]
    eager = [order.index(route(ctx(t), 0.01).strategy) for t in thoughts]
    default = [order.index(route(ctx(t), DEFAULT_ESCALATION).strategy) for t in thoughts]
    frugal = [order.index(route(ctx(t), 0.99).strategy) for t in thoughts]
    assert all(e >= d >= f for e, d, f in zip(eager, default, frugal, strict=True))
    assert sum(eager) > sum(default) > sum(frugal)

    monkeypatch.setenv("THINKING_ESCALATION", "0.01")
    assert load_settings().thinking_escalation == 0.01


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=3000))
def test_any_text_gets_a_route_with_a_score_between_0_and_100(thought: str) -> None:
    chosen = route(ctx(thought))
    assert isinstance(chosen, Route) and 0 <= chosen.score <= 100
    assert len(chosen.hats) == STRATEGIES[chosen.strategy].hats


def test_only_a_bounded_part_of_a_long_thought_is_read() -> None:
    head = "Should we shut down the European business? " * 20
    pasted = "2024-05-01 12:00:01 ERROR [db-pool] connection failed: timeout after 30s\n" * 400
    read = router_features.features(ctx(head + pasted + "Which line fails?"))
    limit = router_features.HEAD + router_features.TAIL + 3
    assert len(read.chars) <= sum(limit + 2 - n for n in router_features.CHAR_SIZES)
    assert "line fails" in read.words and "european" in read.words


def test_the_shipped_model_says_what_it_was_trained_on_and_how_it_did_on_held_out_rows() -> None:
    header = router_model.shipped().header
    assert header["format"] == router_model.FORMAT and tuple(header["outputs"]) == router_model.OUTPUTS
    assert header["trainedOn"]["rows"] > 1000 and len(header["trainedOn"]["sha256"]) == 64
    assert "frozen" not in header["trainedOn"]["files"]
    for result in header["heldOut"].values():
        assert 0 < result["router"]["right"] <= 1


def test_retraining_from_the_corpus_reproduces_the_shipped_model() -> None:
    train = script("train")
    rows = train.examples()
    shipped = router_model.shipped()
    assert train.corpus_hash(rows) == shipped.header["trainedOn"]["sha256"], "the corpus changed: retrain (--write)"
    fresh = train.fit(rows)
    assert fresh.vocabulary == shipped.vocabulary, "python tests/routing/train.py --write"
    assert fresh.header["settings"] == shipped.header["settings"]
    # Weights within a few quantisation steps (a BLAS on another machine may round the last bit differently).
    drift = max(abs(a * fresh.scale - b * shipped.scale) for a, b in zip(fresh.weights, shipped.weights, strict=True))
    assert drift <= 4 * shipped.scale, "python tests/routing/train.py --write"


def test_a_truncated_model_file_is_refused_with_what_is_wrong() -> None:
    data = router_model.shipped()
    blob = script("train").to_bytes(data)
    with pytest.raises(ValueError, match="truncated"):
        router_model.Model.from_bytes(blob[:-200])


def test_serving_never_imports_the_training_library() -> None:
    code = (
        "import sys, json; from thinking_hats.routing.router import route; from thinking_hats.analysis import "
        "ThoughtContext; route(ThoughtContext(thought='Should we?', thought_number=1, total_thoughts=1)); "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('sklearn', 'scipy', 'numpy'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == []


def test_importing_the_router_does_not_read_the_model() -> None:
    code = (
        "import json; from thinking_hats.routing import router, model; "
        "print(json.dumps(model.shipped.cache_info().currsize))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == 0


def test_every_hat_the_model_is_sure_is_required_is_run_even_where_the_strategy_would_be_single() -> None:
    sure = router.HAT_SURE
    scores = router_model.Scores(
        escalate=(0.1, 0.05, 0.01),
        hats={"factual": 0.2, "emotional": 0.1, "critical": sure + 0.1, "optimistic": 0.1, "creative": sure},
        hat_order=("factual", "critical", "creative", "emotional", "optimistic"),
        known=(),
    )
    level = router.choose(scores, DEFAULT_ESCALATION)
    assert router.decide(scores, DEFAULT_ESCALATION) == 0 and router_model.LEVELS[level] == "double"
    assert router.hats_for(scores, "double") == ("critical", "creative")
    assert router.hats_for(scores, "single") == ("critical",)  # a forced single runs the surest hat
    one = replace(scores, hats={**scores.hats, "creative": sure - 0.01})
    assert router_model.LEVELS[router.choose(one, DEFAULT_ESCALATION)] == "single"
