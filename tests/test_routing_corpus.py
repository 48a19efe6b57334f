"""The router against the labelled corpus: agreement per language and overall, and how often it spends more than
the labels allow, on every tuning file (tests/routing/tuning.jsonl, tuning-extra.jsonl, retired-frozen.jsonl: the
frozen part of rounds 1 and 2, retired-frozen-3.jsonl to -7.jsonl: the frozen parts of rounds 3 to 7, each evaluated
once and tuning data in the next round, -8 with three blind labels a row); and the corpus's shape.

The targets (issue 9) are asserted on each tuning file. Where the router does not meet one yet, the case is a strict
xfail (it turns into a failure the day it passes, to be promoted to a plain assertion) and a guard holds the figure
this round reached. The frozen part, frozen.jsonl (round 9's, ids `f9-`), is not asserted against the targets: the
lead evaluates it once with `thinking-hats route --eval` and records the figures in the README; only its shape is
checked here."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from thinking_hats.config import Settings
from thinking_hats.routing.evaluation import Report, evaluate, load
from thinking_hats.routing.terms import LANGUAGES

CORPUS = Path(__file__).resolve().parent / "routing"
PARTS = (
    "tuning",
    "tuning-extra",
    "retired-frozen",
    "retired-frozen-3",
    "retired-frozen-4",
    "retired-frozen-5",
    "retired-frozen-6",
    "retired-frozen-7",
    "retired-frozen-8",
)
ENGLISH_TARGET, OTHER_TARGET, OVER_ROUTED_LIMIT = 0.95, 0.90, 0.05
# Where a file is still below its target, and what this round reached there: a change may not fall below it.
# Round 9 (issue 17) takes length and punctuation for tie-breakers only and reads stated options and doubts: the
# writers' labels of these files rewarded length in places (a long decision told in detail labelled triple/full),
# so some figures fell (all files together 85.4% -> 84.9%) while the monologue steps clients write
# (tuning-monologue.jsonl, 93 rows) went from 45.2% to 86.0%. The figures below are what round 9 reached.
REACHED = {
    "tuning": {"en": 0.9, "es": 0.89},
    "tuning-extra": {"overall": 0.89, "en": 0.88, "es": 0.83, "pt": 0.87, "zh": 0.86},
    "retired-frozen": {"en": 0.87},
    "retired-frozen-3": {"overall": 0.89, "en": 0.82, "es": 0.87},
    "retired-frozen-4": {"en": 0.9},
    "retired-frozen-5": {
        "overall": 0.85,
        "en": 0.86,
        "de": 0.88,
        "es": 0.86,
        "fr": 0.88,
        "pt": 0.85,
        "zh": 0.79,
        "ja": 0.85,
    },
    "retired-frozen-6": {
        "overall": 0.84,
        "en": 0.85,
        "de": 0.89,
        "fr": 0.83,
        "pt": 0.81,
        "zh": 0.75,
        "ja": 0.84,
    },
    "retired-frozen-7": {"overall": 0.87, "en": 0.89, "fr": 0.81, "pt": 0.84, "zh": 0.84, "ja": 0.88},
    # round 8's frozen part against the consensus of its three blind labellers (not its writers' labels)
    "retired-frozen-8": {
        "overall": 0.73,
        "en": 0.7,
        "de": 0.73,
        "es": 0.77,
        "fr": 0.73,
        "pt": 0.79,
        "zh": 0.74,
        "ja": 0.71,
    },
}
# Where a file routes more thoughts above their labels than the limit allows, and what this round reached there.
OVER_REACHED = {
    "retired-frozen-5": 0.066,
    "retired-frozen-6": 0.068,
    "retired-frozen-7": 0.057,
    "retired-frozen-8": 0.194,
}
# Where long pastes with a simple ask still go above double, and how many this round left there.
PASTES_ABOVE = {"retired-frozen-6": 7, "retired-frozen-7": 8, "retired-frozen-8": 17}
# The monologue steps written for round 9 (tuning-monologue.jsonl, 93 rows, too few per language for the targets
# above): what round 9 reached there, agreement and over-routing.
MONOLOGUE_REACHED, MONOLOGUE_OVER = 0.86, 0.119


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
    assert all(tally.rows >= 20 for tally in reports[part].languages.values())
    assert part == "retired-frozen" or all(tally.rows >= 25 for tally in reports[part].languages.values())


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


def above_the_limit(part: str) -> list[pytest.MarkDecorator]:
    if part in OVER_REACHED:
        return [pytest.mark.xfail(strict=True, reason=f"{part}.jsonl is above the over-routing limit (README)")]
    return []


@pytest.mark.parametrize("part", [pytest.param(part, marks=above_the_limit(part)) for part in PARTS])
def test_few_thoughts_are_routed_above_what_their_labels_allow(reports: dict[str, Report], part: str) -> None:
    report = reports[part]
    over = [j for j in report.judged if j.over]
    assert report.over_routed <= OVER_ROUTED_LIMIT, "\n".join(f"{j.row.id} -> {j.route.strategy}" for j in over)


@pytest.mark.parametrize("part", list(OVER_REACHED))
def test_over_routing_above_its_limit_holds_what_this_round_reached(reports: dict[str, Report], part: str) -> None:
    assert reports[part].over_routed <= OVER_REACHED[part]


def pastes_above(part: str) -> list[pytest.MarkDecorator]:
    if part in PASTES_ABOVE:
        return [pytest.mark.xfail(strict=True, reason=f"{part}.jsonl has long pastes above double (README)")]
    return []


def dear_pastes(report: Report) -> list[str]:
    pastes = [j for j in report.judged if j.row.kind == "long-paste"]
    assert len(pastes) >= 10
    return [j.row.id for j in pastes if j.route.strategy in ("triple", "full")]


@pytest.mark.parametrize("part", [pytest.param(part, marks=pastes_above(part)) for part in PARTS])
def test_a_long_paste_with_a_simple_ask_is_never_routed_above_double(reports: dict[str, Report], part: str) -> None:
    assert dear_pastes(reports[part]) == []


def test_monologue_steps_hold_what_round_9_reached() -> None:
    report = evaluate(load(CORPUS / "tuning-monologue.jsonl"), Settings().router_thresholds())
    assert report.agreement >= MONOLOGUE_REACHED, explain(report)
    assert report.over_routed <= MONOLOGUE_OVER, explain(report)


@pytest.mark.parametrize("part", list(PASTES_ABOVE))
def test_long_pastes_above_double_hold_what_this_round_reached(reports: dict[str, Report], part: str) -> None:
    assert len(dear_pastes(reports[part])) <= PASTES_ABOVE[part]


def script(name: str) -> ModuleType:
    # tests/routing/*.py are scripts (tests/ is not a package): load one by path for its checks and figures.
    spec = importlib.util.spec_from_file_location(f"routing_{name}", CORPUS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def split_module() -> ModuleType:
    return script("split")


def test_every_row_of_every_corpus_file_is_well_formed() -> None:
    split = split_module()
    corpus = split.read()
    assert list(corpus) == [*split.TUNING, "frozen.jsonl"]
    assert [f"{part}.jsonl" for part in PARTS] == list(split.TUNING)
    for part in corpus.values():
        for row in part:
            split.check(row)
    # the round-9 monologue rows (not in split.py's lists): the same checks, and ids no other file holds
    monologue = [json.loads(line) for line in (CORPUS / "tuning-monologue.jsonl").read_text("utf-8").splitlines()]
    ids = {row["id"] for part in corpus.values() for row in part}
    for row in monologue:
        split.check(row)
        assert row["id"].startswith("m-") and row["id"] not in ids, row["id"]
    assert len({row["id"] for row in monologue}) == len(monologue)


def test_the_corpus_has_the_shape_issues_9_and_17_ask_for() -> None:
    split = split_module()
    corpus = split.read()
    rows = [row for part in corpus.values() for row in part]
    frozen = corpus["frozen.jsonl"]
    others = {lang: sum(r["lang"] == lang for r in rows) for lang in split.LANGS[1:]}
    assert len(rows) >= 300 and min(others.values()) >= 25, others
    assert {r["domain"] for r in rows} == set(split.DOMAINS) and {r["lang"] for r in rows} == set(split.LANGS)
    assert len(frozen) >= 1500 and 2 * sum(r["style"] == "monologue" for r in frozen) >= len(frozen)
    assert all(len({label["labeller"] for label in r["labels"]}) >= 3 for r in frozen)
    assert [r["id"] for r in frozen if not r["id"].startswith(split.FROZEN_PREFIX)] == []
    frozen_others = {lang: sum(r["lang"] == lang for r in frozen) for lang in split.LANGS[1:]}
    assert min(frozen_others.values()) >= 25 and {r["domain"] for r in frozen} == set(split.DOMAINS), frozen_others
    assert [r["id"] for r in rows if r["id"].startswith(split.FROZEN_PREFIX)] == [r["id"] for r in frozen]
    for prefix, retired in split.RETIRED_PREFIXES.items():
        assert [r["id"] for r in rows if r["id"].startswith(prefix)] == [r["id"] for r in corpus[retired]]
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == len(ids), "an id is in two files (or twice in one)"
    assert split.shape_problems(corpus) == []


def test_round_8s_frozen_part_carries_three_blind_labels_besides_its_writers() -> None:
    retired = split_module().read()["retired-frozen-8.jsonl"]
    assert all(len({label["labeller"] for label in r["labels"]}) >= 3 and r["accept"] for r in retired)


def test_the_shape_check_names_an_id_in_two_files_and_a_small_or_unlabelled_frozen_part() -> None:
    split = split_module()
    corpus = split.read()
    moved = corpus["frozen.jsonl"][0]
    corpus["tuning.jsonl"].append(moved)
    corpus["frozen.jsonl"] = [
        {k: v for k, v in r.items() if k != "labels"} | {"accept": ["single"]} for r in corpus["frozen.jsonl"][:100]
    ]
    problems = split.shape_problems(corpus)
    assert f"id {moved['id']} is in tuning.jsonl and again in frozen.jsonl" in problems
    assert "the frozen part has 100 thoughts, fewer than 1500" in problems
    assert any(p.startswith("100 frozen thoughts have fewer than 3 blind labels") for p in problems)
    assert any(p.startswith(f"tuning.jsonl: id {moved['id']}") for p in problems)


@pytest.mark.parametrize("prefix", ["f3-", "f4-", "f5-", "f6-", "f7-", "f8-"])
def test_the_shape_check_names_an_earlier_rounds_id_outside_its_retired_file(prefix: str) -> None:
    split = split_module()
    corpus = split.read()
    retired = split.RETIRED_PREFIXES[prefix]
    old = corpus[retired].pop()
    corpus["frozen.jsonl"].append(old)
    problems = split.shape_problems(corpus)
    assert f"frozen.jsonl: id {old['id']} (only {retired}'s ids start with {prefix})" in problems
    assert f"frozen.jsonl: id {old['id']} (only the frozen part's ids start with f9-)" in problems


def agreement_module() -> ModuleType:
    return script("agreement")


def test_each_relabelled_thought_has_two_independent_labels() -> None:
    split = split_module()
    written = {
        row["id"]: row
        for name in ("retired-frozen-5.jsonl", "retired-frozen-6.jsonl")
        for row in map(json.loads, (CORPUS / name).read_text(encoding="utf-8").splitlines())
    }
    relabels = agreement_module().relabels()
    assert len(relabels) == 630 and set(relabels) <= set(written)
    pairs = {frozenset(by) for by in relabels.values()}
    assert pairs == {frozenset("AB"), frozenset("CD"), frozenset("EF"), frozenset("GH")}
    for rid, by in relabels.items():
        for accept in by.values():
            split.check({**written[rid], "accept": list(accept)})  # the labels obey the corpus's format


def test_careful_labellers_agree_with_the_writers_on_three_thoughts_in_four() -> None:
    found = agreement_module().figures()
    assert [round(found[f"round {n}: labellers vs the writers"][0], 3) for n in (5, 6)] == [0.755, 0.789]
    assert found["round 5: labellers vs the writers"][1:] == (0.0, 560)
    assert found["round 6: labellers vs the writers"][1:] == (0.0, 700)
