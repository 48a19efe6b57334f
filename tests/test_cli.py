"""The `thinking-hats` command: version, help, sessions list/show/export, and doctor."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from thinking_hats import __version__
from thinking_hats.cli.main import main
from thinking_hats.config import Settings
from thinking_hats.server import build_server

SECRET = "tok-SECRET-123"


def record_sessions() -> None:
    """Two sessions through the real server: a thinking chain 'plan' and a crash session 'check'."""

    async def record() -> None:
        async with Client(build_server(Settings())) as client:
            for number, text in ((1, "Restate the problem."), (2, "Choose the index.")):
                arguments = {"thought": text, "thoughtNumber": number, "totalThoughts": 2, "sessionId": "plan"}
                result = await client.call_tool("sequentialthinking", arguments | {"nextThoughtNeeded": number < 2})
                assert not result.is_error
            step: dict[str, Any] = {
                "step_number": 1,
                "estimated_total": 1,
                "purpose": "validation",
                "context": "after the change",
                "thought": "Let me run the tests.",
                "outcome": "All green.",
                "next_action": "ship it",
                "rationale": "To be sure.",
                "session_id": "check",
            }
            assert not (await client.call_tool("crash", step)).is_error

    asyncio.run(record())


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"thinking-hats {__version__}"


def test_help_lists_the_commands_with_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0
    for command in ("serve", "think", "doctor", "sessions"):
        assert command in out
    assert "thinking-hats serve --transport http" in out


def test_python_dash_m_runs_the_same_command(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "thinking_hats", "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == f"thinking-hats {__version__}"


def test_sessions_list_says_when_there_are_none(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "sessions", "list")
    assert code == 0 and out.strip() == "no sessions yet"


def test_sessions_list_shows_each_recorded_session(capsys: pytest.CaptureFixture[str]) -> None:
    record_sessions()
    code, out, _ = run(capsys, "sessions", "list")

    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 3
    header, check, plan = lines  # newest first
    assert header.split() == ["SESSION", "TOOL", "ENTRIES", "UPDATED", "PRINCIPAL"]
    assert check.split()[:3] == ["check", "crash", "1"]
    assert plan.split()[:3] == ["plan", "sequentialthinking", "2"]


def test_sessions_show_prints_the_markdown_report(capsys: pytest.CaptureFixture[str]) -> None:
    record_sessions()
    code, out, _ = run(capsys, "sessions", "show", "plan")

    assert code == 0
    assert out.startswith("# Session `plan` (sequentialthinking)")
    assert "## Thought 1/2" in out and "Choose the index." in out


def test_sessions_export_as_json_has_every_entry(capsys: pytest.CaptureFixture[str]) -> None:
    record_sessions()
    code, out, _ = run(capsys, "sessions", "export", "plan", "--format", "json")

    exported = json.loads(out)
    assert code == 0
    assert exported["id"] == "plan"
    assert [e["input"]["thought"] for e in exported["entries"]] == ["Restate the problem.", "Choose the index."]
    assert exported["entries"][1]["reply"]["nextThoughtNeeded"] is False


def test_sessions_export_as_markdown_matches_show(capsys: pytest.CaptureFixture[str]) -> None:
    record_sessions()
    _, shown, _ = run(capsys, "sessions", "show", "check")
    code, exported, _ = run(capsys, "sessions", "export", "check", "--format", "md")
    assert code == 0 and exported == shown
    assert "## Step 1/1: validation" in exported


def test_sessions_export_writes_a_file_when_asked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    record_sessions()
    target = tmp_path / "plan.json"
    code, out, err = run(capsys, "sessions", "export", "plan", "--format", "json", "--output", str(target))

    assert code == 0 and out == ""
    assert str(target) in err
    assert json.loads(target.read_text(encoding="utf-8"))["id"] == "plan"


def test_an_unknown_session_exits_non_zero_with_how_to_find_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "sessions", "show", "nope")
    assert code == 2 and out == ""
    assert "no session 'nope'" in err and "sessions list" in err and "Traceback" not in err


def test_doctor_without_a_provider_shows_the_configuration_and_the_store_and_passes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    record_sessions()
    code, out, _ = run(capsys, "doctor")

    assert code == 0
    assert f"THINKING_DATA_DIR = {tmp_path / 'data'}" in out
    assert "THINKING_STORE = sqlite" in out
    assert "Store:" in out and "integrity: ok" in out and "sessions: 2" in out
    assert "Prompts:" in out
    assert "record-only" in out
    assert "All checks passed." in out


def test_doctor_masks_every_secret(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKING_HTTP_TOKEN", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-SECRET-openai-456")
    code, out, err = run(capsys, "doctor")

    assert code == 0
    assert "THINKING_HTTP_TOKEN = set (hidden)" in out
    assert "OPENAI_API_KEY = set (hidden)" in out
    for secret in (SECRET, "sk-SECRET-openai-456", "SECRET"):
        assert secret not in out and secret not in err


def test_doctor_reports_an_unusable_store_and_fails(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the data directory should be", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("THINKING_DATA_DIR", str(blocker))
        code, out, _ = run(capsys, "doctor")

    assert code == 1
    assert "FAILED" in out and "THINKING_DATA_DIR" in out
    assert "Some checks failed" in out


def test_an_invalid_setting_exits_with_the_variable_to_fix(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THINKING_STORE", "postgres")
    code, out, err = run(capsys, "doctor")
    assert code == 2 and out == ""
    assert "invalid configuration" in err and "THINKING_STORE" in err and "Traceback" not in err
