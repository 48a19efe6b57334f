"""Check the routing corpus and (re)write its deterministic split.

    python tests/routing/split.py [ALL.jsonl]

Reads every row (from ALL.jsonl if given, else from tuning.jsonl + frozen.jsonl), validates the format and the
coverage minimums, and writes the split: within each language, rows ordered by sha256(id); the first 40% (rounded
up) go to frozen.jsonl, the rest to tuning.jsonl. Relabelling never moves a row; adding rows to a language can.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent
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
FROZEN_SHARE = 0.4


def frozen_ids(rows: list[dict[str, str]]) -> set[str]:
    chosen: set[str] = set()
    for lang in LANGS:
        ids = sorted((r["id"] for r in rows if r["lang"] == lang), key=lambda i: hashlib.sha256(i.encode()).hexdigest())
        chosen.update(ids[: math.ceil(FROZEN_SHARE * len(ids))])
    return chosen


def check(row: dict[str, object]) -> None:
    rid = row["id"]
    assert row["lang"] in LANGS and row["domain"] in DOMAINS and row["kind"] in KINDS, rid
    assert isinstance(row["thought"], str) and row["thought"].strip(), rid
    accept = row["accept"]
    assert isinstance(accept, list) and 1 <= len(accept) <= 2 and all(a in STRATEGIES for a in accept), rid
    if len(accept) == 2:
        assert STRATEGIES.index(accept[1]) - STRATEGIES.index(accept[0]) == 1, f"{rid}: accept must be adjacent"
    assert row.get("hat", "factual") in HATS, rid
    assert row.get("tool", "sequentialthinking") in ("sequentialthinking", "crash"), rid
    if row["kind"] == "crash-low-confidence":
        assert row.get("tool") == "crash" and float(row["confidence"]) < 0.5, rid  # type: ignore[arg-type]
    if row["kind"] == "revision":
        assert row.get("revises"), rid
    if row["kind"] == "branch":
        assert row.get("branch_from") and row.get("branch_id"), rid


def main() -> None:
    sources = [Path(sys.argv[1])] if len(sys.argv) > 1 else [HERE / "tuning.jsonl", HERE / "frozen.jsonl"]
    rows = [json.loads(line) for src in sources for line in src.read_text(encoding="utf-8").splitlines() if line]
    assert len({r["id"] for r in rows}) == len(rows), "duplicate ids"
    for row in rows:
        check(row)
    per_lang = Counter(r["lang"] for r in rows)
    assert len(rows) >= 330 and per_lang["en"] >= 100 and all(per_lang[lang] >= 35 for lang in LANGS), per_lang
    for lang in LANGS:
        domains = Counter(r["domain"] for r in rows if r["lang"] == lang)
        assert all(domains[d] >= 3 for d in DOMAINS), (lang, domains)
    frozen = frozen_ids(rows)
    rows.sort(key=lambda r: (LANGS.index(r["lang"]), DOMAINS.index(r["domain"]), r["id"]))
    for name, part in (("tuning.jsonl", False), ("frozen.jsonl", True)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows if (r["id"] in frozen) == part)
        (HERE / name).write_text(text, encoding="utf-8")
    print(f"{len(rows)} rows checked, {len(frozen)} frozen")


if __name__ == "__main__":
    main()
