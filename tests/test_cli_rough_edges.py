"""The command line as a newcomer meets it: help on every option that needs it, one clear line per mistake, counts
in the right number, and a stdio server that says what it is waiting for when run by hand."""

from __future__ import annotations

import logging
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stdio_peer import server_env
from test_cli import record_sessions, run
from thinking_hats.cli.main import QUICK_START_LINE, main
from thinking_hats.config import Settings
from thinking_hats.ops.limits import Limits
from thinking_hats.serving.gate import Gate, Principals


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    assert done.value.code == 2
    return capsys.readouterr().err


def help_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps to the terminal's width


def test_serve_transport_think_strategy_and_doctor_explain_themselves_in_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert "stdio: one MCP client that launches this command" in help_of(capsys, "serve")
    assert "http: streamable HTTP" in help_of(capsys, "serve")
    assert "none only records the thought (no model call)" in help_of(capsys, "think")
    doctor = help_of(capsys, "doctor")
    assert "store health" in doctor and "Exit status 0 when every check passes, 1 when one fails" in doctor


def test_a_bad_workers_count_names_the_option_once(capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(capsys, "serve", "--transport", "http", "--workers", "0")
    assert "argument --workers: takes a whole number from 1 to 64 (got '0')" in err
    assert err.count("--workers") == 2  # the usage line and the message: never "--workers: --workers takes"


def test_route_misses_without_eval_is_an_error_not_ignored(capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(capsys, "route", "--misses", "Should we split the monolith?")
    assert "route --misses lists the disagreements with a labelled file: add --eval FILE" in err


def test_exporting_into_a_missing_directory_says_so_without_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    record_sessions()
    target = tmp_path / "missing" / "plan.json"
    code, out, err = run(capsys, "sessions", "export", "plan", "-o", str(target))
    assert code == 2 and out == ""
    assert err.startswith(f"thinking-hats: cannot write {target}: No such file or directory.")
    assert "a directory that exists" in err and "Traceback" not in err
    assert not target.parent.exists()
    # Nothing is lost: the same session exports once the directory is there.
    target.parent.mkdir()
    assert run(capsys, "sessions", "export", "plan", "-o", str(target))[0] == 0 and target.stat().st_size > 0


def test_reloads_count_one_principal_in_the_singular(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("alice alice-token-0a1b2c3d4e5f\n", encoding="utf-8")
    limits = tmp_path / "limits"
    limits.write_text("alice tokens_per_day=1000\n", encoding="utf-8")
    settings = Settings(thinking_http_tokens_file=tokens, thinking_principal_limits_file=limits)  # type: ignore[arg-type]
    gate = Gate(None, None, Principals.from_settings(settings), settings, None, b"secret")
    table = Limits.from_settings(settings)
    with caplog.at_level(logging.WARNING, logger="thinking_hats"):
        gate.reload()
        table.reload()
    messages = [r.getMessage() for r in caplog.records]
    assert "tokens reloaded: 1 principal" in messages
    assert "limits reloaded: 1 principal with their own limits" in messages


def quick_start(stdin: int, tmp_path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "thinking_hats"],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(tmp_path / "data"),
    )


def test_the_quick_start_server_says_what_it_waits_for_when_run_in_a_terminal(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    process = quick_start(terminal, tmp_path)
    os.close(terminal)
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        seen = b""
        while b"\n" not in seen and time.monotonic() < deadline:  # the line, as soon as it is written
            if select.select([process.stderr], [], [], 0.5)[0]:
                chunk = os.read(process.stderr.fileno(), 4096)
                if not chunk:
                    break
                seen += chunk
        assert seen.decode() == QUICK_START_LINE + "\n"
        assert "waiting for an MCP client" in QUICK_START_LINE and "Ctrl-C stops it" in QUICK_START_LINE
    finally:
        os.close(controller)  # the terminal hangs up: the server ends
        process.kill()
        process.communicate(timeout=30)


def test_the_quick_start_server_is_silent_on_stderr_when_a_client_pipes_to_it(tmp_path: Path) -> None:
    process = quick_start(subprocess.PIPE, tmp_path)
    _, err = process.communicate(b"", timeout=60)  # the client closes at once: the server ends
    assert process.returncode == 0 and err == b""


def test_think_with_a_provider_and_no_key_exits_non_zero_like_doctor(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_PROVIDER", "openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("LLM_API_KEY", raising=False)

    code, out, err = run(capsys, "think", "Should we ship on Friday?")
    assert code == 1
    assert "model augmentation is off" in err and "OPENAI_API_KEY" in err and "Traceback" not in err
    assert "Thought 1/1 recorded" in out  # recorded all the same: nothing typed is lost
    assert run(capsys, "doctor")[0] == 1
