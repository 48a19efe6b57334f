"""The router: scores a thought locally (no model call) and picks how many hats, and which, look at it.

Deterministic and explainable: the 0-100 score is the sum of named factors, each with its points and a short
detail; thresholds turn the score into a strategy (a row of `STRATEGIES`); the same signals rank the hats.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .analysis import HATS, Complexity, Factor, Hat, ThoughtContext


@dataclass(frozen=True)
class StrategyRow:
    name: str
    hats: int  # how many hats run (concurrently)
    synthesis: bool  # whether a synthesizer merges them afterwards
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
        StrategyRow("single", 1, False, "one hat, no synthesis"),
        StrategyRow("double", 2, True, "two hats, then synthesis"),
        StrategyRow("triple", 3, True, "three hats, then synthesis"),
        StrategyRow("full", 5, True, "all five hats, then synthesis"),
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

    def complexity(self) -> Complexity:
        return Complexity(score=self.score, factors=[f.model_copy() for f in self.factors])

    @property
    def synthesis(self) -> bool:
        return STRATEGIES[self.strategy].synthesis

    @property
    def calls(self) -> int:
        return len(self.hats) + (1 if self.synthesis else 0)


# --- signals ------------------------------------------------------------------------------------------------


def _terms(*alternatives: str) -> re.Pattern[str]:
    # Matched against the lower-cased thought: re.IGNORECASE makes these alternations several times slower.
    return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + r")(?![\w-])")


@dataclass(frozen=True)
class _Signal:
    name: str  # factor name
    pattern: re.Pattern[str]
    first: float  # points for the first distinct term
    each: float  # points for every further distinct term
    cap: float
    affinity: tuple[tuple[Hat, float], ...]  # share of the points each hat gets when ranking hats


_SIGNALS: tuple[_Signal, ...] = (
    _Signal(
        "decision",
        _terms(
            r"should (?:we|i|they|you|it)",
            r"shall we",
            r"choos(?:e|ing)",
            r"choices?",
            r"pick(?:ing)?",
            r"select(?:ing)?",
            r"decid(?:e|ing)",
            r"decisions?",
            r"vs\.?",
            r"versus",
            r"trade-?offs?",
            r"options?",
            r"whether",
            r"prefer(?:able)?",
            r"compar(?:e|ing|ison)",
            r"pros and cons",
            r"instead of",
            r"go with",
            r"worth it",
            r"which one",
        ),
        18,
        5,
        28,
        (("critical", 0.5), ("optimistic", 0.5)),
    ),
    _Signal(
        "risk",
        _terms(
            r"risks?",
            r"risky",
            r"fail(?:s|ed|ing|ures?)?",
            r"security",
            r"insecure",
            r"vulnerab\w*",
            r"outages?",
            r"downtime",
            r"danger(?:s|ous)?",
            r"downsides?",
            r"breach(?:es)?",
            r"attacks?",
            r"exploits?",
            r"regressions?",
            r"bugs?",
            r"break(?:s|ing)?",
            r"broken",
            r"crash(?:es)?",
            r"data loss",
            r"go(?:es)? wrong",
            r"worst case",
            r"threats?",
            r"unsafe",
            r"safety",
            r"liabilit(?:y|ies)",
            r"compliance",
            r"rollback",
            r"incidents?",
            r"side effects?",
            r"contraindicat\w*",
        ),
        12,
        4,
        20,
        (("critical", 1.0),),
    ),
    _Signal(
        "ideation",
        _terms(
            r"brainstorm\w*",
            r"ideas?",
            r"alternatives?",
            r"what if",
            r"novel",
            r"creative(?:ly)?",
            r"creativity",
            r"invent\w*",
            r"imagine",
            r"reimagine",
            r"innovat\w*",
            r"unconventional",
            r"possibilit(?:y|ies)",
            r"rethink",
            r"out of the box",
            r"come up with",
            r"explore",
        ),
        12,
        3,
        18,
        (("creative", 1.0), ("optimistic", 0.25)),
    ),
    _Signal(
        "people",
        _terms(
            r"teams?",
            r"users?",
            r"customers?",
            r"clients?",
            r"feel(?:s|ing|ings)?",
            r"morale",
            r"stakeholders?",
            r"employees?",
            r"staff",
            r"colleagues?",
            r"people",
            r"community",
            r"trust",
            r"burn-?out",
            r"frustrat\w*",
            r"unhappy",
            r"anxi(?:ous|ety)",
            r"stress(?:ed|ful)?",
            r"emotions?",
            r"emotional(?:ly)?",
            r"culture",
            r"hir(?:e|ing)",
            r"layoffs?",
            r"patients?",
            r"famil(?:y|ies)",
        ),
        10,
        3,
        16,
        (("emotional", 1.0),),
    ),
    _Signal(
        "opportunity",
        _terms(
            r"benefits?",
            r"beneficial",
            r"opportunit(?:y|ies)",
            r"upsides?",
            r"gains?",
            r"advantages?",
            r"improve(?:s|d|ment|ments)?",
            r"growth",
            r"payoff",
            r"potential",
            r"leverage",
            r"savings?",
            r"faster",
            r"cheaper",
            r"best case",
        ),
        6,
        3,
        12,
        (("optimistic", 1.0),),
    ),
    _Signal(
        "facts",
        _terms(
            r"what (?:is|are|was|were)",
            r"what's",
            r"how (?:many|much|long|often)",
            r"when (?:did|was|is|were)",
            r"where (?:is|are|was)",
            r"who (?:is|was|are)",
            r"defin(?:e|ition)",
            r"number of",
            r"data",
            r"statistics?",
            r"measure(?:d|ment|ments)?",
            r"facts?",
            r"evidence",
            r"sources?",
            r"benchmarks?",
            r"percent(?:age)?",
            r"\d+(?:\.\d+)?\s?%",
        ),
        2,
        1,
        4,
        # Few points (a fact question is simple) but a strong pull towards the factual hat.
        (("factual", 5.0),),
    ),
)

_WORD = re.compile(r"\S+")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]+\S.*$", re.MULTILINE)
_ORDINAL = _terms(
    r"first(?:ly)?",
    r"second(?:ly)?",
    r"third(?:ly)?",
    r"then",
    r"finally",
    r"lastly",
    r"additionally",
    r"moreover",
    r"furthermore",
)
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_EITHER_OR = re.compile(r"\bor\b")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")

_LENGTH_FREE_WORDS = 12  # a one-liner costs nothing for its length
_LENGTH_POINTS_PER_WORD = 0.25
_LENGTH_CAP = 20.0
_QUESTION_POINTS, _QUESTION_CAP = 3.0, 10.0
_STRUCTURE_POINTS, _STRUCTURE_CAP = 4.0, 20.0
_REVISION_POINTS = 14.0
_BRANCH_POINTS = 10.0
_LOW_CONFIDENCE = 0.5
_LOW_CONFIDENCE_POINTS = 12.0  # plus up to 10 more as confidence falls to 0


def _sentences(text: str) -> list[str]:
    parts = _SENTENCE_END.split(text)
    return [p for p in parts if len(_WORD.findall(p)) >= 2]


def _distinct(matches: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for m in matches:
        seen.setdefault(" ".join(m.lower().split()), None)
    return list(seen)


def _shown(terms: list[str], limit: int = 4) -> str:
    more = f" +{len(terms) - limit}" if len(terms) > limit else ""
    return ", ".join(terms[:limit]) + more


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _score(ctx: ThoughtContext) -> tuple[list[Factor], dict[Hat, float]]:
    text = ctx.thought.lower()
    factors: list[Factor] = []
    affinity: dict[Hat, float] = dict.fromkeys(HATS, 0.0)

    def add(name: str, points: float, detail: str) -> None:
        if points > 0:
            factors.append(Factor(name=name, points=round(points, 1), detail=detail))

    words = len(_WORD.findall(text))
    add(
        "length",
        min(_LENGTH_CAP, max(0, words - _LENGTH_FREE_WORDS) * _LENGTH_POINTS_PER_WORD),
        _plural(words, "word"),
    )

    questions = text.count("?")
    add("questions", min(_QUESTION_CAP, questions * _QUESTION_POINTS), _plural(questions, "question"))

    sentences = _sentences(_LIST_ITEM.sub("", text))  # list items are counted as items, not sentences
    items, ordinals, semicolons = len(_LIST_ITEM.findall(text)), len(_ORDINAL.findall(text)), text.count(";")
    parts = items + ordinals + semicolons + max(0, len(sentences) - 1)
    shape = [
        _plural(n, label)
        for n, label in (
            (items, "list item"),
            (ordinals, "sequence word"),
            (semicolons, "semicolon"),
            (len(sentences), "sentence"),
        )
        if n and (label != "sentence" or n > 1)
    ]
    add("structure", min(_STRUCTURE_CAP, parts * _STRUCTURE_POINTS), ", ".join(shape))

    for signal in _SIGNALS:
        terms = _distinct(signal.pattern.findall(text))
        if signal.name == "facts":
            terms = _distinct("percentages" if t[0].isdigit() else t for t in terms)
        if signal.name == "decision" and any(
            s.rstrip().endswith("?") and _EITHER_OR.search(s) for s in _SENTENCE_BREAK.split(text)
        ):
            terms.append("either/or question")
        if not terms:
            continue
        points = min(signal.cap, signal.first + signal.each * (len(terms) - 1))
        add(signal.name, points, _shown(terms))
        for hat, share in signal.affinity:
            affinity[hat] += points * share

    if ctx.revised is not None:
        add("revision", _REVISION_POINTS, f"revises thought {ctx.revised[0]}")
        affinity["critical"] += _REVISION_POINTS
    if ctx.branch_origin is not None:
        add("branch", _BRANCH_POINTS, f"branches from thought {ctx.branch_origin[0]}")
        affinity["creative"] += _BRANCH_POINTS
    if ctx.confidence is not None and ctx.confidence < _LOW_CONFIDENCE:
        points = _LOW_CONFIDENCE_POINTS + (_LOW_CONFIDENCE - max(0.0, ctx.confidence)) * 20
        add("low_confidence", points, f"confidence {ctx.confidence:.2f}")
        affinity["critical"] += points
    return factors, affinity


def _rank(affinity: dict[Hat, float], critical_first: bool) -> list[Hat]:
    def key(hat: Hat) -> tuple[bool, float, int]:
        return (not (critical_first and hat == "critical"), -affinity[hat], TIE_ORDER.index(hat))

    return sorted(HATS, key=key)


def strategy_for(score: float, thresholds: tuple[int, int, int]) -> str:
    double, triple, full = thresholds
    if score >= full:
        return "full"
    if score >= triple:
        return "triple"
    if score >= double:
        return "double"
    return "single"


def route(ctx: ThoughtContext, thresholds: tuple[int, int, int], override: str = "auto") -> Route:
    """Score `ctx` and choose a strategy and its hats. `override` forces the strategy, never the score."""
    if override not in OVERRIDES:
        raise ValueError(f"unknown strategy {override!r}; choose from {', '.join(OVERRIDES)}")
    if not (len(thresholds) == 3 and thresholds[0] < thresholds[1] < thresholds[2]):
        raise ValueError(f"router thresholds must be three increasing scores, got {thresholds!r}")
    factors, affinity = _score(ctx)
    raw = sum(f.points for f in factors)
    score = round(min(100.0, max(0.0, raw)), 1)
    strategy = strategy_for(score, thresholds) if override == "auto" else override
    count = STRATEGIES[strategy].hats
    if count >= len(HATS):
        hats = HATS
    else:
        needs_review = ctx.revised is not None or (ctx.confidence is not None and ctx.confidence < _LOW_CONFIDENCE)
        hats = tuple(_rank(affinity, critical_first=needs_review)[:count])
    return Route(strategy=strategy, score=score, factors=tuple(factors), hats=hats)
