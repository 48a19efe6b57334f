"""The router against the labelled corpus: agreement per language and overall, and how often it spends more than
the labels allow, on both tuning files (tests/routing/tuning.jsonl and tests/routing/tuning-extra.jsonl).

The targets (issue 9) are asserted on each file. tuning-extra.jsonl was written after the first round of tuning, in
new situations and wordings; the router does not meet the agreement targets there yet, so those cases are strict
xfails (they turn into failures the day they pass, to be promoted to plain assertions) and a guard holds the figures
this round reached. The frozen part is evaluated once, by `thinking-hats route --eval tests/routing/frozen.jsonl`,
and its figures are in the README."""

from __future__ import annotations

from pathlib import Path

import pytest

from thinking_hats.config import Settings
from thinking_hats.router_terms import LANGUAGES
from thinking_hats.routing_eval import Report, evaluate, load

CORPUS = Path(__file__).resolve().parent / "routing"
PARTS = ("tuning", "tuning-extra")
ENGLISH_TARGET, OTHER_TARGET, OVER_ROUTED_LIMIT = 0.95, 0.90, 0.05
# What this round reached on tuning-extra.jsonl (overall, then per language): a change may not fall below it.
EXTRA_REACHED = {"overall": 0.87, "en": 0.90, "de": 0.83, "es": 0.93, "fr": 0.87, "pt": 0.83, "zh": 0.90, "ja": 0.80}
EXTRA_SHORT = {"overall", "en", "de", "fr", "pt", "ja"}  # where tuning-extra.jsonl is still below the target


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
    if part == "tuning-extra" and lang in EXTRA_SHORT:
        return [pytest.mark.xfail(strict=True, reason="tuning-extra.jsonl is below the target (README)")]
    return []


@pytest.mark.parametrize("part", PARTS)
def test_each_tuning_file_covers_every_language(reports: dict[str, Report], part: str) -> None:
    assert set(reports[part].languages) == set(LANGUAGES)
    assert all(total >= 25 for _, total in reports[part].languages.values())


@pytest.mark.parametrize(
    ("part", "lang"),
    [pytest.param(part, lang, marks=short_of_target(part, lang)) for part in PARTS for lang in ("overall", *LANGUAGES)],
)
def test_agreement_meets_its_target(reports: dict[str, Report], part: str, lang: str) -> None:
    wanted = OTHER_TARGET if lang == "overall" else target(lang)
    report = reports[part]
    assert agreement(report, lang) >= wanted, explain(report, None if lang == "overall" else lang)


@pytest.mark.parametrize("lang", ["overall", *LANGUAGES])
def test_agreement_on_the_extra_tuning_file_holds_what_this_round_reached(
    reports: dict[str, Report], lang: str
) -> None:
    report = reports["tuning-extra"]
    assert agreement(report, lang) >= EXTRA_REACHED[lang], explain(report, None if lang == "overall" else lang)


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
