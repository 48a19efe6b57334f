"""Measure the learned router on held-out rows only: never on the rows it was trained on.

    python tests/routing/crossval.py                 # leave one labelling panel out, leave one writer group out
    python tests/routing/crossval.py --curve         # ... and the learning curve (accuracy against training rows)
    python tests/routing/crossval.py --sweep         # ... and the cost knob (THINKING_ESCALATION) curve
    python tests/routing/crossval.py --json FILE     # all of it as JSON

Rows are train.py's (every training row with three blind labels and a consensus; the frozen part is never read).
A labelling panel is a set of labellers who label rows together (A-D on retired-frozen-8, P-R on retired-frozen-9);
a writer group is a file. For each group, a model is trained on every other group and judged on it as
`thinking-hats route --eval` judges: right (strategy in the consensus and every hat two labellers require among the
hats run), under, over, the required hat present, the model calls against the cheapest consensus strategy's; and
beside it always-single and always-double on the same rows.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "src"))
sys.path.insert(0, str(HERE))

import train  # noqa: E402

from thinking_hats.routing.model import LEVELS, Model, Scores  # noqa: E402
from thinking_hats.routing.router import DEFAULT_ESCALATION, STRATEGIES, choose, hats_for  # noqa: E402

CALLS = [STRATEGIES[s].calls for s in LEVELS]
KNOB = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)


def judge(rows: Sequence[train.Example], chosen: Sequence[tuple[int, tuple[str, ...]]]) -> dict[str, Any]:
    """Right / under / over / required hat present / cost of `chosen` (a step and hats per row)."""
    right = under = over = need_hat = hat_present = calls = cheapest = 0
    by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for ex, (level, hats) in zip(rows, chosen, strict=True):
        accept = [LEVELS.index(s) for s in ex.row.accept]
        hat = ex.row.hat
        present = hat is None or hat in hats
        ok = level in accept and present
        right += ok
        under += level < accept[0]
        over += level > accept[-1]
        need_hat += hat is not None
        hat_present += hat is not None and hat in hats
        calls += CALLS[level]
        cheapest += CALLS[accept[0]]
        by_lang[ex.row.lang][0] += ok
        by_lang[ex.row.lang][1] += 1
        by_kind[ex.row.kind or "-"][0] += ok
        by_kind[ex.row.kind or "-"][1] += 1
    n = len(rows) or 1
    return {
        "rows": len(rows),
        "right": round(right / n, 4),
        "under": round(under / n, 4),
        "over": round(over / n, 4),
        "hatPresent": round(hat_present / need_hat, 4) if need_hat else None,
        "cost": round(calls / cheapest, 3) if cheapest else None,
        "languages": {lang: round(r / t, 4) for lang, (r, t) in sorted(by_lang.items())},
        "kinds": {kind: [round(r / t, 4), t] for kind, (r, t) in sorted(by_kind.items())},
    }


def routes(scores: Sequence[Scores], escalation: float) -> list[tuple[int, tuple[str, ...]]]:
    chosen = []
    for s in scores:
        level = choose(s, escalation)
        chosen.append((level, hats_for(s, LEVELS[level])))
    return chosen


def constant(rows: Sequence[train.Example], level: int) -> list[tuple[int, tuple[str, ...]]]:
    """Always one strategy, with the hat the labellers require where it has room for one (a generous baseline)."""
    size = STRATEGIES[LEVELS[level]].hats
    return [
        (level, (ex.row.hat or "factual",) * min(size, 1) + ("critical", "optimistic", "creative")[: size - 1])
        for ex in rows
    ]


def score_all(model: Model, rows: Sequence[train.Example]) -> list[Scores]:
    return [model.scores(ex.features) for ex in rows]


def group_of(ex: train.Example, by: str) -> str:
    return ex.panel if by == "panel" else ex.file


def held_out(
    rows: Sequence[train.Example],
    by: str,
    escalation: float = DEFAULT_ESCALATION,
    settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Leave one group out (`by`: panel or file): each group judged by a model trained on the others; with fewer
    than two groups there is nothing to hold out (an empty result)."""
    groups = sorted({group_of(ex, by) for ex in rows})
    result: dict[str, Any] = {}
    for group in groups if len(groups) > 1 else ():
        test = [ex for ex in rows if group_of(ex, by) == group]
        model = train.fit([ex for ex in rows if group_of(ex, by) != group], settings or train.SETTINGS)
        result[group] = {
            "router": judge(test, routes(score_all(model, test), escalation)),
            "alwaysSingle": judge(test, constant(test, 0)),
            "alwaysDouble": judge(test, constant(test, 1)),
        }
    return result


def sweep(rows: Sequence[train.Example], by: str) -> dict[str, Any]:
    """The cost knob: right / under / over / cost per THINKING_ESCALATION, pooled over the held-out groups."""
    pooled_rows: list[train.Example] = []
    pooled: list[Scores] = []
    for group in sorted({group_of(ex, by) for ex in rows}):
        test = [ex for ex in rows if group_of(ex, by) == group]
        model = train.fit([ex for ex in rows if group_of(ex, by) != group])
        pooled_rows += test
        pooled += score_all(model, test)
    return {f"{knob:g}": judge(pooled_rows, routes(pooled, knob)) for knob in KNOB}


def curve(rows: Sequence[train.Example], by: str) -> dict[str, Any]:
    """Accuracy on each held-out group against how many training rows the model had (a deterministic subsample:
    every k-th row of the other groups)."""
    result: dict[str, Any] = {}
    for group in sorted({group_of(ex, by) for ex in rows}):
        test = [ex for ex in rows if group_of(ex, by) == group]
        others = [ex for ex in rows if group_of(ex, by) != group]
        points = {}
        for share in (0.125, 0.25, 0.5, 1.0):
            step = round(1 / share)
            subset = others[::step]
            model = train.fit(subset)
            points[len(subset)] = judge(test, routes(score_all(model, test), DEFAULT_ESCALATION))["right"]
        result[group] = points
    return result


def table(title: str, results: dict[str, Any]) -> str:
    lines = [
        title,
        f"{'held out':<24}{'rows':>6}{'right':>8}{'under':>8}{'over':>8}{'hat':>8}{'cost':>7}  single  double",
    ]
    for group, r in results.items():
        m = r["router"]
        lines.append(
            f"{group:<24}{m['rows']:>6}{m['right']:>8.1%}{m['under']:>8.1%}{m['over']:>8.1%}"
            f"{(m['hatPresent'] or 0):>8.1%}{m['cost']:>7.2f}  {r['alwaysSingle']['right']:>6.1%}  "
            f"{r['alwaysDouble']['right']:>6.1%}"
        )
        lines.append(f"{'':<24}" + "  ".join(f"{lang} {v:.1%}" for lang, v in m["languages"].items()))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--curve", action="store_true", help="learning curve per held-out panel")
    parser.add_argument("--sweep", action="store_true", help="the THINKING_ESCALATION curve, panels held out")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    args = parser.parse_args(argv)
    rows = train.examples()
    figures: dict[str, Any] = {"rows": len(rows), "panel": held_out(rows, "panel"), "file": held_out(rows, "file")}
    print(table("leave one labelling panel out", figures["panel"]))
    print()
    print(table("leave one writer group (file) out", figures["file"]))
    if args.sweep:
        figures["sweep"] = sweep(rows, "panel")
        print("\nTHINKING_ESCALATION (panels held out, pooled)")
        for knob, m in figures["sweep"].items():
            print(
                f"  {knob:<5} right {m['right']:.1%}  under {m['under']:.1%}  over {m['over']:.1%}  "
                f"cost {m['cost']:.2f}"
            )
    if args.curve:
        figures["curve"] = curve(rows, "panel")
        print("\nlearning curve (training rows: right on the held-out panel)")
        for group, points in figures["curve"].items():
            print(f"  {group}: " + ", ".join(f"{n}: {v:.1%}" for n, v in points.items()))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
