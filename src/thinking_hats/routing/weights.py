"""The router's weights, as data: the points each named factor earns per unit, and the floors that what is asked
sets. Rounds 2-8 shipped hand-set ones (cross-validation found fitted ones no better). Round 9 takes length and
punctuation for tie-breakers only (a long, careful step is not a hard one), so the points were refitted by
tests/routing/train.py's coordinate search with those two held to a few points; what is asked (the floors) and the
simple asks (the ceilings) stay the labelling rules, never fitted.

A factor with `count` units (words, questions, parts, distinct terms, positions) earns
`min(cap, first + each * (count - 1))` points; a thought that asks something listed in FLOORS scores at least
that much, whatever else it says.
"""

from __future__ import annotations

# round 9: fitted by tests/routing/train.py's coordinate search on every tuning file (tuning-monologue.jsonl counted
# five times), length and structure held to tie-breakers (at most 6 points each), the floors and ceilings held at
# the labelling rules; the round-8 hand-set weights were the start and the prior. The asks' own points (dilemma,
# ideation, planning, a question, a fact asked) stay hand-set and small: their floors decide, the points explain
# factor: (points for the first unit, points for each further unit, cap)
POINTS: dict[str, tuple[float, float, float]] = {
    "length": (0.08, 0.1, 6),
    "questions": (2, 1, 4),
    "structure": (2, 1, 6),
    "decision": (7, 6, 14),
    "dilemma": (10, 0, 10),
    "risk": (10, 8, 32),
    "stakes": (12, 10, 32),
    "stakeholders": (20, 17, 48),
    "planning": (10, 0, 10),
    "ideation": (10, 0, 10),
    "people": (10, 10, 38),
    "opportunity": (7, 3, 10),
    "facts": (1, 0, 1),
    "revision": (20, 0, 20),
    "branch": (10, 0, 10),
    "low_confidence": (20, 0, 20),
    "options": (5, 0, 10),
}

# what is asked: the score it sets at least ("either" is a question offering options, shown on the
# decision factor)
FLOORS: dict[str, float] = {
    "dilemma": 45,
    "either": 25,
    "either_stakes": 45,
    "planning": 25,
    "planning_stakes": 45,
    "ideation": 25,
    "revision": 25,
    "branch": 25,
    "low_confidence": 25,
    "stated": 25,
    "weigh": 25,
}

# the score allowed at most: a simple ask (a lookup or a sum, a next step; see
# terms.LOOKUP_TERMS), a branch, a doubt or ideas with no people or stakes in play, and a
# revision, a branch or a doubt that asks for no decision, and an either/or question about pasted material
CEILINGS: dict[str, float] = {
    "lookup": 20,
    "step": 20,
    "second_angle": 44,
    "session_step": 64,
    "pasted_question": 44,
    "told": 20,
}
