"""Every command in the README is run: here, or by .ci/run on a fresh copy of the checkout. A command added to the
README that neither runs fails the first test until it is exercised."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import readme
from thinking_hats.config import Settings

ROOT = Path(__file__).resolve().parent.parent
TEXT = readme.README.read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
SCRIPT = Path(sys.executable).with_name("thinking-hats")  # what `.venv/bin/thinking-hats` is in this venv
QUESTION = '"Should we migrate to Postgres this quarter?"'

START = "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/thinking-hats"
TESTS = 'python3 -m venv .venv && .venv/bin/pip install -e ".[dev]" && .venv/bin/pytest'
RUN_HERE = {  # command -> what its output must hold
    ".venv/bin/thinking-hats doctor": "All checks passed.",
    f".venv/bin/thinking-hats route {QUESTION}": "strategy double: 3 model calls in 2 rounds",
    f".venv/bin/thinking-hats think {QUESTION}": "Thought 1/1 recorded",
}
BY_CI = {START, TESTS, "bash .ci/run"}
CLAUDE_CODE = re.compile(r"^claude mcp add thinking-hats (?P<env>(-e \S+ )*)-- (?P<command>\S+)$")


def run(command: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    argv[0] = str(SCRIPT) if argv[0] == ".venv/bin/thinking-hats" else argv[0]
    env = os.environ | {"THINKING_STORE": "memory"}
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120, env=env, check=False)


def test_every_command_in_the_readme_is_run_here_or_by_ci() -> None:
    found = readme.commands()
    unexercised = [c for c in found if c not in RUN_HERE and c not in BY_CI and not CLAUDE_CODE.match(c)]
    assert not unexercised, f"README commands no test or CI step runs: {unexercised}"
    assert set(RUN_HERE) | BY_CI <= set(found), "a command this test runs is no longer in the README: update it"


@pytest.mark.parametrize("command", sorted(RUN_HERE))
def test_the_readme_commands_from_the_terminal_work_without_a_provider(command: str) -> None:
    done = run(command)
    assert done.returncode == 0, done.stderr
    assert RUN_HERE[command] in done.stdout


def test_the_quick_start_server_answers_a_piped_client() -> None:
    # The installed script stands in for the venv the command makes; .ci/run runs the whole command on a fresh copy.
    assert readme.start_command() == START
    server = START.rsplit("&&", 1)[1].strip()
    requests = "\n".join(json.dumps(r) for r in readme.REQUESTS) + "\n"
    done = run(server, stdin=requests)
    assert done.returncode == 0, done.stderr
    assert readme.check(done.stdout) == []


def test_ci_runs_the_quick_start_on_a_fresh_copy_and_the_readme_test_command() -> None:
    assert "python tests/readme.py start" in CI and "python tests/readme.py check" in CI
    # The test command's three steps: a fresh venv, the project with its dev extra, pytest.
    assert '-m venv "$VENV"' in CI and '-m pip install --quiet -e ".[dev]"' in CI
    assert re.search(r"^pytest$", CI, flags=re.M)


def test_the_client_snippets_launch_the_server_with_real_settings() -> None:
    settings = {name.upper() for name in Settings.model_fields}
    snippets = [json.loads(block) for block in readme.blocks(TEXT, "json")]
    assert len(snippets) == 3  # Claude Desktop, Cursor, VS Code
    for snippet in snippets:
        (server,) = (snippet.get("mcpServers") or snippet["servers"]).values()
        assert server["command"].endswith("/.venv/bin/thinking-hats")
        assert set(server["env"]) <= settings
    (claude,) = [c for c in readme.commands() if c.startswith("claude ")]
    match = CLAUDE_CODE.match(claude)
    assert match is not None and match["command"].endswith("/.venv/bin/thinking-hats")
    assert {pair.split("=")[0] for pair in match["env"].split("-e ") if pair.strip()} <= settings


def test_the_readme_is_short_and_its_links_into_the_docs_resolve() -> None:
    assert len(TEXT.splitlines()) <= 350
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", TEXT)
    assert links and all((ROOT / link).is_file() for link in links), [x for x in links if not (ROOT / x).is_file()]
