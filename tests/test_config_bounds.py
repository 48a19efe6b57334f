"""Every numeric setting has a documented range, enforced at start-up with a message naming the variable."""

from __future__ import annotations

import asyncio
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import annotated_types
import pytest
from mcp import Client

from stdio_peer import server_env
from thinking_hats.cli.main import main
from thinking_hats.config import Settings
from thinking_hats.server import build_server

ROOT = Path(__file__).resolve().parents[1]
NUMERIC = sorted(name for name, f in Settings.model_fields.items() if f.annotation in (int, float))
RANGE = re.compile(r"\((-?\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)\)\.$")
HOSTILE = {
    "huge": "99999999999999999999",
    "negative": "-1",
    "zero": "0",
    "blank": "",
    "spaces": "   ",
    "inf": "inf",
    "minus-inf": "-inf",
    "nan": "nan",
    "tiny": "1e-300",
    "enormous": "1e308",
}


def documented_range(name: str) -> tuple[float, float]:
    description = Settings.model_fields[name].description or ""
    found = RANGE.search(description)
    assert found, f"{name.upper()}: the description must end with its range, e.g. '(1-100000).': {description!r}"
    return float(found[1]), float(found[2])


def enforced_range(name: str) -> tuple[float, float]:
    low, high = -math.inf, math.inf
    for rule in Settings.model_fields[name].metadata:
        if isinstance(rule, annotated_types.Ge):
            low = float(rule.ge)  # type: ignore[arg-type]
        elif isinstance(rule, annotated_types.Le):
            high = float(rule.le)  # type: ignore[arg-type]
    return low, high


def at(bound: int) -> dict[str, Any]:
    """Every numeric setting at its lowest (bound 0) or highest (bound 1) allowed value."""
    values: dict[str, Any] = {}
    for name in NUMERIC:
        value = documented_range(name)[bound]
        values[name] = int(value) if Settings.model_fields[name].annotation is int else value
    return values


@pytest.mark.parametrize("name", NUMERIC)
def test_each_numeric_setting_documents_the_range_it_enforces(name: str) -> None:
    assert documented_range(name) == enforced_range(name)
    description = Settings.model_fields[name].description
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    assert f"# {description}\n{name.upper()}=" in example, ".env.example shows the range"
    reference = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")  # generated from Settings
    row = next(line for line in reference.splitlines() if line.startswith(f"| `{name.upper()}` |"))
    assert row.endswith(f" | `{Settings.model_fields[name].default}` | {description} |"), "the reference shows it"


@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("name", NUMERIC)
def test_a_hostile_number_is_refused_by_name_or_taken_as_a_sane_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, kind: str
) -> None:
    monkeypatch.setenv(name.upper(), HOSTILE[kind])
    code = main(["sessions", "list"])
    out, err = capsys.readouterr()

    assert "Traceback" not in out + err
    if code == 0:
        value = getattr(Settings(), name)
        low, high = documented_range(name)
        assert math.isfinite(value) and low <= value <= high, f"{name.upper()}={HOSTILE[kind]!r} became {value!r}"
        if not HOSTILE[kind].strip():
            assert value == Settings.model_fields[name].default, "a blank variable means its default"
    else:
        assert code == 2 and out == ""
        assert f"{name.upper()}:" in err and "(allowed: " in err, err
        assert kind not in ("blank", "spaces"), "a blank variable means its default, as a blank optional one does"


def test_a_refusal_lists_every_bad_variable_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKING_MAX_THOUGHTS", "99999999999999999999")
    monkeypatch.setenv("THINKING_DEADLINE", "inf")
    monkeypatch.setenv("THINKING_HAT_TIMEOUT", "1e-300")
    monkeypatch.setenv("THINKING_RETENTION_DAYS", "1e-300")
    with pytest.raises(Exception) as raised:
        Settings()
    text = str(raised.value)
    for name in ("thinking_max_thoughts", "thinking_deadline", "thinking_hat_timeout", "thinking_retention_days"):
        assert name in text


def test_a_blank_variable_of_any_kind_means_its_default(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in Settings.model_fields:
        if name != "thinking_data_dir":  # the test's own data directory stays
            monkeypatch.setenv(name.upper(), "")
    settings = Settings()
    for name, field in Settings.model_fields.items():
        if name != "thinking_data_dir":
            assert getattr(settings, name) == field.default, name.upper()


@pytest.mark.parametrize("command", [[], ["doctor"]], ids=["stdio-server", "doctor"])
def test_the_real_command_refuses_bad_numbers_by_name_without_a_traceback(tmp_path: Path, command: list[str]) -> None:
    env = server_env(
        tmp_path / "data",
        THINKING_MAX_THOUGHTS="99999999999999999999",
        MAX_HISTORY_SIZE="99999999999999999999",
        THINKING_DEADLINE="inf",
        THINKING_RETENTION_DAYS="1e-300",
    )
    done = subprocess.run(
        [sys.executable, "-m", "thinking_hats", *command],
        input=b"",
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    err = done.stderr.decode()
    assert done.returncode == 2 and done.stdout == b""
    assert "Traceback" not in err
    for name in ("THINKING_MAX_THOUGHTS", "MAX_HISTORY_SIZE", "THINKING_DEADLINE", "THINKING_RETENTION_DAYS"):
        assert f"{name}:" in err


@pytest.mark.parametrize("bound", [0, 1], ids=["lowest", "highest"])
def test_the_tools_work_with_every_number_at_either_end_of_its_range(bound: int) -> None:
    settings = Settings(**at(bound))

    async def use() -> None:
        async with Client(build_server(settings)) as client:
            for number in (1, 2):
                thought = {"thought": f"Step {number}.", "thoughtNumber": number, "totalThoughts": 2}
                result = await client.call_tool(
                    "sequentialthinking", thought | {"nextThoughtNeeded": number < 2, "sessionId": "ends"}
                )
                assert not result.is_error, result
            step = {
                "step_number": 1,
                "estimated_total": 1,
                "purpose": "analysis",
                "context": "bounds",
                "thought": "Let me check.",
                "outcome": "fine",
                "next_action": "stop",
                "rationale": "To be sure.",
                "session_id": "ends-crash",
            }
            assert not (await client.call_tool("crash", step)).is_error
            minimal = {"thought": "One.", "step": 1, "total_steps": 1, "next_action": "CONTINUE"}
            assert not (await client.call_tool("sequential_thinking", minimal)).is_error

    asyncio.run(use())


@pytest.mark.parametrize(
    ("argv", "option", "allowed"),
    [
        (["serve", "--port", "70000"], "--port", "0 to 65535"),
        (["serve", "--port", "-1"], "--port", "0 to 65535"),
        (["serve", "--transport", "http", "--port", "99999999999999999999"], "--port", "0 to 65535"),
        (["sessions", "list", "--limit", "99999999999999999999"], "--limit", "1 to 10000000"),
        (["sessions", "list", "--limit", "0"], "--limit", "1 to 10000000"),
        (["sessions", "list", "--limit", "many"], "--limit", "1 to 10000000"),
    ],
)
def test_an_out_of_range_option_is_refused_with_its_range(
    capsys: pytest.CaptureFixture[str], argv: list[str], option: str, allowed: str
) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2
    assert f"argument {option}: takes a whole number from {allowed}" in err and "Traceback" not in err


def test_the_largest_limit_lists_sessions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", "list", "--limit", "10000000"]) == 0
    assert "no sessions yet" in capsys.readouterr().out
