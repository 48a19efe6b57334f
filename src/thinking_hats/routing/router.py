"""The router: scores a thought locally (no model call) and picks how many hats, and which, look at it.

Deterministic and explainable: the 0-100 score is the sum of named factors, each with its points and a short
detail; thresholds turn the score into a strategy (a row of `STRATEGIES`); the same signals rank the hats.
Two kinds of evidence make the score: what is asked sets a floor (a yes/no question on what to do is worth three
hats however short; a choice, a plan, ideas, a revision, a branch, a doubt two), and what the situation holds adds
flat points per item (parties and their positions, stakes, risks, clauses, length), so that more of them ask for
more angles. A simple ask (a lookup or a sum, a next step, with nothing in the thought weighing what to do) also
sets a ceiling: it stays one hat however much context surrounds it (round 4, weights.CEILINGS).

What a thought holds and asks is read by `reading` (any of the seven languages of `terms`, pasted material
set aside); this module weighs that reading (the points, floors and ceilings of `weights`) and ranks the
hats by the signals' pull.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from ..analysis import HATS, Complexity, Factor, Hat, ThoughtContext
from .reading import LOW_CONFIDENCE, SIGNALS, Reading, reading
from .weights import CEILINGS, FLOORS, POINTS

SynthesisMode = Literal["model", "merge"]


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

# Ties between hats of equal affinity go to the more generally useful hat first.
TIE_ORDER: tuple[Hat, ...] = ("factual", "critical", "optimistic", "creative", "emotional")


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


# --- signals: which hats each one calls for (their points are data: weights) ---------------------------


@dataclass(frozen=True)
class _Signal:
    name: str  # factor name, and the key of its terms in terms.SIGNAL_TERMS
    pull: tuple[float, float, float]  # pull on the hats: for the first distinct term, each further one, cap
    affinity: tuple[tuple[Hat, float], ...]  # share of the pull each hat gets when ranking hats


# Two kinds of evidence. What is asked (a yes/no question on what to do, a plan, ideas; "A or B?" makes the decision
# signal one) sets a floor: the strategy it deserves at least, whatever else the thought says. What the situation
# holds (parties and their positions, stakes, risks, constraints, length) adds points per item: a thought with more
# of them needs more angles. The points and floors are fitted offline on the labelled corpus (weights); which
# hats a signal calls for, and how strongly, is set here, apart from the points, so that a fit of the score cannot
# silence a hat (the fact-asking signal earns few points but must still bring the factual hat).
_SIGNALS: tuple[_Signal, ...] = (
    _Signal("decision", (5, 5, 15), (("critical", 2.0), ("optimistic", 2.0))),
    _Signal("dilemma", (10, 0, 10), (("critical", 2.0), ("optimistic", 1.2), ("emotional", 0.8))),
    _Signal("risk", (8, 8, 32), (("critical", 1.5),)),
    _Signal("stakes", (8, 8, 32), (("critical", 0.8), ("factual", 0.5))),
    _Signal("stakeholders", (8, 8, 48), (("emotional", 0.5), ("critical", 0.5))),
    _Signal("planning", (10, 0, 10), (("critical", 1.2), ("factual", 0.8), ("creative", 0.5))),
    _Signal("ideation", (10, 0, 10), (("creative", 2.6), ("optimistic", 0.6))),
    _Signal("people", (6, 6, 36), (("emotional", 1.8),)),
    _Signal("opportunity", (3, 3, 9), (("optimistic", 2.0),)),
    _Signal("facts", (1, 0, 1), (("factual", 12.0),)),
)
_AFFINITY = {signal.name: signal.affinity for signal in _SIGNALS}
_PULL = {signal.name: signal.pull for signal in _SIGNALS}
# Session context: something the session relied on changed, an alternative, a step its author doubts. Each is
# worth a second angle (a floor) and a few points; the thought's content decides the rest. Their pull on the hats
# is fixed, not a share of their points.
_SESSION_AFFINITY = 15.0
_SESSION_HATS: dict[str, tuple[tuple[Hat, float], ...]] = {
    "revision": (("critical", 1.0),),
    "branch": (("creative", 1.0), ("optimistic", 0.8)),
    "low_confidence": (("critical", 1.0),),
    "options": (("critical", 1.0), ("optimistic", 0.6), ("factual", 0.5)),
}
_ASK_HAT: dict[str, Hat] = {"branch": "optimistic", "ideation": "creative"}
FACTORS: tuple[str, ...] = ("length", "questions", "structure", *SIGNALS, *_SESSION_HATS, "simple_ask")
_FLOOR_FACTOR = {
    "either": "decision",
    "either_stakes": "decision",
    "planning_stakes": "planning",
    "stated": "options",
    "weigh": "decision",
}
# A simple ask (a lookup or a sum, a next step) caps the score; its factor shows the points taken off, and a lookup
# brings the factual hat.
_CEILING_DETAIL = {
    "lookup": "asks for a fact or a sum",
    "step": "states the next step",
    "second_angle": "a branch, a doubt or ideas with no people or stakes in play",
    "session_step": "a revision, a branch or a doubt, with no decision asked for",
    "pasted_question": "an either/or question about pasted material",
    "told": "a step told, asking and weighing nothing",
}
_WHO = frozenset(("stakeholders",))
_LOOKUP_AFFINITY = 30.0


@dataclass(frozen=True)
class Weights:
    """Points per unit of each factor, and the floors what is asked sets (see weights)."""

    points: Mapping[str, tuple[float, float, float]]  # factor: (first unit, each further unit, cap)
    floors: Mapping[str, float]  # ask: the score it sets at least
    ceilings: Mapping[str, float] = field(default_factory=lambda: dict(CEILINGS))  # simple ask: the score at most

    def of(self, name: str, count: int) -> float:
        return _curve(self.points[name], count)


def _curve(weights: tuple[float, float, float], count: int) -> float:
    first, each, cap = weights
    return max(0.0, min(cap, first + each * (count - 1))) if count > 0 else 0.0


WEIGHTS = Weights(POINTS, FLOORS, CEILINGS)
_PASTED_AFFINITY = 14.0  # pasted material is evidence to read: a pull towards the factual hat


def _weigh(read: Reading, weights: Weights) -> tuple[list[Factor], dict[Hat, float]]:
    """The factors with their points (the floor lifts the factor that set it, and says so), and each hat's pull."""
    points = {name: weights.of(name, count) for name, count in read.counts.items()}
    affinity: dict[Hat, float] = dict.fromkeys(HATS, 0.0)
    for name, count in read.counts.items():
        for hat, share in _AFFINITY.get(name, ()):
            affinity[hat] += _curve(_PULL[name], count) * share
        for hat, share in _SESSION_HATS.get(name, ()):
            affinity[hat] += _SESSION_AFFINITY * share
    if read.pasted:
        affinity["factual"] += _PASTED_AFFINITY
    # The floor: the ask asking for the most lifts the score to its floor. The floors are scores, not strategies,
    # so that THINKING_THRESHOLDS moves every thought alike.
    floor, raised = 0.0, ""
    for ask in read.asks:
        if weights.floors.get(ask, 0.0) > floor:
            floor, raised = weights.floors[ask], _FLOOR_FACTOR.get(ask, ask)
    lift = floor - sum(round(p, 1) for p in points.values())
    details = dict(read.details)
    for cap in read.caps:  # a simple ask: the score stays at its ceiling however much the thought says around it
        excess = sum(round(p, 1) for p in points.values()) - weights.ceilings[cap]
        if excess > 0:
            points["simple_ask"] = -excess
            details["simple_ask"] = f"{_CEILING_DETAIL[cap]}: at most {weights.ceilings[cap]:g}"
        if cap == "lookup":  # the factual hat leads, whatever the pasted text's words pull towards
            affinity["factual"] = max(affinity.values()) + _LOOKUP_AFFINITY
    if lift > 0:
        points[raised] = points.get(raised, 0.0) + lift
        details[raised] += f"; at least {floor:g}"
        for hat, share in _AFFINITY.get(raised, ()):  # the ask's angles lead when little else is said
            affinity[hat] += lift * share / 4
    factors = [
        Factor(name=name, points=round(points[name], 1), detail=details[name])
        for name in FACTORS
        if round(points.get(name, 0.0), 1) != 0
    ]
    return factors, affinity


def _rank(affinity: dict[Hat, float], critical_first: bool) -> list[Hat]:
    def key(hat: Hat) -> tuple[bool, float, int]:
        return (not (critical_first and hat == "critical"), -affinity[hat], TIE_ORDER.index(hat))

    return sorted(HATS, key=key)


def _asked_for(hat: Hat, asked_about: frozenset[str]) -> bool:
    # Who a question is about ("the deadline to contest a dismissal") is not the angle it asks for.
    return any(hat == pulled for name in asked_about - _WHO for pulled, _ in _AFFINITY.get(name, ()))


def strategy_for(score: float, thresholds: tuple[int, int, int]) -> str:
    double, triple, full = thresholds
    if score >= full:
        return "full"
    if score >= triple:
        return "triple"
    if score >= double:
        return "double"
    return "single"


def route(
    ctx: ThoughtContext, thresholds: tuple[int, int, int], override: str = "auto", weights: Weights = WEIGHTS
) -> Route:
    """Score `ctx` and choose a strategy and its hats. `override` forces the strategy, never the score; `weights`
    other than the shipped ones are for training and cross-validation."""
    if override not in OVERRIDES:
        raise ValueError(f"unknown strategy {override!r}; choose from {', '.join(OVERRIDES)}")
    if not (len(thresholds) == 3 and thresholds[0] < thresholds[1] < thresholds[2]):
        raise ValueError(f"router thresholds must be three increasing scores, got {thresholds!r}")
    read = reading(ctx)
    factors, affinity = _weigh(read, weights)
    raw = sum(f.points for f in factors)
    score = round(min(100.0, max(0.0, raw)), 1)
    strategy = strategy_for(score, thresholds) if override == "auto" else override
    count = STRATEGIES[strategy].hats
    if count >= len(HATS):
        hats = HATS
    else:
        needs_review = ctx.revised is not None or (ctx.confidence is not None and ctx.confidence < LOW_CONFIDENCE)
        ranked = _rank(affinity, critical_first=needs_review)
        hats = tuple(ranked[:count])
        for ask in read.asks:  # the angle an ask is for is among two or more hats: a branch's upside, ideas
            wanted = _ASK_HAT.get(ask)
            if count >= 2 and wanted is not None and wanted not in hats:
                hats = (*hats[: count - 1], wanted)
        if count == 1 and override == "auto" and not read.asks and not _asked_for(hats[0], read.asked_about()):
            # One hat for a thought that asks nothing to weigh: it answers with the facts, unless a question asks
            # for that hat's angle ("What could go wrong...?"); risk or people words around a lookup ("Limitation
            # period for a breach of contract claim") are not a request for a critique.
            hats = ("factual",)
    return Route(strategy=strategy, score=score, factors=tuple(factors), hats=hats)
