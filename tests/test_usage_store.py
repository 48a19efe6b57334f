"""`thinking-hats usage` says which store it read, and reads the service's store when given the service's env file:
run on the server from an operator's shell it would otherwise read that user's own SQLite file, silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_cli import run

PASSWORD = "s3cret-pass-0a1b2c"


def test_usage_names_the_store_it_read_on_stderr_and_keeps_stdout_for_the_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THINKING_DATA_DIR", str(tmp_path / "mine"))
    code, out, err = run(capsys, "usage")
    assert code == 0 and out == "no usage recorded\n"
    assert err == f"usage recorded in {tmp_path / 'mine' / 'sessions.sqlite3'}\n"


def test_usage_with_the_services_env_file_reads_the_services_store_over_this_shells(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THINKING_DATA_DIR", str(tmp_path / "root-local"))  # the operator's own store
    env = tmp_path / "env"
    env.write_text(f"THINKING_DATA_DIR={tmp_path / 'service'}\n", encoding="utf-8")

    code, out, err = run(capsys, "usage", "--env-file", str(env), "--json")
    assert code == 0 and out == "[]\n"
    assert err == f"usage recorded in {tmp_path / 'service' / 'sessions.sqlite3'}\n"


def test_usage_shows_a_postgresql_store_with_its_password_masked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    env = tmp_path / "env"
    env.write_text(f"THINKING_STORE=postgresql://thinking:{PASSWORD}@127.0.0.1:1/thinking\n", encoding="utf-8")

    code, out, err = run(capsys, "usage", "--env-file", str(env))
    assert code == 2  # nothing listens on port 1
    assert err.startswith("usage recorded in postgresql://thinking:***@127.0.0.1:1/thinking\n")
    assert PASSWORD not in out + err and "Traceback" not in err


def test_an_env_file_that_cannot_be_read_is_one_line_with_the_fix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "usage", "--env-file", str(tmp_path / "missing"))
    assert code == 2 and out == ""
    assert err.startswith(f"thinking-hats: --env-file {tmp_path / 'missing'}: No such file or directory.")
    assert "/etc/thinking-hats/env" in err
