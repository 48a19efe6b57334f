"""Benchmark figures quoted in prose, checked against the recorded results (benchmarks/results.json).

A figure in prose names where it comes from with a comment right after it, which Markdown does not show:

    20 concurrent triple thoughts took **1.18x**<!-- fig: concurrency.workers_1.ratio --> one alone

The name is a dotted path into the results' `spread` (what `benchmarks/run.py --repeat N --record` writes and prints
as its last table: [min, median, max] over the runs). The quoted text must be one of those three, a range
`min-max` (or `min to max`), or all three as `min/median/max`, rounded as shown. A unit converts: `ms` quoted for
a path ending in `_s` is the value x 1000, and `s` for one ending in `_ms` the value / 1000.

A file that says `<!-- figures: checked -->` (docs/floor.md does) is checked strictly besides: any
figure with a unit (x, ms, s, %) in its prose that carries no such comment is a failure, and each table row in it
must be a row `run.py` prints from the recorded results.

    python benchmarks/figures.py       # lists every problem in README.md and docs/*.md
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results.json"
STRICT_MARK = "<!-- figures: checked -->"

_NUMBER = r"\d[\d,]*(?:\.\d+)?"
QUOTED = re.compile(
    rf"(?P<text>[-+]?{_NUMBER}(?:\s*(?:/|-|–|to)\s*[-+]?{_NUMBER})*)\s*(?P<unit>x|ms|s|%|MiB|KiB)?\**\s*"
    r"<!-- fig: (?P<path>[\w.\-]+) -->"
)
# A figure with a unit, as strict files may not leave unmarked: "1.2x", "35 ms", "0.46 s", "12%".
UNMARKED = re.compile(rf"(?<![\w.`]){_NUMBER}\s?(?:x|ms|s|%)(?![\w`])")


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    text: str
    why: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.text!r}: {self.why}"


def prose_files(root: Path = ROOT) -> list[Path]:
    """The files whose figures are checked: README.md and docs/*.md, whichever exist."""
    found = [root / "README.md", *sorted((root / "docs").glob("**/*.md"))]
    return [path for path in found if path.is_file()]


def lookup(spread: dict[str, Any], path: str) -> list[float] | None:
    node: Any = spread
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    if isinstance(node, list) and len(node) == 3 and all(isinstance(v, int | float) for v in node):
        return [float(v) for v in node]
    return None


def _scale(path: str, unit: str | None) -> float:
    if unit == "ms" and path.endswith("_s"):
        return 1000.0
    if unit == "s" and path.endswith("_ms"):
        return 0.001
    return 1.0


def _matches(shown: str, value: float) -> bool:
    """Whether `value` rounds to the number as written (as many decimals as it shows; a half either way)."""
    number = shown.replace(",", "")
    decimals = len(number.split(".", 1)[1]) if "." in number else 0
    return abs(value - float(number)) <= 10 ** (-decimals) / 2 + 1e-9


def check_quote(text: str, unit: str | None, path: str, spread: dict[str, Any]) -> str | None:
    """None when the quoted text is what the results recorded at `path`, else why not."""
    recorded = lookup(spread, path)
    if recorded is None:
        return f"no figure {path!r} with min/median/max in {RESULTS.name} (record it with run.py --repeat 3 --record)"
    low, middle, high = (v * _scale(path, unit) for v in recorded)
    numbers = re.findall(_NUMBER, text)
    signs = re.findall(rf"([-+]?){_NUMBER}", text)
    values = [
        ("-" if sign == "-" and i == 0 else "") + n for i, (sign, n) in enumerate(zip(signs, numbers, strict=True))
    ]
    if len(values) == 1 and any(_matches(values[0], v) for v in (low, middle, high)):
        return None
    if len(values) == 2 and _matches(values[0], low) and _matches(values[1], high):
        return None
    if len(values) == 3 and all(_matches(s, v) for s, v in zip(values, (low, middle, high), strict=True)):
        return None
    return f"recorded {path} is min {low:g} / median {middle:g} / max {high:g}"


def check_text(
    name: str, text: str, spread: dict[str, Any], strict: bool, table_rows: set[str] | None = None
) -> list[Problem]:
    problems: list[Problem] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for found in QUOTED.finditer(line):
            why = check_quote(found["text"], found["unit"], found["path"], spread)
            if why is not None:
                problems.append(Problem(name, number, found.group(0), why))
        if not strict:
            continue
        if line.startswith("|"):
            if table_rows is not None and line.strip() not in table_rows and not re.fullmatch(r"[|\-: ]+", line):
                problems.append(Problem(name, number, line[:80], "a table row run.py does not print from the results"))
            continue
        rest = re.sub(r"`[^`]*`", "", QUOTED.sub("", line))
        rest = re.sub(r"<!--.*?-->", "", rest)
        for loose in UNMARKED.finditer(rest):
            problems.append(Problem(name, number, loose.group(0), "a figure without <!-- fig: PATH --> after it"))
    return problems


def check_files(root: Path = ROOT, results: dict[str, Any] | None = None) -> list[Problem]:
    if results is None:
        results = json.loads((root / "benchmarks" / "results.json").read_text())
    spread = results.get("spread", {})
    rows = None
    try:
        sys.path.insert(0, str(ROOT))
        from benchmarks.run import report

        rows = {line.strip() for line in report(results).splitlines() if line.startswith("|")}
    except Exception:  # an old results file the tables cannot be printed from: the rows are checked as missing
        rows = set()
    problems: list[Problem] = []
    for path in prose_files(root):
        text = path.read_text(encoding="utf-8")
        strict = STRICT_MARK in text
        problems += check_text(str(path.relative_to(root)), text, spread, strict, rows)
    return problems


if __name__ == "__main__":
    found = check_files()
    for problem in found:
        print(problem)
    sys.exit(1 if found else 0)
