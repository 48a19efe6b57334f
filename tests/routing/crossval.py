"""How well the router does on thoughts it was not fitted on: K-fold cross-validation over the tuning corpus.

    python tests/routing/crossval.py                    # fit on K-1 folds, judge the held-out fold
    python tests/routing/crossval.py --shipped          # the shipped weights on every row (nothing is fitted)
    python tests/routing/crossval.py --over 2 --prior 0.05 --margin 2   # a variant of the fit (see train.py)
    python tests/routing/crossval.py --groups           # leave one author group out: fit on two, judge the third
    python tests/routing/crossval.py --groups --shipped # the shipped weights, each author group on its own

Leave-one-author-group-out (rounds 4-6): the rows come from groups of writers (train.GROUPS: A = tuning.jsonl and
retired-frozen.jsonl, one author; B = tuning-extra.jsonl; C, D, E = retired-frozen-3/-4/-5.jsonl, the writers of
the frozen parts of rounds 3, 4 and 5).
Fitting on the other groups and judging one measures how far the fit carries to another author's style, which
the random folds cannot (every fold holds rows of every author). Hand-written changes (terms, reading rules) are
judged by each group's own figures, preferring changes that help a group they were not derived from.

Folds are stratified by language (each language's rows shuffled with a fixed seed and dealt round-robin), the whole is
repeated with other seeds, and each held-out fold is routed with the weights fitted on the others (train.fit) through
`thinking_hats.routing.router.route`, judged by `evaluation.Judged` (the rule of `thinking-hats route --eval`). The
figures are pooled over all held-out rows of all repeats: per language, overall, above the labels, and for the rows of
each file on its own (retired-frozen.jsonl: rounds 1-2's frozen part, whose wording the term tables were never written
from).

The held-out figure measures the fitted weights only: the term tables and the structure rules were written while
reading the tuning rows, and are the same in every fold, so any figure here is an upper bound on unseen thoughts.
Only train.FILES are read (the six tuning files; never the frozen part, frozen.jsonl).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "src"))

from train import FILES, GROUPS, THRESHOLDS, Options, fit, rows_of  # noqa: E402

from thinking_hats.routing.evaluation import Judged, Labelled, load  # noqa: E402
from thinking_hats.routing.router import WEIGHTS, Weights, route  # noqa: E402
from thinking_hats.routing.terms import LANGUAGES  # noqa: E402


def folds(rows: Sequence[Labelled], k: int, seed: int) -> list[list[int]]:
    """Row indexes per fold, each language spread evenly over the folds."""
    by_lang: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_lang[row.lang].append(i)
    dealt: list[list[int]] = [[] for _ in range(k)]
    offset = 0
    for lang in sorted(by_lang):
        indexes = by_lang[lang]
        random.Random(f"{seed}-{lang}").shuffle(indexes)
        for n, i in enumerate(indexes):
            dealt[(n + offset) % k].append(i)
        offset += len(indexes)  # so that the folds come out of equal size
    return dealt


def judge(rows: Sequence[Labelled], weights: Weights) -> list[Judged]:
    return [Judged(row, route(row.context(), THRESHOLDS, weights=weights)) for row in rows]


def summary(judged: Sequence[Judged], origin: dict[str, str]) -> dict[str, float]:
    def share(part: Sequence[Judged], test: str = "agrees") -> float:
        return sum(getattr(j, test) for j in part) / len(part) if part else 0.0

    figures = {lang: share([j for j in judged if j.row.lang == lang]) for lang in LANGUAGES}
    figures["overall"] = share(judged)
    figures["above"] = share(judged, "over")
    figures["below"] = share(judged, "under")
    figures["hat"] = share(judged, "hat_missed")
    figures["rows"] = float(len(judged))
    for name in FILES:
        figures[name] = share([j for j in judged if origin[j.row.id] == name])
    return figures


def show(title: str, figures: dict[str, float], files: bool = True) -> None:
    cells = "  ".join(f"{lang} {figures[lang] * 100:5.1f}" for lang in LANGUAGES)
    print(
        f"{title:<34} {cells}  | overall {figures['overall'] * 100:5.1f}  above {figures['above'] * 100:4.1f}  "
        f"below {figures['below'] * 100:4.1f}  hat {figures['hat'] * 100:4.1f}  "
        + ("  ".join(f"{name.removesuffix('.jsonl')} {figures[name] * 100:5.1f}" for name in FILES) if files else "")
    )


def by_group(
    rows: Sequence[Labelled], origin: dict[str, str], shipped: bool, options: Options
) -> dict[str, list[Judged]]:
    """Each author group's rows, routed with the shipped weights or with weights fitted on the other groups."""
    group_of = {name: group for group, names in GROUPS.items() for name in names}
    readings = rows_of(rows) if not shipped else []
    judged: dict[str, list[Judged]] = {}
    for group in GROUPS:
        inside = [i for i, row in enumerate(rows) if group_of[origin[row.id]] == group]
        if shipped:
            weights = WEIGHTS
        else:
            chosen = set(inside)
            weights = fit([readings[i] for i in range(len(rows)) if i not in chosen], options)
        judged[group] = judge([rows[i] for i in inside], weights)
    return judged


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shipped", action="store_true", help="judge the shipped weights on every row, no fit")
    parser.add_argument("-k", type=int, default=5, help="folds (default 5)")
    parser.add_argument("--repeats", type=int, default=3, help="repeats with other seeds (default 3)")
    parser.add_argument("--over", type=float, default=Options.over)
    parser.add_argument("--margin", type=float, default=Options.margin)
    parser.add_argument("--prior", type=float, default=Options.prior)
    parser.add_argument("--ramp", type=float, default=Options.ramp)
    parser.add_argument("--miss", type=float, default=Options.miss)
    parser.add_argument("--flat", action="store_true", help="fit flat points per unit (first = each)")
    parser.add_argument("--train", action="store_true", help="also print the training fit on all rows")
    parser.add_argument("--groups", action="store_true", help="leave one author group out (see GROUPS)")
    args = parser.parse_args()

    origin: dict[str, str] = {}
    rows: list[Labelled] = []
    for name in FILES:
        for row in load(HERE / name):
            origin[row.id] = name
            rows.append(row)
    options = Options(
        over=args.over, margin=args.margin, prior=args.prior, ramp=args.ramp, miss=args.miss, flat=args.flat
    )
    if args.groups:
        judged = by_group(rows, origin, args.shipped, options)
        how = "shipped weights" if args.shipped else "fitted on the other two"
        for group, part in judged.items():
            show(f"{group} ({len(part)} rows), {how}", summary(part, origin), files=False)
        show(f"all groups, {how}", summary([j for part in judged.values() for j in part], origin), files=False)
        return 0
    if args.shipped:
        show("shipped weights, all rows", summary(judge(rows, WEIGHTS), origin))
        return 0

    readings = rows_of(rows)
    held_out: list[Judged] = []
    for seed in range(args.repeats):
        for fold in folds(rows, args.k, seed):
            inside = set(fold)
            weights = fit([readings[i] for i in range(len(rows)) if i not in inside], options)
            held_out += judge([rows[i] for i in fold], weights)
    label = f"CV {args.k}x{args.repeats} " + " ".join(f"{k}={v:g}" for k, v in vars(options).items() if k != "sweeps")
    show(label, summary(held_out, origin))
    if args.train:
        show("  training fit, all rows", summary(judge(rows, fit(readings, options)), origin))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
