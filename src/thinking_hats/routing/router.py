"""The router: a learned model reads a thought locally (no model call) and picks how many hats, and which, look at it.

The model (model.py, trained by tests/routing/train.py on blind labels) gives, for each step up, the probability
that the thought needs more than the strategy below it (single, double, triple) and, for each hat, the probability
that careful people would require it. The route escalates one step at a time while that probability reaches
`escalation` (THINKING_ESCALATION: how sure the model must be before it spends more), then runs the hats the model
rates highest. Deterministic, and explained: the score is the expected step (0 single to 100 full) as the sum of
each strategy's share, and the features that weighed most on the last decision are listed in plain words.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from ..analysis import HATS, Complexity, Factor, Hat, ThoughtContext
from .features import Features, features
from .model import LEVELS, Model, Scores, shipped

SynthesisMode = Literal["model", "merge"]
DEFAULT_ESCALATION = 0.5
HAT_SURE = 0.5  # how sure the hat model must be that a hat is required for the route to make room to run it


@dataclass(frozen=True)
class StrategyRow:
    name: str
    hats: int  # how many hats run (concurrently)
    synthesis: bool  # whether a synthesizer merges them afterwards (THINKING_SYNTHESIS=model)
    mergeable: bool  # whether THINKING_SYNTHESIS=merge replaces that synthesis call by a merge in code
    description: str

    @property
    def calls(self) -> int:
        return self.hats + (1 if self.synthesis else 0)

    @property
    def rounds(self) -> int:
        return 2 if self.synthesis else 1


STRATEGIES: dict[str, StrategyRow] = {
    row.name: row
    for row in (
        StrategyRow("single", 1, False, False, "one hat, no synthesis"),
        StrategyRow("double", 2, True, True, "two hats, then synthesis"),
        StrategyRow("triple", 3, True, True, "three hats, then synthesis"),
        # All five angles at once are worth one model to reconcile them, whatever THINKING_SYNTHESIS says.
        StrategyRow("full", 5, True, False, "all five hats, then synthesis"),
    )
}
OVERRIDES = ("auto", *STRATEGIES)


@dataclass(frozen=True)
class Route:
    strategy: str
    score: float
    factors: tuple[Factor, ...]
    hats: tuple[Hat, ...]
    merged: bool = False  # the hats' outputs are merged in code instead of by a synthesis call

    def complexity(self) -> Complexity:
        return Complexity(score=self.score, factors=[f.model_copy() for f in self.factors])

    @property
    def synthesis(self) -> bool:
        return STRATEGIES[self.strategy].synthesis and not self.merged

    @property
    def calls(self) -> int:
        return len(self.hats) + (1 if self.synthesis else 0)

    @property
    def rounds(self) -> int:
        return 2 if self.synthesis else 1

    def with_synthesis(self, mode: SynthesisMode) -> Route:
        """This route under THINKING_SYNTHESIS=`mode`: `merge` drops the synthesis call where the row allows."""
        return replace(self, merged=mode == "merge" and STRATEGIES[self.strategy].mergeable)


# --- explaining a route: the model's features in plain words --------------------------------------------

EXPLAINED = 3  # features listed per route
_MARKERS = {
    "#crash": "a crash step",
    "#revision": "revises an earlier thought",
    "#branch": "a branch",
    "#first": "the first thought of the session",
    "#middle": "a thought in mid-session",
    "#last": "the last thought planned",
    "#question": "a question near the end",
    "#ends-with-question": "ends with a question",
}


def describe(feature: str, ctx: ThoughtContext) -> str:
    """A feature as a reader understands it."""
    if feature in _MARKERS:
        return _MARKERS[feature]
    if feature.startswith("#confidence<"):
        return f"crash confidence {ctx.confidence:g}"
    if feature.startswith("#purpose:"):
        return f"crash purpose {feature.removeprefix('#purpose:')}"
    for prefix, what in (("#length:", "length"), ("#lines:", "lines"), ("#pasted:", "pasted lines")):
        if feature.startswith(prefix):
            return f"{what} (band {feature.removeprefix(prefix)})"
    return f"text {feature!r}"


def _factors(ctx: ThoughtContext, read: Features, model: Model, scores: Scores, level: int) -> list[Factor]:
    """Each strategy's probability (its share of the score in points), then the features that weighed most on the
    decision that settled the strategy: to escalate to it, or not to escalate beyond it."""
    above = (1.0, *scores.escalate, 0.0)
    probability = [max(0.0, min(1.0, above[k]) - max(above[k + 1 :])) for k in range(len(LEVELS))]
    factors = [
        Factor(
            name=name,
            points=round(probability[k] * k * 100 / 3, 1),
            detail=f"probability {probability[k]:.2f} that {name} is the least this thought needs",
        )
        for k, name in enumerate(LEVELS)
    ]
    output = max(level - 1, 0)
    for pull in model.contributions(scores, output, EXPLAINED):
        towards = LEVELS[output + 1] if pull.weight > 0 else LEVELS[output]
        factors.append(
            Factor(
                name="feature",
                points=0.0,
                detail=f"{describe(pull.feature, ctx)} ({pull.weight:+.1f} towards {towards})",
            )
        )
    return factors


def decide(scores: Scores, escalation: float) -> int:
    """The strategy's step (0 single .. 3 full): one step up while the model is at least `escalation` sure the
    thought needs more than the step it is on."""
    level = 0
    while level < len(LEVELS) - 1 and scores.escalate[level] >= escalation:
        level += 1
    return level


def hats_for(scores: Scores, strategy: str) -> tuple[Hat, ...]:
    """The hats to run, as many as the strategy runs (all five in canonical order): first every hat the model is at
    least HAT_SURE sure careful people require (likeliest first), then the rest by the model's ranking."""
    count = STRATEGIES[strategy].hats
    if count >= len(HATS):
        return HATS
    sure = required(scores)
    return (*sure, *(hat for hat in scores.hat_order if hat not in sure))[:count]


def required(scores: Scores) -> tuple[Hat, ...]:
    """The hats the model is at least HAT_SURE sure are required, likeliest first."""
    return tuple(
        sorted((h for h in HATS if scores.hats[h] >= HAT_SURE), key=lambda h: (-scores.hats[h], HATS.index(h)))
    )


def choose(scores: Scores, escalation: float) -> int:
    """The strategy's step for `auto`: `decide`, then up while the strategy runs fewer hats than the model is
    HAT_SURE sure are required (so that a required hat is run rather than guessed between)."""
    level = decide(scores, escalation)
    while level < len(LEVELS) - 1 and STRATEGIES[LEVELS[level]].hats < len(required(scores)):
        level += 1
    return level


def route(
    ctx: ThoughtContext, escalation: float = DEFAULT_ESCALATION, override: str = "auto", model: Model | None = None
) -> Route:
    """Read `ctx` with the model and choose a strategy and its hats. `override` forces the strategy (the hats and
    the explanation still come from the model); `model` other than the shipped one is for training and
    cross-validation."""
    if override not in OVERRIDES:
        raise ValueError(f"unknown strategy {override!r}; choose from {', '.join(OVERRIDES)}")
    if not 0 < escalation < 1:
        raise ValueError(f"escalation must be a probability between 0 and 1 (exclusive), got {escalation!r}")
    model = model or shipped()
    read = features(ctx)
    scores = model.scores(read)
    level = choose(scores, escalation)
    strategy = LEVELS[level] if override == "auto" else override
    factors = _factors(ctx, read, model, scores, level)
    score = round(sum(f.points for f in factors), 1)
    return Route(strategy=strategy, score=score, factors=tuple(factors), hats=hats_for(scores, strategy))
