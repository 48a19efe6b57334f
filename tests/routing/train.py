"""Train the learned router on the blind-labelled corpus and write the model the package ships.

    python tests/routing/train.py            # train, print the held-out figures (nothing written)
    python tests/routing/train.py --write    # ... and write src/thinking_hats/routing/model.bin

Deterministic: the same rows give the same file (tests/test_router.py regenerates it and fails on drift).
Training rows are every row of the training files (split.TRAINING: every corpus file but the frozen part, which
is never opened here) that carries at least three blind labels (`labels`) and whose labels have a consensus
(contested rows are skipped). Adding labels to a file, or a new training file to split.TRAINING, is all retraining
with more data takes.

The model (src/thinking_hats/routing/model.py): over the features of features.py, eight L2-regularised logistic
regressions (scikit-learn, C below): three ordinal ones, "the cheapest consensus strategy is dearer than single /
double / triple", and one per hat, "at least two labellers require this hat". The vocabulary is bounded (the
n-grams in at least MIN_ROWS training rows, the MAX_* most frequent of them) so that training takes seconds and the
file stays small. The held-out figures written into the header are measured by leaving one labelling panel out
(`crossval.py` has them all); the shipped model is then trained on every row.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from scipy.sparse import csr_matrix  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from split import TRAINING  # noqa: E402

from thinking_hats.analysis import HATS  # noqa: E402
from thinking_hats.routing import model as router_model  # noqa: E402
from thinking_hats.routing.evaluation import Labelled, load  # noqa: E402
from thinking_hats.routing.features import CHAR_SIZES, HEAD, TAIL, Features, features  # noqa: E402

OUTPUT = ROOT / "src" / "thinking_hats" / "routing" / router_model.FILE
SETTINGS: dict[str, Any] = {
    "C": 4.0,  # inverse regularisation strength, as issue 23's quick check found (crossval.py --sweep measures it)
    "minRows": 3,  # an n-gram is read only if at least this many training rows hold it
    "maxChars": 30000,  # most frequent character n-grams kept
    "maxWords": 8000,  # most frequent word n-grams kept
    "hatWeight": 1.0,
    "head": HEAD,
    "tail": TAIL,
    "charSizes": list(CHAR_SIZES),
}
MIN_LABELS = 3


@dataclass(frozen=True)
class Example:
    row: Labelled
    file: str  # writer group: the file it comes from
    panel: str  # labelling panel: the labeller letters, joined with those they share rows with
    features: Features

    @property
    def level(self) -> int:
        return router_model.LEVELS.index(self.row.accept[0])


def panels(rows: Sequence[Labelled]) -> dict[frozenset[str], str]:
    """Labellers who label rows together form one panel (A-B-C and B-C-D are one panel, P-Q-R another)."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    sets = {frozenset(label.labeller for label in row.labels) for row in rows}
    for letters in sets:
        first, *rest = sorted(letters)
        for other in rest:
            parent[root(other)] = root(first)
    members: dict[str, set[str]] = defaultdict(set)
    for letters in sets:
        for letter in letters:
            members[root(letter)].add(letter)
    return {letters: "".join(sorted(members[root(next(iter(letters)))])) for letters in sets}


def examples(directory: Path = HERE) -> list[Example]:
    """Every training row with at least three blind labels and a consensus, in file order."""
    found: list[tuple[Labelled, str]] = []
    for name in TRAINING:
        for row in load(directory / name):
            if sum(label.labeller is not None for label in row.labels) >= MIN_LABELS and not row.contested:
                found.append((row, name.removesuffix(".jsonl")))
    panel_of = panels([row for row, _ in found])
    return [
        Example(row, name, panel_of[frozenset(label.labeller for label in row.labels)], features(row.context()))
        for row, name in found
    ]


def corpus_hash(rows: Sequence[Example]) -> str:
    digest = hashlib.sha256()
    for ex in rows:
        labels = [(label.labeller, label.accept, label.hat) for label in ex.row.labels]
        digest.update(json.dumps([ex.row.id, ex.row.thought, labels], ensure_ascii=False).encode())
    return digest.hexdigest()


def targets(ex: Example) -> list[int]:
    required = ex.row.hat
    return [int(ex.level > 0), int(ex.level > 1), int(ex.level > 2), *(int(required == hat) for hat in HATS)]


def vocabulary(rows: Sequence[Example], settings: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """The bounded feature space: frequent character and word n-grams (most frequent first, ties by text) and
    every marker seen."""
    chars: Counter[str] = Counter()
    words: Counter[str] = Counter()
    marks: set[str] = set()
    for ex in rows:
        chars.update(ex.features.chars)
        words.update(ex.features.words)
        marks.update(ex.features.markers)

    def top(counts: Counter[str], limit: int) -> list[str]:
        kept = [g for g, n in counts.items() if n >= settings["minRows"]]
        return sorted(kept, key=lambda g: (-counts[g], g))[:limit]

    return top(chars, settings["maxChars"]), top(words, settings["maxWords"]), [*sorted(marks), router_model.BIAS]


def matrix(rows: Sequence[Example], chars: list[str], words: list[str], marks: list[str]) -> csr_matrix:
    char_index = {f: i for i, f in enumerate(chars)}
    word_index = {f: i for i, f in enumerate(words, len(chars))}
    mark_index = {f: i for i, f in enumerate(marks, len(chars) + len(words))}
    data: list[float] = []
    cols: list[int] = []
    ptr = [0]
    for ex in rows:
        f = ex.features
        known = sorted(
            {char_index[g] for g in f.chars if g in char_index}
            | {word_index[g] for g in f.words if g in word_index}
            | {mark_index[m] for m in f.markers if m in mark_index}
        )
        cols += known
        data += [1.0 / math.sqrt(len(known) or 1)] * len(known)
        ptr.append(len(cols))
    size = len(chars) + len(words) + len(marks)
    return csr_matrix((np.array(data), np.array(cols, dtype=np.int64), np.array(ptr)), shape=(len(rows), size))


def fit(rows: Sequence[Example], settings: dict[str, Any] = SETTINGS) -> router_model.Model:
    """Train on `rows` and return the model as serving reads it (quantised), its header without the figures."""
    chars, words, marks = vocabulary(rows, settings)
    vocab = [*chars, *words, *marks]
    x = matrix(rows, chars, words, marks)
    y = np.array([targets(ex) for ex in rows])
    bias = len(vocab) - 1
    weights = np.zeros((len(vocab), len(router_model.OUTPUTS)))
    for o in range(len(router_model.OUTPUTS)):
        column = y[:, o]
        if column.min() == column.max():  # nothing to learn (a hat no row requires): a firm answer
            weights[bias, o] = 8.0 if column[0] else -8.0
            continue
        # The dual solver: far faster where features outnumber rows, and deterministic with a fixed seed.
        lr = LogisticRegression(C=settings["C"], solver="liblinear", dual=True, max_iter=5000, random_state=0)
        lr.fit(x, column)
        weights[:, o] = lr.coef_[0]
        weights[bias, o] = lr.intercept_[0]
    scale = float(np.abs(weights).max()) / 32767 or 1.0
    quantised = np.rint(weights / scale).astype("<i2")
    header = {
        "format": router_model.FORMAT,
        "outputs": list(router_model.OUTPUTS),
        "counts": {"chars": len(chars), "words": len(words), "markers": len(marks)},
        "scale": scale,
        "hatPriors": {hat: round(float(y[:, 3 + n].mean()), 4) for n, hat in enumerate(HATS)},
        "settings": settings,
    }
    return _model(header, vocab, quantised.tobytes())


def _model(header: dict[str, Any], vocab: list[str], weights: bytes) -> router_model.Model:
    blob = "\n".join(vocab).encode("utf-8")
    header = {**header, "vocabularyBytes": len(blob)}
    return router_model.Model.from_bytes(_encode(header, blob, weights))


def _encode(header: dict[str, Any], blob: bytes, weights: bytes) -> bytes:
    return json.dumps(header, ensure_ascii=False, sort_keys=True).encode() + b"\n" + blob + weights


def to_bytes(model: router_model.Model) -> bytes:
    blob = "\n".join(model.vocabulary).encode("utf-8")
    return _encode({**model.header, "vocabularyBytes": len(blob)}, blob, model.weights.tobytes())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"write {OUTPUT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    import crossval  # the held-out figures recorded in the header

    rows = examples()
    held_out = crossval.held_out(rows, "panel")
    model = fit(rows)
    model.header.update(
        {
            "trainedOn": {
                "rows": len(rows),
                "sha256": corpus_hash(rows),
                "files": dict(sorted(Counter(ex.file for ex in rows).items())),
                "panels": dict(sorted(Counter(ex.panel for ex in rows).items())),
            },
            "heldOut": held_out,
        }
    )
    print(json.dumps(model.header, indent=2, ensure_ascii=False))
    if args.write:
        OUTPUT.write_bytes(to_bytes(model))
        print(f"wrote {OUTPUT.relative_to(ROOT)} ({OUTPUT.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
