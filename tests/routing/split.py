"""Check the routing corpus: every row of every file, and the shape issue 9 asks of it.

    python tests/routing/split.py

The split is by authorship, not by hash: frozen.jsonl holds round 8's frozen part (ids `f8-`), written during
round 8 by eight writers who never saw the router, never read while tuning, and evaluated once with the router
frozen at the end of round 8. The rows the router was tuned on are tuning data:
tuning.jsonl, tuning-extra.jsonl, retired-frozen.jsonl (the frozen part of rounds 1 and 2) and
retired-frozen-3.jsonl to -7.jsonl (the frozen parts of rounds 3 to 7, ids `f3-` to `f7-`, each tuned on in the next
round). Nothing is rewritten here: rows never move into the frozen part, and a later round needs a fresh frozen
part of its own.
Prints the counts, or the problems found (exit status 1).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TUNING = (
    "tuning.jsonl",
    "tuning-extra.jsonl",
    "retired-frozen.jsonl",
    "retired-frozen-3.jsonl",
    "retired-frozen-4.jsonl",
    "retired-frozen-5.jsonl",
    "retired-frozen-6.jsonl",
    "retired-frozen-7.jsonl",
)
FROZEN = "frozen.jsonl"
FROZEN_PREFIX = "f8-"
# Earlier rounds' frozen parts keep their id prefixes in the file they were retired to, and only there.
RETIRED_PREFIXES = {
    "f3-": "retired-frozen-3.jsonl",
    "f4-": "retired-frozen-4.jsonl",
    "f5-": "retired-frozen-5.jsonl",
    "f6-": "retired-frozen-6.jsonl",
    "f7-": "retired-frozen-7.jsonl",
}
LANGS = ("en", "de", "es", "fr", "pt", "zh", "ja")
DOMAINS = ("software", "operations", "medicine", "business", "people", "research", "law", "education")
KINDS = (
    "lookup",
    "step",
    "long-paste",
    "short-high-stakes",
    "decision",
    "tradeoff",
    "revision",
    "branch",
    "crash-low-confidence",
    "planning",
    "ideation",
    "estimate",
)
STRATEGIES = ("single", "double", "triple", "full")
HATS = ("factual", "emotional", "critical", "optimistic", "creative")
# Issue 9's minimums: thoughts in all, per language outside English, and the frozen part's share of all rows.
MIN_ROWS, MIN_PER_OTHER_LANGUAGE, MIN_FROZEN_SHARE = 300, 25, 1 / 3

Row = dict[str, Any]


def read(directory: Path = HERE) -> dict[str, list[Row]]:
    """Every corpus file's rows, by file name (tuning files first, then the frozen part)."""
    return {
        name: [json.loads(line) for line in (directory / name).read_text(encoding="utf-8").splitlines() if line]
        for name in (*TUNING, FROZEN)
    }


def check(row: Row) -> None:
    rid = row.get("id")
    assert isinstance(rid, str) and rid, f"row without an id: {row}"
    assert row.get("lang") in LANGS and row.get("domain") in DOMAINS and row.get("kind") in KINDS, rid
    assert isinstance(row["thought"], str) and row["thought"].strip(), rid
    accept = row["accept"]
    assert isinstance(accept, list) and 1 <= len(accept) <= 2 and all(a in STRATEGIES for a in accept), rid
    if len(accept) == 2:
        assert STRATEGIES.index(accept[1]) - STRATEGIES.index(accept[0]) == 1, f"{rid}: accept must be adjacent"
    assert row.get("hat", "factual") in HATS, rid
    assert row.get("tool", "sequentialthinking") in ("sequentialthinking", "crash"), rid
    if row["kind"] == "crash-low-confidence":
        assert row.get("tool") == "crash" and float(row["confidence"]) < 0.5, rid
    if row["kind"] == "revision":
        assert row.get("revises"), rid
    if row["kind"] == "branch":
        assert row.get("branch_from") and row.get("branch_id"), rid


def shape_problems(corpus: dict[str, list[Row]]) -> list[str]:
    """What keeps the corpus from the shape issue 9 asks for; empty when it has it."""
    problems: list[str] = []
    rows = [row for part in corpus.values() for row in part]
    frozen = corpus.get(FROZEN, [])
    where: dict[str, str] = {}
    for name, part in corpus.items():
        for row in part:
            if row["id"] in where:
                problems.append(f"id {row['id']} is in {where[row['id']]} and again in {name}")
            where.setdefault(row["id"], name)
            if (name == FROZEN) != row["id"].startswith(FROZEN_PREFIX):
                problems.append(f"{name}: id {row['id']} (only the frozen part's ids start with {FROZEN_PREFIX})")
            for prefix, home in RETIRED_PREFIXES.items():
                if (name == home) != row["id"].startswith(prefix):
                    problems.append(f"{name}: id {row['id']} (only {home}'s ids start with {prefix})")
    if len(rows) < MIN_ROWS:
        problems.append(f"{len(rows)} thoughts in all, fewer than {MIN_ROWS}")
    if len(frozen) < MIN_FROZEN_SHARE * len(rows):
        problems.append(f"the frozen part has {len(frozen)} of {len(rows)} thoughts, less than a third")
    for label, part in (("the corpus", rows), ("the frozen part", frozen)):
        languages = Counter(r["lang"] for r in part)
        domains = Counter(r["domain"] for r in part)
        problems += [f"{label} has no {lang} thought" for lang in LANGS if not languages[lang]]
        problems += [f"{label} has no {domain} thought" for domain in DOMAINS if not domains[domain]]
        problems += [
            f"{label} has {languages[lang]} {lang} thoughts, fewer than {MIN_PER_OTHER_LANGUAGE}"
            for lang in LANGS[1:]
            if 0 < languages[lang] < MIN_PER_OTHER_LANGUAGE
        ]
    return problems


def counts(corpus: dict[str, list[Row]]) -> str:
    lines = []
    for name, part in corpus.items():
        languages = Counter(r["lang"] for r in part)
        cheapest = Counter(r["accept"][0] for r in part)
        lines.append(
            f"{name:<22} {len(part):4}  "
            + " ".join(f"{lang} {languages[lang]}" for lang in LANGS)
            + "  | cheapest "
            + " ".join(f"{s} {cheapest[s]}" for s in STRATEGIES)
        )
    total = sum(len(part) for part in corpus.values())
    lines.append(f"{'all':<22} {total:4}  frozen {len(corpus[FROZEN])} ({len(corpus[FROZEN]) / total:.1%})")
    return "\n".join(lines)


def main() -> int:
    corpus = read()
    for part in corpus.values():
        for row in part:
            check(row)
    print(counts(corpus))
    problems = shape_problems(corpus)
    print("\n".join(problems) or "shape: as issue 9 asks")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
