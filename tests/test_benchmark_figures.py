"""A benchmark figure in prose is one the recorded results contain: quoted with its name, it must be the recorded
min, median, max, their range or all three; in a checked file an unnamed figure fails too."""

from __future__ import annotations

from typing import Any

from benchmarks.figures import check_files, check_text

SPREAD: dict[str, Any] = {
    "concurrency": {"workers_1": {"ratio": [1.21, 1.25, 1.32], "alone_s": [0.41, 0.42, 0.45]}},
    "think": [{"ours_minus_llm_overhead_ms": [-40, -12.5, 3]}],
}


def problems(text: str, strict: bool = False) -> list[str]:
    return [p.why for p in check_text("x.md", text, SPREAD, strict)]


def test_a_quoted_figure_must_be_the_recorded_min_median_or_max() -> None:
    assert problems("took **1.25x**<!-- fig: concurrency.workers_1.ratio --> one alone") == []
    assert problems("took 1.21x <!-- fig: concurrency.workers_1.ratio -->") == []
    assert problems("took **1.2x**<!-- fig: concurrency.workers_1.ratio -->") == []  # 1.21 as shown to one decimal
    (why,) = problems("took **1.19x**<!-- fig: concurrency.workers_1.ratio -->")
    assert "min 1.21 / median 1.25 / max 1.32" in why


def test_a_range_is_min_to_max_and_three_figures_are_min_median_max() -> None:
    assert problems("1.21-1.32x<!-- fig: concurrency.workers_1.ratio -->") == []
    assert problems("1.21/1.25/1.32x<!-- fig: concurrency.workers_1.ratio -->") == []
    assert problems("1.21-1.25x<!-- fig: concurrency.workers_1.ratio -->") != []  # the max is not 1.25


def test_units_convert_between_seconds_and_milliseconds() -> None:
    assert problems("alone 420 ms<!-- fig: concurrency.workers_1.alone_s -->") == []
    assert problems("-40 to 3 ms<!-- fig: think.0.ours_minus_llm_overhead_ms -->") == []
    assert problems("alone 400 ms<!-- fig: concurrency.workers_1.alone_s -->") != []


def test_a_figure_the_results_do_not_have_fails_naming_it() -> None:
    (why,) = problems("imports: **-120 ms**<!-- fig: startup_imports.extra_ms -->")
    assert "no figure 'startup_imports.extra_ms'" in why


def test_a_checked_file_may_not_quote_a_figure_without_its_name() -> None:
    assert problems("the SDK's transform is ~1.9 ms a call", strict=True) != []
    assert problems("the SDK's transform is ~1.9 ms a call", strict=False) == []  # README prose: named ones only
    assert problems("took **1.25x**<!-- fig: concurrency.workers_1.ratio -->, `--workers 2`", strict=True) == []


def test_every_figure_in_the_readme_the_docs_and_figures_md_is_a_recorded_one() -> None:
    assert [str(p) for p in check_files()] == []
