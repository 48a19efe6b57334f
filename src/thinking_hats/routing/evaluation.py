"""Routing measured against labels: a JSONL file of thoughts, each with the strategies careful people accept.

One JSON object a line (the format of tests/routing/*.jsonl):
  id, thought, and either `labels` (a list of `{accept, hat?}`, one per blind labeller) or one `accept` (1-2
  adjacent strategies) with an optional `hat`; optionally lang, domain, kind, thought_number, total_thoughts,
  revises (text of the revised thought), branch_from (text the branch starts from), branch_id, confidence (a crash
  step's), tool.
The router is judged against the consensus of the labels: the strategies at least two labellers accept (a majority
where there are more than three; the one label where there is only one). A row with an empty consensus is
*contested* and reported apart. The route is *right* when its strategy is in the consensus and it runs every hat
that as many labellers require, *under* when cheaper than all of the consensus, *over* when dearer.
Also `thinking-hats route`: how one thought is routed, or a labelled file's figures, without any model call.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
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
class Label:
    """What one labeller accepts: a contiguous range of strategies (cheapest first) and maybe a required hat."""

    accept: tuple[str, ...]
    hat: Hat | None = None
    labeller: str | None = None  # who gave it, where the file says (a blind label's letter)


def quorum(labels: int) -> int:
    """How many labellers must accept a strategy (or require a hat) for it to be consensus: two of three, a
    majority of more, the only one of one."""
    return 1 if labels == 1 else max(2, labels // 2 + 1)


@dataclass(frozen=True)
class Labelled:
    id: str
    thought: str
    labels: tuple[Label, ...]
    lang: str = "-"
    domain: str = ""
    kind: str = ""
    thought_number: int = 1
    total_thoughts: int = 1
    revises: str | None = None
    branch_from: str | None = None
    branch_id: str | None = None
    confidence: float | None = None
    tool: str | None = None

    @property
    def accept(self) -> tuple[str, ...]:
        """The consensus: strategies enough labellers accept, cheapest first; empty when contested."""
        need = quorum(len(self.labels))
        votes = Counter(s for label in self.labels for s in label.accept)
        return tuple(s for s in ORDER if votes[s] >= need)

    @property
    def hat(self) -> Hat | None:
        """A hat enough labellers require (the first in HATS order if, rarely, two are)."""
        need = quorum(len(self.labels))
        votes = Counter(label.hat for label in self.labels if label.hat is not None)
        return next((h for h in HATS if votes[h] >= need), None)

    @property
    def contested(self) -> bool:
        return not self.accept

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
    if "labels" in raw:
        labels = raw["labels"]
        if not isinstance(labels, list) or not labels:
            raise bad("labels", f"must list one or more {{accept, hat?}} objects, got {labels!r}")
        values["labels"] = tuple(_label(item, f"{where}: labels[{n}]") for n, item in enumerate(labels))
    else:
        values["labels"] = (_label(raw, where),)
    for name in _OPTIONAL_TEXT:
        value = raw.get(name)
        if value is not None and not isinstance(value, str):
            raise bad(name, f"must be text, got {value!r}")
        if value is not None:
            values[name] = value
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


def _label(raw: object, where: str) -> Label:
    """One labeller's `accept` (1-2 adjacent strategies, or a name) and optional `hat`."""
    if not isinstance(raw, dict):
        raise LabelError(f"{where}: expected a JSON object with 'accept', got {type(raw).__name__}")
    accept = raw.get("accept")
    if isinstance(accept, str):
        accept = [accept]
    if not isinstance(accept, list) or not 1 <= len(accept) <= 2:
        raise LabelError(f"{where}: field 'accept' must list 1 or 2 strategies, got {accept!r}")
    unknown = [a for a in accept if a not in ORDER]
    if unknown:
        raise LabelError(f"{where}: field 'accept' names {unknown[0]!r}; choose from {', '.join(ORDER)}")
    ranks = sorted({ORDER.index(a) for a in accept})
    if ranks[-1] - ranks[0] > 1:
        raise LabelError(
            f"{where}: field 'accept' must name adjacent strategies (like single and double), got {accept!r}"
        )
    hat = raw.get("hat")
    if hat is not None and hat not in HATS:
        raise LabelError(f"{where}: field 'hat' names {hat!r}; choose from {', '.join(HATS)}")
    labeller = raw.get("labeller")
    return Label(accept=tuple(ORDER[r] for r in ranks), hat=hat, labeller=None if labeller is None else str(labeller))


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
    def contested(self) -> bool:
        return self.row.contested

    @property
    def over(self) -> bool:
        return not self.contested and ORDER.index(self.route.strategy) > ORDER.index(self.row.accept[-1])

    @property
    def under(self) -> bool:
        return not self.contested and ORDER.index(self.route.strategy) < ORDER.index(self.row.accept[0])

    @property
    def hat_missed(self) -> bool:
        return not self.contested and self.row.hat is not None and self.row.hat not in self.route.hats

    @property
    def agrees(self) -> bool:
        """Right: the strategy is in the consensus and every hat the consensus requires runs."""
        return not self.contested and self.route.strategy in self.row.accept and not self.hat_missed


def _calls(strategy: str) -> int:
    return STRATEGIES[strategy].calls


@dataclass
class Tally:
    """Right, under, over and hat misses over the uncontested rows of one group (a language, a kind, all)."""

    rows: int = 0
    right: int = 0
    under: int = 0
    over: int = 0
    hat_missed: int = 0
    contested: int = 0

    def add(self, judged: Judged) -> None:
        if judged.contested:
            self.contested += 1
            return
        self.rows += 1
        self.right += judged.agrees
        self.under += judged.under
        self.over += judged.over
        self.hat_missed += judged.hat_missed

    def as_json(self) -> dict[str, Any]:
        return {
            "thoughts": self.rows,
            "agreement": _share(self.right, self.rows),
            "under": _share(self.under, self.rows),
            "over": _share(self.over, self.rows),
            "hatMissed": _share(self.hat_missed, self.rows),
            "contested": self.contested,
        }


@dataclass
class Report:
    judged: list[Judged]
    escalation: float
    total: Tally = field(default_factory=Tally)
    languages: dict[str, Tally] = field(default_factory=dict)
    kinds: dict[str, Tally] = field(default_factory=dict)
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)  # (cheapest consensus, chosen) -> count

    @property
    def counted(self) -> list[Judged]:
        return [j for j in self.judged if not j.contested]

    @property
    def contested(self) -> int:
        return self.total.contested

    @property
    def agreement(self) -> float:
        return _share(self.total.right, self.total.rows)

    @property
    def over_routed(self) -> float:
        return _share(self.total.over, self.total.rows)

    @property
    def under_routed(self) -> float:
        return _share(self.total.under, self.total.rows)

    @property
    def hats_missed(self) -> float:
        return _share(self.total.hat_missed, self.total.rows)

    def language_agreement(self, lang: str) -> float:
        tally = self.languages[lang]
        return _share(tally.right, tally.rows)

    def misses(self) -> list[Judged]:
        return [j for j in self.counted if not j.agrees]

    def cost(self) -> dict[str, float | int]:
        """Model calls of the chosen strategies against the cheapest and the dearest consensus strategy."""
        counted = self.counted
        chosen = sum(_calls(j.route.strategy) for j in counted)
        cheapest = sum(_calls(j.row.accept[0]) for j in counted)
        dearest = sum(_calls(j.row.accept[-1]) for j in counted)
        return {
            "calls": chosen,
            "cheapestCalls": cheapest,
            "dearestCalls": dearest,
            "vsCheapest": round(chosen / cheapest, 3) if cheapest else 0.0,
            "vsDearest": round(chosen / dearest, 3) if dearest else 0.0,
        }

    def labellers(self) -> dict[str, float | int] | None:
        """How far the labellers agree with each other (rows with two or more labels): the share of pairs of
        labels whose ranges overlap, and of labels whose cheapest strategy is in the row's consensus."""
        pairs = overlapping = own = in_consensus = 0
        for j in self.judged:
            labels = j.row.labels
            if len(labels) < 2:
                continue
            for a, label in enumerate(labels):
                own += 1
                in_consensus += label.accept[0] in j.row.accept
                for other in labels[a + 1 :]:
                    pairs += 1
                    overlapping += bool(set(label.accept) & set(other.accept))
        if not pairs:
            return None
        return {"pairs": pairs, "overlap": _share(overlapping, pairs), "inConsensus": _share(in_consensus, own)}

    def baselines(self) -> dict[str, dict[str, float]]:
        """Always one strategy on the same rows, with the hat the labellers require where it has room for one (a
        generous constant): what the router is measured beside."""
        result: dict[str, dict[str, float]] = {}
        counted = self.counted
        for strategy in ("single", "double"):
            tally = Tally()
            calls = sum(_calls(strategy) for _ in counted)
            for j in counted:
                hats: tuple[Hat, ...] = (j.row.hat or "factual",) if j.row.hat else ()
                tally.add(Judged(j.row, replace(j.route, strategy=strategy, hats=hats or j.route.hats)))
            cheapest = sum(_calls(j.row.accept[0]) for j in counted)
            result[strategy] = {
                "right": _share(tally.right, tally.rows),
                "under": _share(tally.under, tally.rows),
                "over": _share(tally.over, tally.rows),
                "vsCheapest": round(calls / cheapest, 3) if cheapest else 0.0,
            }
        return result

    def as_json(self) -> dict[str, Any]:
        return {
            "thoughts": len(self.judged),
            "counted": self.total.rows,
            "contested": self.contested,
            "escalation": self.escalation,
            "baselines": self.baselines(),
            "agreement": self.agreement,
            "languages": {lang: tally.as_json() for lang, tally in self.languages.items()},
            "kinds": {kind: tally.as_json() for kind, tally in self.kinds.items()},
            "overRouted": self.over_routed,
            "underRouted": self.under_routed,
            "hatMissed": self.hats_missed,
            "cost": self.cost(),
            "labellers": self.labellers(),
            "confusion": {label: {s: self.confusion[label, s] for s in ORDER} for label in ORDER},
            "misses": [
                {
                    "id": j.row.id,
                    "lang": j.row.lang,
                    "kind": j.row.kind,
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


def evaluate(rows: Sequence[Labelled], escalation: float) -> Report:
    report = Report([Judged(row, route(row.context(), escalation)) for row in rows], escalation)
    for judged in report.judged:
        report.total.add(judged)
        report.languages.setdefault(judged.row.lang, Tally()).add(judged)
        report.kinds.setdefault(judged.row.kind or "-", Tally()).add(judged)
        if not judged.contested:
            report.confusion[judged.row.accept[0], judged.route.strategy] += 1
    report.languages = dict(sorted(report.languages.items(), key=lambda item: (item[0] != "en", item[0])))
    report.kinds = dict(sorted(report.kinds.items()))
    return report


# --- `thinking-hats route` -----------------------------------------------------------------------------------


def _percent(share: float) -> str:
    return f"{share * 100:.1f}%"


def _table(title: str, groups: dict[str, Tally], total: Tally) -> list[str]:
    lines = [f"{title:<22}{'thoughts':>9}{'right':>8}{'under':>8}{'over':>8}{'hat':>7}{'contested':>11}"]
    for name, tally in [*groups.items(), ("overall", total)]:
        lines.append(
            f"{name:<22}{tally.rows:>9}{_percent(_share(tally.right, tally.rows)):>8}"
            f"{_percent(_share(tally.under, tally.rows)):>8}{_percent(_share(tally.over, tally.rows)):>8}"
            f"{_percent(_share(tally.hat_missed, tally.rows)):>7}{tally.contested:>11}"
        )
    return lines


def format_report(report: Report, source: str, misses: bool = False) -> str:
    cost = report.cost()
    lines = [
        f"{source}: {len(report.judged)} labelled thoughts ({report.contested} contested, reported apart), "
        f"THINKING_ESCALATION={report.escalation:g}",
        "",
        *_table("language", report.languages, report.total),
    ]
    if len(report.kinds) > 1:
        lines += ["", *_table("kind", report.kinds, report.total)]
    lines += [
        "",
        f"right: {_percent(report.agreement)}   under (cheaper than the consensus): {_percent(report.under_routed)}   "
        f"over (dearer): {_percent(report.over_routed)}   required hat missing: {_percent(report.hats_missed)}",
        f"model calls: {cost['calls']} chosen, {cost['vsCheapest']}x the cheapest consensus strategy's "
        f"({cost['cheapestCalls']}), {cost['vsDearest']}x the dearest's ({cost['dearestCalls']})",
    ]
    for name, base in report.baselines().items():
        lines.append(
            f"always {name} on the same rows: right {_percent(base['right'])}, under {_percent(base['under'])}, "
            f"over {_percent(base['over'])}, {base['vsCheapest']}x the cheapest consensus strategy's calls"
        )
    agreement = report.labellers()
    if agreement is not None:
        lines.append(
            f"labellers: {_percent(float(agreement['overlap']))} of {agreement['pairs']} pairs of labels overlap; "
            f"{_percent(float(agreement['inConsensus']))} of labels' cheapest strategies are in the consensus"
        )
    lines += [
        "",
        "confusion (rows: cheapest consensus strategy, columns: chosen)",
        f"{'':<10}" + "".join(f"{s:>8}" for s in ORDER),
    ]
    for label in ORDER:
        lines.append(f"{label:<10}" + "".join(f"{report.confusion[label, s]:>8}" for s in ORDER))
    if misses:
        lines += ["", "disagreements:"]
        for j in report.misses():
            why = "hat" if j.route.strategy in j.row.accept else ("over" if j.over else "under")
            factors = "; ".join(f"{f.name} {f.points:g}" for f in j.route.factors)
            lines.append(
                f"  {j.row.id} [{j.row.lang}{' ' + j.row.kind if j.row.kind else ''}] {why}: "
                f"consensus {'/'.join(j.row.accept)}"
                f"{' with ' + j.row.hat if j.row.hat else ''}, chose {j.route.strategy} "
                f"({', '.join(j.route.hats)}) at {j.route.score:g}: {factors}"
            )
    return "\n".join(lines) + "\n"


def format_route(chosen: Route) -> str:
    lines = [f"score {chosen.score:g} (the expected strategy: 0 single, 33.3 double, 66.7 triple, 100 full)", ""]
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
    """What `thinking-hats route` prints (THINKING_ESCALATION and THINKING_SYNTHESIS apply); LabelError if it can't."""
    if (thought is None) == (labelled is None):
        raise LabelError('give a thought to route, or --eval FILE (not both): thinking-hats route "..."')
    escalation = settings.thinking_escalation
    if labelled is not None:
        report = evaluate(load(labelled), escalation)
        if as_json:
            return json.dumps(report.as_json(), indent=2, ensure_ascii=False) + "\n"
        return format_report(report, str(labelled), misses)
    assert thought is not None
    if not thought.strip():
        raise LabelError("the thought to route is empty")
    chosen = route(ThoughtContext(thought=thought, thought_number=1, total_thoughts=1), escalation)
    chosen = chosen.with_synthesis(settings.thinking_synthesis)
    if as_json:
        return json.dumps(route_json(chosen), indent=2, ensure_ascii=False) + "\n"
    return format_route(chosen)
