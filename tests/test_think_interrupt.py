"""Ctrl-C in `thinking-hats think` while model calls are in flight: the command ends with status 130 and no
traceback, and the calls already paid for are in `thinking-hats usage` afterwards."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from benchmarks.stub_llm import StubLLM

from stdio_peer import server_env
from thinking_hats.analysis import ThoughtContext
from thinking_hats.cli.main import main
from thinking_hats.routing.router import route

QUESTION = "Should we rewrite the billing service in Rust, given the team's skills, the risk and the cost?"
# The two hats the learned router picks for the question under --strategy double; the first is the one to answer.
HATS = route(ThoughtContext(QUESTION, 1, 1), override="double").hats


def read_until(process: subprocess.Popen[bytes], wanted: bytes, deadline: float) -> bytes:
    """stderr until a line holds `wanted` (or the deadline passes, or the process ends)."""
    assert process.stderr is not None
    seen = b""
    while wanted not in seen and time.monotonic() < deadline:
        if select.select([process.stderr], [], [], 0.2)[0]:
            chunk = os.read(process.stderr.fileno(), 65536)
            if not chunk:
                break
            seen += chunk
    return seen


@pytest.mark.parametrize("answered", [0, 1], ids=["no-hat-answered-yet", "one-hat-answered"])
def test_ctrl_c_while_hats_are_thinking_exits_130_without_a_traceback_and_counts_the_calls_spent(
    answered: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    # The hats take far longer than the test (but for one, when it is to answer): Ctrl-C lands with calls in flight.
    with StubLLM.in_thread(latency=300, role_latency={HATS[0]: 0.05} if answered else {}) as stub:
        env = server_env(data, LLM_PROVIDER="openai", OPENAI_API_KEY="sk-fake-openai", LLM_BASE_URL=stub.base_url)
        process = subprocess.Popen(
            [sys.executable, "-m", "thinking_hats", "think", QUESTION, "--strategy", "double"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        try:
            # Both hats' requests have reached the model (and, for one-hat-answered, the first answer the command).
            deadline = time.monotonic() + 120
            err = read_until(process, f"{HATS[0]} hat done".encode() if answered else b"2 hats", deadline)
            while len(stub.stats()["by_role"]) < 2 and time.monotonic() < deadline:
                err += read_until(process, b"\n", time.monotonic() + 0.1)
            assert sorted(stub.stats()["by_role"]) == sorted(HATS), err.decode(errors="replace")
            assert stub.stats()["in_flight"] == 2 - answered
            process.send_signal(signal.SIGINT)
            out, rest = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate(timeout=30)
        sent = stub.stats()["by_role"]

    err += rest
    text = err.decode(errors="replace")
    assert process.returncode == 130, text
    assert "Traceback" not in text and "closed database" not in text and "StoreError" not in text, text
    assert out == b""  # no answer: the thought was not finished

    monkeypatch.setenv("THINKING_DATA_DIR", str(data))
    assert main(["usage", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 1 and rows[0]["principal"] == "local"
    assert sent == dict.fromkeys(HATS, 1)
    assert rows[0]["calls"] == 2 and rows[0]["thoughts"] == 0  # both calls were sent: both are counted
    if answered:
        assert rows[0]["input_tokens"] > 0  # the answered hat's tokens (the provider's count of the other never came)
