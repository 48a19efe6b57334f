"""The router's weights, as data: the points each named factor earns per unit, and the floors that what is asked
sets. The shipped ones were set by hand (round 2); tests/routing/train.py fits others by coordinate search, and
cross-validation (tests/routing/crossval.py) found the fitted ones no better on held-out rows, so the hand-set ones
stay. Regenerate this file with `python tests/routing/train.py --write --hand-set` (or `--write` alone to ship the
fitted ones), not by hand.

A factor with `count` units (words, questions, parts, distinct terms, positions) earns
`min(cap, first + each * (count - 1))` points; a thought that asks something listed in FLOORS scores at least
that much, whatever else it says.
"""

from __future__ import annotations

# set by hand
# factor: (points for the first unit, points for each further unit, cap)
POINTS: dict[str, tuple[float, float, float]] = {
    "length": (0.35, 0.35, 28),
    "questions": (3, 3, 9),
    "structure": (5, 5, 20),
    "decision": (5, 5, 15),
    "dilemma": (10, 0, 10),
    "risk": (8, 8, 32),
    "stakes": (8, 8, 32),
    "stakeholders": (8, 8, 48),
    "planning": (10, 0, 10),
    "ideation": (10, 0, 10),
    "people": (6, 6, 36),
    "opportunity": (3, 3, 9),
    "facts": (1, 0, 1),
    "revision": (10, 0, 10),
    "branch": (10, 0, 10),
    "low_confidence": (10, 0, 10),
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
}
