"""The router against the labelled corpus: agreement per language and overall, and how often it spends more than
the labels allow, on every tuning file (tests/routing/tuning.jsonl, tuning-extra.jsonl, and frozen.jsonl: the old
frozen part, evaluated twice and so tuning data now).

The targets (issue 9) are asserted on each file. Where the router does not meet one yet, the case is a strict xfail
(it turns into a failure the day it passes, to be promoted to a plain assertion) and a guard holds the figure this
round reached. How the router does on thoughts it was not tuned on is measured elsewhere: by cross-validation
(tests/routing/crossval.py) and, once, on the new frozen part (figures in the README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from thinking_hats.config import Settings
from thinking_hats.router_terms import LANGUAGES
from thinking_hats.routing_eval import Report, evaluate, load

CORPUS = Path(__file__).resolve().parent / "routing"
PARTS = ("tuning", "tuning-extra", "frozen")
ENGLISH_TARGET, OTHER_TARGET, OVER_ROUTED_LIMIT = 0.95, 0.90, 0.05
# Where a file is still below its target, and what this round reached there: a change may not fall below it.
REACHED = {
    "tuning-extra": {"overall": 0.88, "en": 0.91, "de": 0.83, "fr": 0.87, "pt": 0.87, "ja": 0.80},
    "frozen": {"en": 0.875, "de": 0.86},
}


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    thresholds = Settings().router_thresholds()
    return {part: evaluate(load(CORPUS / f"{part}.jsonl"), thresholds) for part in PARTS}


def explain(report: Report, lang: str | None = None) -> str:
    misses = [j for j in report.misses() if lang is None or j.row.lang == lang]
    return "\n".join(
        f"{j.row.id}: accept {'/'.join(j.row.accept)}{' with ' + j.row.hat if j.row.hat else ''}, "
        f"chose {j.route.strategy} {j.route.hats} at {j.route.score}"
        for j in misses
    )


def target(lang: str) -> float:
    return ENGLISH_TARGET if lang == "en" else OTHER_TARGET


def agreement(report: Report, lang: str) -> float:
    return report.agreement if lang == "overall" else report.language_agreement(lang)


def short_of_target(part: str, lang: str) -> list[pytest.MarkDecorator]:
    if lang in REACHED.get(part, {}):
        return [pytest.mark.xfail(strict=True, reason=f"{part}.jsonl is below the target (README)")]
    return []


@pytest.mark.parametrize("part", PARTS)
def test_each_tuning_file_covers_every_language(reports: dict[str, Report], part: str) -> None:
    assert set(reports[part].languages) == set(LANGUAGES)
    assert all(total >= 20 for _, total in reports[part].languages.values())
    assert part == "frozen" or all(total >= 25 for _, total in reports[part].languages.values())


@pytest.mark.parametrize(
    ("part", "lang"),
    [pytest.param(part, lang, marks=short_of_target(part, lang)) for part in PARTS for lang in ("overall", *LANGUAGES)],
)
def test_agreement_meets_its_target(reports: dict[str, Report], part: str, lang: str) -> None:
    wanted = OTHER_TARGET if lang == "overall" else target(lang)
    report = reports[part]
    assert agreement(report, lang) >= wanted, explain(report, None if lang == "overall" else lang)


@pytest.mark.parametrize(("part", "lang"), [(part, lang) for part, reached in REACHED.items() for lang in reached])
def test_agreement_below_its_target_holds_what_this_round_reached(
    reports: dict[str, Report], part: str, lang: str
) -> None:
    report = reports[part]
    assert agreement(report, lang) >= REACHED[part][lang], explain(report, None if lang == "overall" else lang)


@pytest.mark.parametrize("part", PARTS)
def test_few_thoughts_are_routed_above_what_their_labels_allow(reports: dict[str, Report], part: str) -> None:
    report = reports[part]
    over = [j for j in report.judged if j.over]
    assert report.over_routed <= OVER_ROUTED_LIMIT, "\n".join(f"{j.row.id} -> {j.route.strategy}" for j in over)


@pytest.mark.parametrize("part", PARTS)
def test_a_long_paste_with_a_simple_ask_is_never_routed_above_double(reports: dict[str, Report], part: str) -> None:
    pastes = [j for j in reports[part].judged if j.row.kind == "long-paste"]
    assert len(pastes) >= 10
    assert [j.row.id for j in pastes if j.route.strategy in ("triple", "full")] == []
