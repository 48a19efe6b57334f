"""Routing measured against labels: a JSONL file of thoughts, each with the strategies a careful engineer accepts.

One JSON object a line (the format of tests/routing/*.jsonl):
  id, thought, accept (1-2 adjacent strategies, cheapest first or not), and optionally lang, domain, kind,
  hat (a hat that must be among those chosen), thought_number, total_thoughts, revises (text of the revised
  thought), branch_from (text the branch starts from), branch_id, confidence (a crash step's), tool.
Also `thinking-hats route`: how one thought is routed, or a labelled file's agreement, without any model call.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analysis import HATS, Hat, ThoughtContext
from ..config import Settings
from ..errors import ThinkingError
from .router import STRATEGIES, Route, route

ORDER: tuple[str, ...] = tuple(STRATEGIES)  # cheapest first
_OPTIONAL_TEXT = ("lang", "domain", "kind", "revises", "branch_from", "branch_id", "tool")


class LabelError(ThinkingError):
    """A labelled file that cannot be evaluated: the message names the file, the line and the field."""


@dataclass(frozen=True)
class Labelled:
    id: str
    thought: str
    accept: tuple[str, ...]  # cheapest first
    lang: str = "-"
    domain: str = ""
    kind: str = ""
    hat: Hat | None = None
    thought_number: int = 1
    total_thoughts: int = 1
    revises: str | None = None
    branch_from: str | None = None
    branch_id: str | None = None
    confidence: float | None = None
    tool: str | None = None

    def context(self) -> ThoughtContext:
        earlier = max(1, self.thought_number - 1)  # the labels give the earlier thought's text, not its number
        return ThoughtContext(
            thought=self.thought,
            thought_number=self.thought_number,
            total_thoughts=max(self.total_thoughts, self.thought_number),
            revised=(earlier, self.revises) if self.revises is not None else None,
            branch_origin=(earlier, self.branch_from) if self.branch_from is not None else None,
            branch_id=self.branch_id,
            confidence=self.confidence,
        )


def _row(raw: object, where: str) -> Labelled:
    def bad(name: str, why: str) -> LabelError:
        return LabelError(f"{where}: field '{name}' {why}")

    if not isinstance(raw, dict):
        raise LabelError(f"{where}: expected a JSON object, got {type(raw).__name__}")
    values: dict[str, Any] = {}
    for name in ("id", "thought"):
        value = raw.get(name)
        if not isinstance(value, str | int) or isinstance(value, bool) or not str(value).strip():
            raise bad(name, "is missing or empty" if value in (None, "") else f"must be text, got {value!r}")
        values[name] = str(value)
    accept = raw.get("accept")
    if isinstance(accept, str):
        accept = [accept]
    if not isinstance(accept, list) or not 1 <= len(accept) <= 2:
        raise bad("accept", f"must list 1 or 2 strategies, got {accept!r}")
    unknown = [a for a in accept if a not in ORDER]
    if unknown:
        raise bad("accept", f"names {unknown[0]!r}; choose from {', '.join(ORDER)}")
    ranks = sorted({ORDER.index(a) for a in accept})
    if ranks[-1] - ranks[0] > 1:
        raise bad("accept", f"must name adjacent strategies (like single and double), got {accept!r}")
    values["accept"] = tuple(ORDER[r] for r in ranks)
    for name in _OPTIONAL_TEXT:
        value = raw.get(name)
        if value is not None and not isinstance(value, str):
            raise bad(name, f"must be text, got {value!r}")
        if value is not None:
            values[name] = value
    hat = raw.get("hat")
    if hat is not None and hat not in HATS:
        raise bad("hat", f"names {hat!r}; choose from {', '.join(HATS)}")
    values["hat"] = hat
    for name in ("thought_number", "total_thoughts"):
        value = raw.get(name, 1)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise bad(name, f"must be a whole number from 1, got {value!r}")
        values[name] = value
    confidence = raw.get("confidence")
    if confidence is not None and (
        not isinstance(confidence, int | float) or isinstance(confidence, bool) or not 0 <= confidence <= 1
    ):
        raise bad("confidence", f"must be a number from 0 to 1, got {confidence!r}")
    values["confidence"] = None if confidence is None else float(confidence)
    return Labelled(**values)


def load(path: Path) -> list[Labelled]:
    """The labelled thoughts in `path`; a malformed line raises LabelError naming the line and the field."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelError(f"cannot read {path}: {exc}") from None
    rows: list[Labelled] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LabelError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        row = _row(raw, where)
        if row.id in seen:
            raise LabelError(f"{where}: field 'id' repeats {row.id!r} from line {seen[row.id]}")
        seen[row.id] = number
        rows.append(row)
    if not rows:
        raise LabelError(f"{path} has no labelled thoughts (one JSON object a line)")
    return rows


@dataclass(frozen=True)
class Judged:
    row: Labelled
    route: Route

    @property
    def over(self) -> bool:
        return ORDER.index(self.route.strategy) > ORDER.index(self.row.accept[-1])

    @property
    def under(self) -> bool:
        return ORDER.index(self.route.strategy) < ORDER.index(self.row.accept[0])

    @property
    def hat_missed(self) -> bool:
        return self.row.hat is not None and self.row.hat not in self.route.hats

    @property
    def agrees(self) -> bool:
        return self.route.strategy in self.row.accept and not self.hat_missed


@dataclass
class Report:
    judged: list[Judged]
    thresholds: tuple[int, int, int]
    languages: dict[str, tuple[int, int]] = field(default_factory=dict)  # lang -> (agreeing, total)
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)  # (cheapest accepted, chosen) -> count

    @property
    def agreement(self) -> float:
        return _share(sum(j.agrees for j in self.judged), len(self.judged))

    @property
    def over_routed(self) -> float:
        return _share(sum(j.over for j in self.judged), len(self.judged))

    @property
    def under_routed(self) -> float:
        return _share(sum(j.under for j in self.judged), len(self.judged))

    @property
    def hats_missed(self) -> float:
        return _share(sum(j.hat_missed for j in self.judged), len(self.judged))

    def language_agreement(self, lang: str) -> float:
        agreeing, total = self.languages[lang]
        return _share(agreeing, total)

    def misses(self) -> list[Judged]:
        return [j for j in self.judged if not j.agrees]

    def as_json(self) -> dict[str, Any]:
        return {
            "thoughts": len(self.judged),
            "thresholds": list(self.thresholds),
            "agreement": self.agreement,
            "languages": {
                lang: {"thoughts": total, "agreement": _share(agreeing, total)}
                for lang, (agreeing, total) in self.languages.items()
            },
            "overRouted": self.over_routed,
            "underRouted": self.under_routed,
            "hatMissed": self.hats_missed,
            "confusion": {label: {s: self.confusion[label, s] for s in ORDER} for label in ORDER},
            "misses": [
                {
                    "id": j.row.id,
                    "lang": j.row.lang,
                    "accept": list(j.row.accept),
                    "hat": j.row.hat,
                    "chosen": j.route.strategy,
                    "hats": list(j.route.hats),
                    "score": j.route.score,
                }
                for j in self.misses()
            ],
        }


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def evaluate(rows: Sequence[Labelled], thresholds: tuple[int, int, int]) -> Report:
    report = Report([Judged(row, route(row.context(), thresholds)) for row in rows], thresholds)
    for judged in report.judged:
        agreeing, total = report.languages.get(judged.row.lang, (0, 0))
        report.languages[judged.row.lang] = (agreeing + judged.agrees, total + 1)
        report.confusion[judged.row.accept[0], judged.route.strategy] += 1
    report.languages = dict(sorted(report.languages.items(), key=lambda item: (item[0] != "en", item[0])))
    return report


# --- `thinking-hats route` -----------------------------------------------------------------------------------


def _percent(share: float) -> str:
    return f"{share * 100:.1f}%"


def format_report(report: Report, source: str, misses: bool = False) -> str:
    lines = [
        f"{source}: {len(report.judged)} labelled thoughts, "
        f"THINKING_THRESHOLDS={','.join(map(str, report.thresholds))}",
        "",
        f"{'language':<10}{'thoughts':>9}{'agreement':>11}",
    ]
    for lang, (agreeing, total) in report.languages.items():
        lines.append(f"{lang:<10}{total:>9}{_percent(_share(agreeing, total)):>11}")
    lines += [
        f"{'overall':<10}{len(report.judged):>9}{_percent(report.agreement):>11}",
        "",
        f"routed above the labels: {_percent(report.over_routed)}   below: {_percent(report.under_routed)}   "
        f"required hat missing: {_percent(report.hats_missed)}",
        "",
        "confusion (rows: cheapest acceptable strategy, columns: chosen)",
        f"{'':<10}" + "".join(f"{s:>8}" for s in ORDER),
    ]
    for label in ORDER:
        lines.append(f"{label:<10}" + "".join(f"{report.confusion[label, s]:>8}" for s in ORDER))
    if misses:
        lines += ["", "disagreements:"]
        for j in report.misses():
            why = "hat" if j.route.strategy in j.row.accept else "strategy"
            factors = "; ".join(f"{f.name} {f.points:g}" for f in j.route.factors)
            lines.append(
                f"  {j.row.id} [{j.row.lang}] wrong {why}: accept {'/'.join(j.row.accept)}"
                f"{' with ' + j.row.hat if j.row.hat else ''}, chose {j.route.strategy} "
                f"({', '.join(j.route.hats)}) at {j.route.score:g}: {factors}"
            )
    return "\n".join(lines) + "\n"


def format_route(chosen: Route) -> str:
    lines = [f"score {chosen.score:g}", ""]
    width = max((len(f.name) for f in chosen.factors), default=0)
    lines += [f"  {f.name:<{width}}  {f.points:>5g}  {f.detail}" for f in chosen.factors] or ["  (no factor)"]
    merged = " (merged in code)" if chosen.merged else ""
    lines += [
        "",
        f"strategy {chosen.strategy}: {chosen.calls} model call{'s' if chosen.calls != 1 else ''} "
        f"in {chosen.rounds} round{'s' if chosen.rounds != 1 else ''}{merged}",
        f"hats {', '.join(chosen.hats)}",
    ]
    return "\n".join(lines) + "\n"


def route_json(chosen: Route) -> dict[str, Any]:
    return {
        "score": chosen.score,
        "factors": [f.model_dump() for f in chosen.factors],
        "strategy": chosen.strategy,
        "hats": list(chosen.hats),
        "synthesis": "model" if chosen.synthesis else ("merge" if chosen.merged else "none"),
        "calls": chosen.calls,
        "rounds": chosen.rounds,
    }


def route_command(settings: Settings, thought: str | None, labelled: Path | None, as_json: bool, misses: bool) -> str:
    """What `thinking-hats route` prints (THINKING_THRESHOLDS and THINKING_SYNTHESIS apply); LabelError if it can't."""
    if (thought is None) == (labelled is None):
        raise LabelError('give a thought to route, or --eval FILE (not both): thinking-hats route "..."')
    thresholds = settings.router_thresholds()
    if labelled is not None:
        report = evaluate(load(labelled), thresholds)
        if as_json:
            return json.dumps(report.as_json(), indent=2, ensure_ascii=False) + "\n"
        return format_report(report, str(labelled), misses)
    assert thought is not None
    if not thought.strip():
        raise LabelError("the thought to route is empty")
    chosen = route(ThoughtContext(thought=thought, thought_number=1, total_thoughts=1), thresholds)
    chosen = chosen.with_synthesis(settings.thinking_synthesis)
    if as_json:
        return json.dumps(route_json(chosen), indent=2, ensure_ascii=False) + "\n"
    return format_route(chosen)
