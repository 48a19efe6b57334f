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

import json
import math
import sys
from array import array
from collections.abc import Callable
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
        self.weights = weights
        # One array per output (a column), so that summing a thought's weights is one C-level map per output.
        self.columns = [weights[o :: len(OUTPUTS)] for o in range(len(OUTPUTS))]
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
        known = [self.chars[g] for g in features.chars if g in self.chars]
        known += [self.words[g] for g in features.words if g in self.words]
        known += [self.markers[m] for m in features.markers if m in self.markers]
        return known

    def scores(self, features: Features) -> Scores:
        known = self.rows(features)
        value = self.scale / math.sqrt(len(known) or 1)
        probabilities = [
            _sigmoid(bias + sum(map(column.__getitem__, known)) * value)
            for bias, column in zip(self.bias, self.columns, strict=True)
        ]
        hats = {hat: probabilities[3 + n] for n, hat in enumerate(HATS)}
        # Ranked by probability over the square root of how often the hat is required in training: a hat most
        # rows require would otherwise lead every thought (on held-out panels: 76.8% of required hats present
        # against 70.0% by probability alone, and 71.9% by probability over the base rate).
        lift = {hat: p / math.sqrt(max(self.hat_priors[hat], 1e-3)) for hat, p in hats.items()}
        return Scores(
            escalate=(probabilities[0], probabilities[1], probabilities[2]),
            hats=hats,
            hat_order=tuple(sorted(HATS, key=lambda hat: (-lift[hat], HATS.index(hat)))),
            known=tuple(known),
        )

    def contributions(
        self, scores: Scores, output: int, wanted: Callable[[str], bool], limit: int
    ) -> list[Contribution]:
        """Up to `limit` known features that `wanted` accepts, by their pull on `output`, strongest first."""
        value = self.scale / math.sqrt(len(scores.known) or 1)
        column = self.columns[output]
        # Sorted by weight (a C-level key), the strongest pulls are at the two ends: walk in from both.
        ordered = sorted(sorted(scores.known), key=column.__getitem__)
        low, high = 0, len(ordered) - 1
        found: list[Contribution] = []
        while low <= high and len(found) < limit:
            if -column[ordered[low]] > column[ordered[high]]:
                row, low = ordered[low], low + 1
            else:
                row, high = ordered[high], high - 1
            feature = self.vocabulary[row]
            if wanted(feature):
                found.append(Contribution(feature, output, column[row] * value))
        return found


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


@cache
def shipped() -> Model:
    """The model shipped in the package, read once (on the first routed thought)."""
    return Model.from_bytes(resources.files(__package__).joinpath(FILE).read_bytes())
