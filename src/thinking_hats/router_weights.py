"""The router's weights, as data: the points each named factor earns per unit, and the floors that what is asked
sets. Written by tests/routing/train.py from the labelled corpus (tests/routing/*.jsonl); change them by
retraining there (`python tests/routing/train.py --write`), not by hand.

A factor with `count` units (words, questions, parts, distinct terms, positions) earns
`min(cap, first + each * (count - 1))` points; a thought that asks something listed in FLOORS scores at least
that much, whatever else it says.
"""

from __future__ import annotations

# factor: (points for the first unit, points for each further unit, cap)
POINTS: dict[str, tuple[float, float, float]] = {
    "length": (0.35, 0.35, 28.0),
    "questions": (3.0, 3.0, 9.0),
    "structure": (5.0, 5.0, 20.0),
    "decision": (5.0, 5.0, 15.0),
    "dilemma": (10.0, 0.0, 10.0),
    "risk": (8.0, 8.0, 32.0),
    "stakes": (8.0, 8.0, 32.0),
    "stakeholders": (8.0, 8.0, 48.0),
    "planning": (10.0, 0.0, 10.0),
    "ideation": (10.0, 0.0, 10.0),
    "people": (6.0, 6.0, 36.0),
    "opportunity": (3.0, 3.0, 9.0),
    "facts": (1.0, 0.0, 1.0),
    "revision": (10.0, 0.0, 10.0),
    "branch": (10.0, 0.0, 10.0),
    "low_confidence": (10.0, 0.0, 10.0),
}

# what is asked: the score it sets at least ("either" is a question offering options, shown on the decision factor)
FLOORS: dict[str, float] = {
    "dilemma": 45.0,
    "either": 25.0,
    "planning": 25.0,
    "ideation": 25.0,
    "revision": 25.0,
    "branch": 25.0,
    "low_confidence": 25.0,
}
