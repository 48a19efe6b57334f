"""How far careful labellers agree with the writers' labels: the ceiling on what "agreement" can mean.

    python tests/routing/agreement.py

relabels.jsonl holds 560 labels of 280 thoughts of retired-frozen-5.jsonl (round 5's frozen part, 40 per language,
the first by SHA-256 of the id): four labellers (A and B the same 140 thoughts, C and D the other 140) who saw what
the router sees (the thought, and its revision, branch or confidence), never the writer's labels nor the router, and
labelled by the rules in README.md. Each labeller is then judged as the router is: its cheapest strategy agrees
with a row when the writer's `accept` holds it. The router is judged on the same rows, against the writer and
against each labeller, by the same rule (strategies only: a labeller names at most one required hat).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "src"))

from thinking_hats.router import route  # noqa: E402
from thinking_hats.routing_eval import ORDER, Labelled, load  # noqa: E402

THRESHOLDS = (25, 45, 65)


def relabels(path: Path = HERE / "relabels.jsonl") -> dict[str, dict[str, tuple[str, ...]]]:
    """id -> labeller -> accept."""
    found: dict[str, dict[str, tuple[str, ...]]] = defaultdict(dict)
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        found[row["id"]][row["labeller"]] = tuple(row["accept"])
    return dict(found)


def judge(choice: str, accept: tuple[str, ...]) -> tuple[bool, bool]:
    """(agrees, above): `choice` is in `accept`, or dearer than all of it."""
    return choice in accept, ORDER.index(choice) > max(ORDER.index(a) for a in accept)


def figures() -> dict[str, tuple[float, float, int]]:
    """Name -> (agreement, share above, rows judged)."""
    writers: dict[str, Labelled] = {row.id: row for row in load(HERE / "retired-frozen-5.jsonl")}
    pairs: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for rid, by in relabels().items():
        row = writers[rid]
        chosen = route(row.context(), THRESHOLDS).strategy
        pairs["router vs the writers"].append(judge(chosen, row.accept))
        for labeller, accept in by.items():
            pairs["labellers vs the writers"].append(judge(accept[0], row.accept))
            pairs[f"labellers vs the writers, {row.lang}"].append(judge(accept[0], row.accept))
            pairs["router vs the labellers"].append(judge(chosen, accept))
            for other, theirs in by.items():
                if other != labeller:
                    pairs["labellers vs each other"].append(judge(accept[0], theirs))
        pairs[f"router vs the writers, {row.lang}"].append(judge(chosen, row.accept))
    return {
        name: (sum(a for a, _ in judged) / len(judged), sum(o for _, o in judged) / len(judged), len(judged))
        for name, judged in pairs.items()
    }


def main() -> int:
    for name, (agree, above, rows) in sorted(figures().items(), key=lambda item: (", " in item[0], item[0])):
        print(f"{name:34} {rows:4} judged  agreement {agree:6.1%}  above {above:5.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
