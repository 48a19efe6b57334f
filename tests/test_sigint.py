"""Ctrl-C (SIGINT) on the stdio server: one press ends it at once, with no traceback, idle or mid-thought."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from benchmarks.stub_llm import StubLLM

from stdio_peer import Peer, finish, server_env, spawn
from thinking_hats.cli.main import main

PROMPT_EXIT = 5.0  # seconds: "at once" with room for a loaded 2-core machine


@contextmanager
def stdio_server(env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    process = spawn(env)
    try:
        yield process
    finally:
        finish(process)


def interrupt(process: subprocess.Popen[bytes]) -> tuple[int, float, str]:
    """One SIGINT, as one Ctrl-C sends: (exit code, seconds to exit, stderr)."""
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        code = process.wait(timeout=PROMPT_EXIT)
    except subprocess.TimeoutExpired:
        code = -1
    took = time.monotonic() - started
    assert process.stderr is not None
    if process.poll() is None:
        process.kill()
        process.wait(timeout=30)
    return code, took, process.stderr.read().decode(errors="replace")


def test_one_ctrl_c_ends_an_idle_stdio_server_at_once_without_a_traceback(tmp_path: Path) -> None:
    with stdio_server(server_env(tmp_path / "data")) as process:
        peer = Peer(process)
        peer.initialize()
        reply = peer.call(
            "sequentialthinking",
            {"thought": "Recorded.", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False},
        )
        assert not reply["result"].get("isError"), reply

        code, took, err = interrupt(process)  # stdin stays open: the server is idle, waiting for a line

    assert code == 130, f"still running {took:.1f} s after Ctrl-C" if code == -1 else err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


@pytest.mark.slow
async def test_one_ctrl_c_mid_thought_ends_the_server_at_once_and_stores_nothing_half_done(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with StubLLM(latency=120) as stub:  # the hat's model call is still running when Ctrl-C comes
        env = server_env(
            tmp_path / "data",
            LLM_PROVIDER="openai-compatible",
            LLM_BASE_URL=stub.base_url,
            LLM_MODEL="stub-model",
            THINKING_DEADLINE="60",
            THINKING_HAT_TIMEOUT="60",
        )
        with stdio_server(env) as process:
            peer = Peer(process)
            await asyncio.to_thread(peer.initialize)
            arguments = {
                "thought": "Is 7 prime?",
                "thoughtNumber": 1,
                "totalThoughts": 1,
                "nextThoughtNeeded": False,
                "strategy": "single",
                "sessionId": "interrupted",
            }
            call = {"name": "sequentialthinking", "arguments": arguments}
            peer.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call})
            deadline = time.monotonic() + 60  # the first thought waits for agno and the SDK to load
            while stub.stats()["in_flight"] == 0:
                assert time.monotonic() < deadline, "the model call never started"
                assert process.poll() is None, "the server died"
                await asyncio.sleep(0.05)

            code, took, err = await asyncio.to_thread(interrupt, process)

    assert code == 130, f"still running {took:.1f} s after Ctrl-C" if code == -1 else err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert (
        await asyncio.to_thread(main, ["sessions", "list"]) == 0
    )  # the same data directory: nothing was committed for that call
    assert "interrupted" not in capsys.readouterr().out
