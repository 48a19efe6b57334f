"""The routing corpus's shape (split.py), and the shipped model's held-out figures against the constant baselines.

The router is learned (tests/routing/train.py) from every training row with three blind labels, so it is judged on
rows it was not trained on: the figures `train.py` records in the model file, measured by leaving one labelling
panel out (tests/routing/crossval.py has the rest). The frozen part, frozen.jsonl (round 10's, ids `f10-`), is
never read by training; the lead evaluates it once with `thinking-hats route --eval` and records the figures in the
README; only its shape is checked here (the shape test fails until that file is added)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from thinking_hats.routing import model as router_model

CORPUS = Path(__file__).resolve().parent / "routing"
LANGUAGES = ("en", "de", "es", "fr", "pt", "zh", "ja")


def test_the_shipped_model_beats_always_single_and_always_double_on_every_held_out_panel() -> None:
    held_out = router_model.shipped().header["heldOut"]
    assert len(held_out) >= 2
    for panel, figures in held_out.items():
        better = max(figures["alwaysSingle"]["right"], figures["alwaysDouble"]["right"])
        assert figures["router"]["right"] > better, panel
        assert set(figures["router"]["languages"]) == set(LANGUAGES), panel


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
    assert list(corpus)[: len(split.TRAINING)] == list(split.TRAINING)
    assert set(corpus) - set(split.TRAINING) <= {"frozen.jsonl"}
    assert "tuning-monologue.jsonl" in split.TRAINING and "relabels.jsonl" not in split.TRAINING
    assert "tuning-realistic.jsonl" in split.TRAINING and "frozen.jsonl" not in split.TRAINING
    for part in corpus.values():
        for row in part:
            split.check(row)
    assert all(row["id"].startswith("m-") for row in corpus["tuning-monologue.jsonl"])


def test_the_corpus_has_the_shape_issues_9_17_and_23_ask_for() -> None:
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


def test_round_8s_and_round_9s_frozen_parts_carry_three_blind_labels() -> None:
    corpus = split_module().read()
    assert all(
        len({label["labeller"] for label in r["labels"]}) >= 3 and r["accept"] for r in corpus["retired-frozen-8.jsonl"]
    )
    assert len(corpus["retired-frozen-9.jsonl"]) == 1590
    assert all(len({label["labeller"] for label in r["labels"]}) >= 3 for r in corpus["retired-frozen-9.jsonl"])


def test_the_shape_check_names_an_id_in_two_files_and_a_small_or_unlabelled_frozen_part() -> None:
    split = split_module()
    corpus = split.read()
    fresh = [r | {"id": "f10-" + r["id"].removeprefix("f9-")} for r in corpus["retired-frozen-9.jsonl"][:100]]
    moved = fresh[0]
    corpus["tuning.jsonl"].append(moved)
    corpus["frozen.jsonl"] = [{k: v for k, v in r.items() if k != "labels"} | {"accept": ["single"]} for r in fresh]
    problems = split.shape_problems(corpus)
    assert f"id {moved['id']} is in tuning.jsonl and again in frozen.jsonl" in problems
    assert "the frozen part has 100 thoughts, fewer than 1500" in problems
    assert any(p.startswith("100 frozen thoughts have fewer than 3 blind labels") for p in problems)
    assert any(p.startswith(f"tuning.jsonl: id {moved['id']}") for p in problems)


@pytest.mark.parametrize("prefix", ["f3-", "f4-", "f5-", "f6-", "f7-", "f8-", "f9-"])
def test_the_shape_check_names_an_earlier_rounds_id_outside_its_retired_file(prefix: str) -> None:
    split = split_module()
    corpus = split.read()
    retired = split.RETIRED_PREFIXES[prefix]
    old = corpus[retired].pop()
    corpus.setdefault("frozen.jsonl", []).append(old)
    problems = split.shape_problems(corpus)
    assert f"frozen.jsonl: id {old['id']} (only {retired}'s ids start with {prefix})" in problems
    assert f"frozen.jsonl: id {old['id']} (only the frozen part's ids start with f10-)" in problems


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
