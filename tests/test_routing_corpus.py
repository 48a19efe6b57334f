"""The router against the labelled corpus (tests/routing/tuning.jsonl): agreement per language and overall, and
how often it spends more than the labels allow. Only the tuning part is asserted here; the frozen part is
evaluated once, by `thinking-hats route --eval tests/routing/frozen.jsonl`, and its figures are in the README."""

from __future__ import annotations

from pathlib import Path

import pytest

from thinking_hats.config import Settings
from thinking_hats.router_terms import LANGUAGES
from thinking_hats.routing_eval import Report, evaluate, load

TUNING = Path(__file__).resolve().parent / "routing" / "tuning.jsonl"
ENGLISH_TARGET, OTHER_TARGET, OVER_ROUTED_LIMIT = 0.95, 0.90, 0.05


@pytest.fixture(scope="module")
def report() -> Report:
    return evaluate(load(TUNING), Settings().router_thresholds())


def explain(report: Report, lang: str | None = None) -> str:
    misses = [j for j in report.misses() if lang is None or j.row.lang == lang]
    return "\n".join(
        f"{j.row.id}: accept {'/'.join(j.row.accept)}{' with ' + j.row.hat if j.row.hat else ''}, "
        f"chose {j.route.strategy} {j.route.hats} at {j.route.score}"
        for j in misses
    )


def test_the_tuning_part_covers_every_language(report: Report) -> None:
    assert set(report.languages) == set(LANGUAGES)
    assert all(total >= 25 for _, total in report.languages.values())


@pytest.mark.parametrize("lang", LANGUAGES)
def test_agreement_per_language_meets_its_target(report: Report, lang: str) -> None:
    target = ENGLISH_TARGET if lang == "en" else OTHER_TARGET
    assert report.language_agreement(lang) >= target, explain(report, lang)


def test_overall_agreement_is_at_least_ninety_percent(report: Report) -> None:
    assert report.agreement >= OTHER_TARGET, explain(report)


def test_few_thoughts_are_routed_above_what_their_labels_allow(report: Report) -> None:
    over = [j for j in report.judged if j.over]
    assert report.over_routed <= OVER_ROUTED_LIMIT, "\n".join(f"{j.row.id} -> {j.route.strategy}" for j in over)


def test_a_long_paste_with_a_simple_ask_is_never_routed_above_double(report: Report) -> None:
    pastes = [j for j in report.judged if j.row.kind == "long-paste"]
    assert len(pastes) >= 20
    assert [j.row.id for j in pastes if j.route.strategy in ("triple", "full")] == []
