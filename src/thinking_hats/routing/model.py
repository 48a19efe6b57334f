"""The learned router's model: the file format, loading it, and scoring a thought with it (standard library only).

The model is eight logistic regressions over one feature space (features.py): three ordinal ones, "the step needs
more than single / double / triple", and one per hat, "labellers require this hat". Trained by
tests/routing/train.py (scikit-learn, a development dependency) and shipped as `model.bin`:

    line 1   a JSON header, UTF-8: format, outputs, the feature counts, the weight scale, how often each hat is
             required in training (`hatPriors`), the training settings, the SHA-256 of the training rows and the
             held-out figures measured when it was trained
    then     the vocabulary, UTF-8, one feature a line: character n-grams, then word n-grams, then markers
    then     the weights, int16 little-endian, one row of len(outputs) per feature in vocabulary order
             (a weight is the stored integer times the header's `scale`; the row `#bias` is the intercept)

A thought's features the vocabulary holds each have the value 1/sqrt(how many it holds) (a binary vector of unit
length); an output's probability is the logistic of the intercept plus the sum of those values times the weights.

Loading it costs a few milliseconds and happens on the first routed thought, not at start-up.
"""

from __future__ import annotations

import heapq
import itertools
import json
import math
import operator
import sys
from array import array
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ..analysis import HATS, Hat
from .features import Features

FORMAT = "thinking-hats-router/1"
LEVELS: tuple[str, ...] = ("single", "double", "triple", "full")
OUTPUTS: tuple[str, ...] = ("needs>single", "needs>double", "needs>triple", *(f"hat:{hat}" for hat in HATS))
FILE = "model.bin"
BIAS = "#bias"  # the vocabulary's last row: the intercepts


@dataclass(frozen=True)
class Contribution:
    """One feature's pull on one output, in log-odds."""

    feature: str
    output: int
    weight: float


@dataclass(frozen=True)
class Scores:
    escalate: tuple[float, float, float]  # P(needs more than single), (... than double), (... than triple)
    hats: dict[Hat, float]  # P(labellers require the hat)
    hat_order: tuple[Hat, ...]  # the hats, likeliest to be required first (see Model.scores)
    known: tuple[int, ...]  # the vocabulary rows of the thought's features the model knows


class Model:
    """A loaded model file: its header, its vocabulary (feature -> row) and its weights."""

    def __init__(self, header: dict[str, Any], vocabulary: list[str], weights: array[int]) -> None:
        counts = header["counts"]
        if header.get("format") != FORMAT or tuple(header["outputs"]) != OUTPUTS:
            raise ValueError(f"not a {FORMAT} model with outputs {OUTPUTS}")
        if len(vocabulary) != sum(counts.values()) or len(weights) != len(vocabulary) * len(OUTPUTS):
            raise ValueError("model file is truncated: the vocabulary or the weights are short")
        self.header = header
        self.scale = float(header["scale"])
        self.hat_priors: dict[str, float] = header["hatPriors"]
        n_chars, n_words = counts["chars"], counts["words"]
        self.chars = {feature: row for row, feature in enumerate(vocabulary[:n_chars])}
        self.words = {feature: row for row, feature in enumerate(vocabulary[n_chars : n_chars + n_words], n_chars)}
        self.markers = {feature: row for row, feature in enumerate(vocabulary[n_chars + n_words :], n_chars + n_words)}
        self.vocabulary = vocabulary
        # Per row, whether the explanation may name it (worked out once here, not per route).
        self.readable = [readable(feature, row >= n_chars) for row, feature in enumerate(vocabulary)]
        self.weights = weights
        # One array per output (a column), for the explanation; and one tuple of a feature's weights per row, so that
        # a thought's sums for all outputs are one C-level zip and sum (0.1 ms for ~800 known features, where a
        # pass per output took 0.8 ms).
        self.columns = [weights[o :: len(OUTPUTS)] for o in range(len(OUTPUTS))]
        self.table = list(zip(*self.columns, strict=True))
        bias = self.markers.pop(BIAS)
        self.bias = [column[bias] * self.scale for column in self.columns]

    @classmethod
    def from_bytes(cls, data: bytes) -> Model:
        end = data.index(b"\n")
        header = json.loads(data[:end])
        start = end + 1
        vocabulary = data[start : start + header["vocabularyBytes"]].decode("utf-8").split("\n")
        weights = array("h")
        weights.frombytes(data[start + header["vocabularyBytes"] :])
        if sys.byteorder != "little":
            weights.byteswap()
        return cls(header, vocabulary, weights)

    def rows(self, features: Features) -> list[int]:
        """The rows of the thought's features that the model knows."""
        # Set intersections and a map keep the lookups in C (each feature is looked up once).
        known = list(map(self.chars.__getitem__, self.chars.keys() & features.chars))
        known += map(self.words.__getitem__, self.words.keys() & features.words)
        known += map(self.markers.__getitem__, self.markers.keys() & set(features.markers))
        return known

    def scores(self, features: Features) -> Scores:
        known = sorted(self.rows(features))  # sorted: the explanation breaks ties by row, whatever the hash seed
        value = self.scale / math.sqrt(len(known) or 1)
        sums = map(sum, zip(*map(self.table.__getitem__, known), strict=True)) if known else [0] * len(OUTPUTS)
        probabilities = [_sigmoid(bias + total * value) for bias, total in zip(self.bias, sums, strict=True)]
        hats = {hat: probabilities[3 + n] for n, hat in enumerate(HATS)}
        # Ranked by probability: with every row's labels blind (round 10), this puts 93.0% of required hats among
        # those run, pooled over the five held-out panels, against 92.8% for probability over the square root of
        # how often the hat is required in training (the ranking of round 9's smaller corpus).
        return Scores(
            escalate=(probabilities[0], probabilities[1], probabilities[2]),
            hats=hats,
            hat_order=tuple(sorted(HATS, key=lambda hat: (-hats[hat], HATS.index(hat)))),
            known=tuple(known),
        )

    def contributions(self, scores: Scores, output: int, limit: int) -> list[Contribution]:
        """Up to `limit` known features a reader understands (see `readable`), by their pull on `output`, strongest
        first (ties by row)."""
        value = self.scale / math.sqrt(len(scores.known) or 1)
        column = self.columns[output]
        shown = list(itertools.compress(scores.known, map(self.readable.__getitem__, scores.known)))
        pulls = zip(map(abs, map(column.__getitem__, shown)), map(operator.neg, shown), strict=True)
        return [
            Contribution(self.vocabulary[-negative], output, column[-negative] * value)
            for _, negative in heapq.nlargest(limit, pulls)
        ]


def readable(feature: str, word: bool) -> bool:
    """Whether a feature means something to a reader: a marker, a word n-gram, a character n-gram of four or more
    (in Chinese and Japanese, where a character is a word, two or more)."""
    if word or feature.startswith("#"):
        return True
    core = feature.strip()
    return len(core) >= 4 or (len(core) >= 2 and all(ord(c) > 0x2E80 for c in core))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


@cache
def shipped() -> Model:
    """The model shipped in the package, read once (on the first routed thought)."""
    return Model.from_bytes(resources.files(__package__).joinpath(FILE).read_bytes())
