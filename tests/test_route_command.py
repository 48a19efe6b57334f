"""`thinking-hats route`: how a thought is routed, and a labelled file's agreement, through the CLI, no model call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from thinking_hats.cli.main import main

DECISION = (
    "Should we migrate our payment service to microservices this quarter? First, the team is stretched and "
    "morale is low; second, there is a real risk of outages; third, customers want faster releases."
)


@pytest.fixture(autouse=True)
def _a_provider_is_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    # With a provider set, any model call would be attempted (and refused by the offline guard): none may happen.
    monkeypatch.setenv("LLM_PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-used")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def labelled(tmp_path: Path, *rows: dict[str, Any] | str) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_route_prints_each_strategys_probability_the_features_that_weighed_most_the_strategy_and_hats(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "route", DECISION)

    assert code == 0 and err == ""
    head, factors, tail = out.split("\n\n")[0:3]
    rows = factors.splitlines()
    assert [row.split()[0] for row in rows[:4]] == ["single", "double", "triple", "full"]
    assert all("that" in row and "is the least this thought needs" in row for row in rows[:4])
    assert head.startswith(f"score {sum(float(row.split()[1]) for row in rows):g} ")
    features = [row for row in rows if row.split()[0] == "feature"]
    assert len(features) == 3 and all(" towards " in row for row in features)
    assert "strategy double: 3 model calls in 2 rounds" in tail


def test_route_json_is_the_reply_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "route", "How many bytes are in a kilobyte?", "--json")

    assert code == 0
    routed = json.loads(out)
    assert routed["strategy"] == "single" and routed["hats"] == ["factual"]
    assert (routed["calls"], routed["rounds"], routed["synthesis"]) == (1, 1, "none")
    assert routed["score"] == pytest.approx(sum(f["points"] for f in routed["factors"]), abs=0.11)
    assert {"name", "points", "detail"} == set(routed["factors"][0])


def test_route_reads_other_languages(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "route", "我们应该关闭欧洲业务吗？", "--json")

    routed = json.loads(out)
    assert code == 0 and routed["strategy"] != "single"
    assert any(f["name"] == "feature" and "我们" in f["detail"] for f in routed["factors"])


def test_route_respects_thinking_escalation(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    thought = "Should we use Postgres or MongoDB for the analytics service?"
    _, default, _ = run(capsys, "route", thought, "--json")
    monkeypatch.setenv("THINKING_ESCALATION", "0.01")
    _, eager, _ = run(capsys, "route", thought, "--json")

    assert json.loads(default)["strategy"] == "double"
    assert json.loads(eager)["strategy"] in ("triple", "full")
    assert json.loads(default)["score"] == json.loads(eager)["score"]


def test_route_shows_the_merge_setting_in_the_call_count(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THINKING_SYNTHESIS", "merge")
    code, out, _ = run(capsys, "route", "Should we use Postgres or MongoDB for the analytics service?")

    assert code == 0
    assert "strategy double: 2 model calls in 1 round (merged in code)" in out


def test_route_without_a_thought_or_file_says_how_to_call_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "route")
    assert code == 2 and out == ""
    assert 'thinking-hats route "..."' in err


ROWS: list[dict[str, Any]] = [
    {
        "id": "fact",
        "lang": "en",
        "thought": "How many bytes are in a kilobyte?",
        "accept": ["single"],
        "hat": "factual",
    },
    {"id": "hard", "lang": "en", "thought": DECISION, "accept": ["double", "triple"]},
    {"id": "de", "lang": "de", "thought": "Wie viele Bytes hat ein Kilobyte?", "accept": ["single"]},
    # Labelled as needing all five: the router's double is below the label (under-routed), not above it.
    {"id": "under", "lang": "de", "thought": "Sollen wir Postgres oder MongoDB nehmen?", "accept": ["full"]},
    # A required hat the router does not choose: the strategy agrees, the hat does not.
    {"id": "hat", "lang": "es", "thought": "¿Cuál es la capital de Francia?", "accept": ["single"], "hat": "creative"},
    {"id": "over", "lang": "es", "thought": "¿Deberíamos cerrar el negocio en Europa?", "accept": ["single"]},
]


def test_eval_prints_right_under_over_per_language_and_kind_the_cost_and_a_confusion_matrix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = labelled(tmp_path, *ROWS)
    code, out, err = run(capsys, "route", "--eval", str(path))

    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"{path}: 6 labelled thoughts (0 contested, reported apart), THINKING_ESCALATION=0.5"
    assert lines[2].split() == ["language", "thoughts", "right", "under", "over", "hat", "contested"]
    assert lines[3].split() == ["en", "2", "100.0%", "0.0%", "0.0%", "0.0%", "0"]
    assert lines[4].split() == ["de", "2", "50.0%", "50.0%", "0.0%", "0.0%", "0"]
    assert lines[5].split() == ["es", "2", "0.0%", "0.0%", "50.0%", "50.0%", "0"]
    assert lines[6].split() == ["overall", "6", "50.0%", "16.7%", "16.7%", "16.7%", "0"]
    assert "right: 50.0%   under (cheaper than the consensus): 16.7%   over (dearer): 16.7%" in out
    # chosen: single, double, single, double, single, double = 12 calls; cheapest consensus 1+3+1+6+1+1 = 13,
    # dearest 1+4+1+6+1+1 = 14
    assert "model calls: 12 chosen, 0.923x the cheapest consensus strategy's (13), 0.857x the dearest's (14)" in out
    # beside the router on the same rows: always single (under on hard and under), always double (over on four)
    assert "always single on the same rows: right 66.7%, under 33.3%, over 0.0%, 0.462x" in out
    assert "always double on the same rows: right 16.7%, under 16.7%, over 66.7%, 1.385x" in out
    matrix = lines[lines.index("confusion (rows: cheapest consensus strategy, columns: chosen)") + 1 :]
    assert matrix[0].split() == ["single", "double", "triple", "full"]
    assert matrix[1].split() == ["single", "3", "1", "0", "0"]  # fact, de, hat; over
    assert matrix[2].split() == ["double", "0", "1", "0", "0"]
    assert matrix[4].split() == ["full", "0", "1", "0", "0"]


def test_eval_lists_the_disagreements_on_request(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "route", "--eval", str(labelled(tmp_path, *ROWS)), "--misses")

    assert code == 0
    misses = out[out.index("disagreements:") :].splitlines()[1:]
    assert [line.split()[0] for line in misses] == ["under", "hat", "over"]
    assert "hat: consensus single with creative, chose single (factual)" in misses[1]


def test_eval_json_carries_the_same_figures(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "route", "--eval", str(labelled(tmp_path, *ROWS)), "--json")

    report = json.loads(out)
    assert code == 0
    assert report["agreement"] == 0.5 and report["overRouted"] == report["underRouted"] == 0.1667
    assert report["languages"]["de"] == {
        "thoughts": 2,
        "agreement": 0.5,
        "under": 0.5,
        "over": 0.0,
        "hatMissed": 0.0,
        "contested": 0,
    }
    assert report["confusion"]["full"]["double"] == 1
    assert report["cost"] == {
        "calls": 12,
        "cheapestCalls": 13,
        "dearestCalls": 14,
        "vsCheapest": 0.923,
        "vsDearest": 0.857,
    }
    assert report["baselines"]["single"]["right"] == 0.6667 and report["baselines"]["double"]["over"] == 0.6667
    assert report["labellers"] is None  # one label a row: nothing to compare
    assert [m["id"] for m in report["misses"]] == ["under", "hat", "over"]


def _three(*accepts: list[str], hats: tuple[str | None, ...] = (None, None, None)) -> list[dict[str, Any]]:
    return [{"accept": a, **({"hat": h} if h else {})} for a, h in zip(accepts, hats, strict=True)]


def test_eval_judges_against_what_two_of_three_blind_labellers_accept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = [
        # consensus single (all three), with factual (two of three): the route is right
        {
            "id": "agreed",
            "lang": "es",
            "kind": "lookup",
            "thought": "¿Cuál es la capital de Francia?",
            "labels": _three(["single"], ["single", "double"], ["single"], hats=("factual", "factual", None)),
        },
        # consensus single: the decision goes to two hats, dearer than that -> over
        {
            "id": "dear",
            "lang": "en",
            "kind": "decision",
            "thought": DECISION,
            "labels": _three(["single"], ["single"], ["single", "double"]),
        },
        # no strategy has two votes: contested, reported apart and not counted
        {
            "id": "split",
            "lang": "en",
            "kind": "lookup",
            "thought": "What is the boiling point of water at sea level?",
            "labels": _three(["single"], ["double"], ["triple"]),
        },
        # a hat only one labeller requires is not required
        {
            "id": "one-hat",
            "lang": "en",
            "kind": "lookup",
            "thought": "How many bytes are in a kilobyte?",
            "labels": _three(["single"], ["single"], ["single"], hats=("creative", None, None)),
        },
    ]
    code, out, _ = run(capsys, "route", "--eval", str(labelled(tmp_path, *rows)), "--json")

    report = json.loads(out)
    assert code == 0
    assert (report["thoughts"], report["counted"], report["contested"]) == (4, 3, 1)
    assert report["agreement"] == 0.6667 and report["overRouted"] == 0.3333 and report["underRouted"] == 0.0
    assert report["kinds"]["lookup"] == {
        "thoughts": 2,
        "agreement": 1.0,
        "under": 0.0,
        "over": 0.0,
        "hatMissed": 0.0,
        "contested": 1,
    }
    assert [m["id"] for m in report["misses"]] == ["dear"]
    assert report["misses"][0]["accept"] == ["single"]
    # 12 pairs of labels; overlapping: agreed 3, dear 3, split 0, one-hat 3
    assert report["labellers"]["pairs"] == 12
    assert report["labellers"]["overlap"] == round(9 / 12, 4)


def test_a_row_with_both_formats_is_judged_by_its_labels_and_a_bad_label_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    row = {"id": "x", "lang": "en", "thought": "What is 2+2?", "accept": ["full"], "labels": _three(*[["single"]] * 3)}
    code, out, _ = run(capsys, "route", "--eval", str(labelled(tmp_path, row)), "--json")
    assert code == 0 and json.loads(out)["agreement"] == 1.0

    bad = {"id": "y", "lang": "en", "thought": "What is 2+2?", "labels": [{"accept": ["single", "triple"]}]}
    code, _, err = run(capsys, "route", "--eval", str(labelled(tmp_path, bad)))
    assert code != 0 and "labels[0]: field 'accept' must name adjacent strategies" in err


def test_eval_of_a_users_file_with_revisions_branches_and_confidence(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = [
        {
            "id": "rev",
            "thought": "Actually, choosing Redis for the job queue was wrong.",
            "revises": "Use Redis for the queue.",
            "thought_number": 3,
            "accept": ["double", "triple"],
            "hat": "critical",
        },
        {
            "id": "crash",
            "thought": "The cache probably explains the slowness.",
            "confidence": 0.3,
            "tool": "crash",
            "accept": ["single", "double"],
            "hat": "critical",
        },
    ]
    code, out, _ = run(capsys, "route", "--eval", str(labelled(tmp_path, *rows)), "--json")

    assert code == 0 and json.loads(out)["agreement"] == 1.0


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "labels.jsonl:2: not valid JSON"),
        ('["a list"]', "labels.jsonl:2: expected a JSON object, got list"),
        ('{"id": "x", "thought": "Hi"}', "labels.jsonl:2: field 'accept' must list 1 or 2 strategies, got None"),
        ('{"id": "x", "accept": ["single"]}', "labels.jsonl:2: field 'thought' is missing or empty"),
        (
            '{"id": "x", "thought": "Hi", "accept": ["single", "triple"]}',
            "labels.jsonl:2: field 'accept' must name adjacent strategies",
        ),
        ('{"id": "x", "thought": "Hi", "accept": ["quick"]}', "labels.jsonl:2: field 'accept' names 'quick'"),
        ('{"id": "x", "thought": "Hi", "accept": ["single"], "hat": "blue"}', "labels.jsonl:2: field 'hat' names"),
        (
            '{"id": "x", "thought": "Hi", "accept": ["single"], "confidence": 2}',
            "labels.jsonl:2: field 'confidence' must be a number from 0 to 1, got 2",
        ),
        (
            '{"id": "x", "thought": "Hi", "accept": ["single"], "thought_number": 0}',
            "labels.jsonl:2: field 'thought_number' must be a whole number from 1, got 0",
        ),
        ('{"id": "fact", "thought": "Hi", "accept": ["single"]}', "labels.jsonl:2: field 'id' repeats 'fact'"),
    ],
    ids=["json", "not-object", "no-accept", "no-thought", "far-apart", "unknown", "hat", "confidence", "number", "dup"],
)
def test_a_malformed_row_is_named_by_line_and_field_with_a_non_zero_exit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, line: str, expected: str
) -> None:
    code, out, err = run(capsys, "route", "--eval", str(labelled(tmp_path, ROWS[0], line)))

    assert code == 2 and out == ""
    assert err.startswith("thinking-hats: ") and expected in err


def test_a_missing_or_empty_file_is_reported(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "route", "--eval", str(tmp_path / "nowhere.jsonl"))
    assert code == 2 and "cannot read" in err and "nowhere.jsonl" in err

    (tmp_path / "empty.jsonl").write_text("\n\n", encoding="utf-8")
    code, _, err = run(capsys, "route", "--eval", str(tmp_path / "empty.jsonl"))
    assert code == 2 and "has no labelled thoughts" in err


def test_the_installed_command_routes_without_a_provider_call(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "thinking_hats", "route", "--json", "Should we shut down the European business?"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["strategy"] in ("double", "triple")
