"""How far careful labellers agree with the writers' labels: the ceiling on what "agreement" can mean.

    python tests/routing/agreement.py

relabels.jsonl holds two independent labels for each of 630 thoughts: 280 of retired-frozen-5.jsonl (round 5's
frozen part, 40 per language; labellers A and B on one half, C and D on the other) and 350 of retired-frozen-6.jsonl
(round 6's, 50 per language; E and F, G and H), each the first of its language by SHA-256 of the id, relabelled
after that round's one evaluation. The labellers saw what the router sees (the thought, and its revision, branch or
confidence), never the writers' labels nor the router, and labelled by the rules in README.md. Each labeller is
judged as the router is: its cheapest strategy agrees with a row when the writer's `accept` holds it. The router is
judged on the same rows, against the writer, against each labeller, and against everything the writer or either
labeller accepts, by the same rule (strategies only: a labeller names at most one required hat).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "src"))

from thinking_hats.routing.evaluation import ORDER, Labelled, load  # noqa: E402
from thinking_hats.routing.router import DEFAULT_ESCALATION, route  # noqa: E402


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


def writer_accepts(path: Path) -> dict[str, tuple[str, ...]]:
    """id -> the writer's own `accept` (kept for the record; `load` reads the blind labels' consensus)."""
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return {row["id"]: tuple(row["accept"]) for row in rows}


PARTS = {"round 5": "retired-frozen-5.jsonl", "round 6": "retired-frozen-6.jsonl"}


def figures() -> dict[str, tuple[float, float, int]]:
    """Name -> (agreement, share above, rows judged), per part ("round 5: labellers vs the writers")."""
    writers: dict[str, tuple[str, Labelled, tuple[str, ...]]] = {
        row.id: (part, row, written[row.id])
        for part, name in PARTS.items()
        for row in load(HERE / name)
        for written in [writer_accepts(HERE / name)]
    }
    pairs: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for rid, by in relabels().items():
        part, row, writer = writers[rid]
        chosen = route(row.context(), DEFAULT_ESCALATION).strategy
        anyone = sorted({*writer, *(a for accept in by.values() for a in accept)}, key=ORDER.index)
        pairs[f"{part}: router vs the writers"].append(judge(chosen, writer))
        pairs[f"{part}: router vs the writers, {row.lang}"].append(judge(chosen, writer))
        pairs[f"{part}: router vs what anyone accepts"].append(judge(chosen, tuple(anyone)))
        for labeller, accept in by.items():
            pairs[f"{part}: labellers vs the writers"].append(judge(accept[0], writer))
            pairs[f"{part}: labellers vs the writers, {row.lang}"].append(judge(accept[0], writer))
            pairs[f"{part}: router vs the labellers"].append(judge(chosen, accept))
            for other, theirs in by.items():
                if other != labeller:
                    pairs[f"{part}: labellers vs each other"].append(judge(accept[0], theirs))
    return {
        name: (sum(a for a, _ in judged) / len(judged), sum(o for _, o in judged) / len(judged), len(judged))
        for name, judged in pairs.items()
    }


def main() -> int:
    for name, (agree, above, rows) in sorted(
        figures().items(), key=lambda item: (item[0][:7], ", " in item[0], item[0])
    ):
        print(f"{name:45} {rows:4} judged  agreement {agree:6.1%}  above {above:5.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
