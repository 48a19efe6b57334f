"""`thinking-hats think`: one thought from the terminal, progress per hat on stderr, the answer on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fakes import FakeLLM
from thinking_hats.cli.main import main

QUESTION = "Should we rewrite the billing service in Rust, given the team's skills, the risk and the cost?"


def test_think_prints_the_synthesis_and_shows_each_hat_finishing(
    configured: FakeLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["think", QUESTION, "--strategy", "double"])

    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("[synthesis]")
    assert "[1/3]" in err and "[2/3]" in err and "[3/3] synthesis done" in err
    assert configured.roles()[-1] == "synthesis"


def test_think_in_a_named_session_continues_its_chain(configured: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["think", "First: list the options.", "--strategy", "single", "--session", "plan"]) == 0
    capsys.readouterr()
    assert main(["think", "Second: weigh them.", "--strategy", "single", "--session", "plan", "--json"]) == 0

    second = json.loads(capsys.readouterr().out)
    assert second["thoughtNumber"] == 2 and second["sessionId"] == "plan"
    assert main(["sessions", "export", "plan", "--format", "json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert [e["number"] for e in exported["entries"]] == [1, 2]


def test_think_exits_non_zero_with_the_fix_when_the_provider_refuses(
    configured: FakeLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.enqueue("*", 401)
    code = main(["think", "Is 7 prime?", "--strategy", "single"])

    out, _ = capsys.readouterr()
    assert code == 1
    assert "401 from openai: check OPENAI_API_KEY" in out


def test_the_same_question_asked_twice_is_answered_twice_in_two_sessions(
    configured: FakeLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["think", "Is 7 prime?", "--strategy", "single", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["think", "Is 7 prime?", "--strategy", "single", "--json"]) == 0
    second = json.loads(capsys.readouterr().out)

    assert second["sessionId"] != first["sessionId"]
    assert second["replayed"] is False and second["usage"]["llmCalls"] == 1
    assert len(configured.history) == 2  # asked the model again, not a stale stored reply


def test_off_a_terminal_every_progress_line_ends_in_a_newline_and_rich_is_not_loaded(
    configured: FakeLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    sys.modules.pop("rich.live", None)
    code = main(["think", QUESTION, "--strategy", "double"])

    _, err = capsys.readouterr()
    assert code == 0, err
    assert err.endswith("\n") and "\n[3/3] synthesis done" in err
    assert err.splitlines()[0].startswith("double (score")
    assert "rich.live" not in sys.modules


def test_think_builds_only_the_agents_of_the_roles_it_calls(
    configured: FakeLLM, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from thinking_hats.hats.orchestrator import Orchestrator

    built: list[str] = []
    original = Orchestrator._agent

    def counted(self: Orchestrator, role: Any) -> Any:
        if role not in self._agents:
            built.append(role)
        return original(self, role)

    monkeypatch.setattr(Orchestrator, "_agent", counted)
    assert main(["think", QUESTION, "--strategy", "double"]) == 0, capsys.readouterr().err

    assert sorted(built) == sorted(configured.roles())  # two hats and the synthesis: three agents, not six
    assert len(built) == 3


def test_the_command_never_loads_httpx_own_command_line_when_agno_imports_httpx(tmp_path: Path) -> None:
    # httpx imports its CLI (click, pygments, rich's progress) whenever they are installed; uvicorn brings click.
    script = (
        "import sys\n"
        "from thinking_hats.cli.main import main\n"
        "assert main(['route', 'Is 7 prime?']) == 0\n"
        "import agno.models.openai.chat\n"
        "print(sorted(m for m in ('click', 'pygments', 'httpx') if m in sys.modules))\n"
    )
    env = {"THINKING_DATA_DIR": str(tmp_path), "PATH": os.environ.get("PATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "['httpx']"
