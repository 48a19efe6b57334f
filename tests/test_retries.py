"""A call whose reply never arrived leaves nothing behind, and its retry is stored exactly once.

Here: the server killed -9 in the middle of the model call (a real stdio server against the stub model server),
and the disk filling up under the store (a real 1 MiB tmpfs). Cancellation and failed model calls are covered
in process, with the wire-level fake (test_exactly_once.py).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from benchmarks.stub_llm import StubLLM
from mcp import Client

from stdio_peer import Peer, finish, server_env, spawn
from thinking_hats.config import Settings
from thinking_hats.server import build_server

pytestmark = pytest.mark.slow


def thought(number: int, text: str | None = None, session: str = "retry") -> dict[str, Any]:
    return {
        "thought": text or f"Step {number}: weigh the cache against the customer complaint.",
        "thoughtNumber": number,
        "totalThoughts": 3,
        "nextThoughtNeeded": True,
        "sessionId": session,
        "strategy": "single",
    }


def stored_numbers(database: Path, session: str = "retry") -> list[int]:
    with sqlite3.connect(database) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = raw.execute("SELECT number FROM entries WHERE session_id = ? ORDER BY seq", (session,)).fetchall()
    return [row[0] for row in rows]


def wait_until(condition: Any, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


@pytest.fixture
def stub() -> Iterator[StubLLM]:
    with StubLLM.in_thread(latency=0.01) as running:
        yield running


def test_a_thought_cut_short_by_kill_9_is_not_stored_and_its_retry_is_stored_once(
    stub: StubLLM, tmp_path: Path
) -> None:
    env = server_env(
        tmp_path / "data",
        LLM_PROVIDER="openai-compatible",
        LLM_BASE_URL=stub.base_url,
        LLM_MODEL="stub-model",
        THINKING_DEADLINE="30",
        THINKING_HAT_TIMEOUT="25",
    )
    database = Settings(thinking_data_dir=tmp_path / "data").database_path()
    assert database is not None

    process = spawn(env)
    server = Peer(process)
    server.initialize()
    assert not server.call("sequentialthinking", thought(1))["result"]["isError"]
    stub.latency = 60.0  # thought 2 is now in the middle of its model call...
    server.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                 "params": {"name": "sequentialthinking", "arguments": thought(2)}})  # fmt: skip
    wait_until(lambda: stub.stats()["in_flight"] >= 1)
    os.kill(process.pid, signal.SIGKILL)  # ...when the server dies
    finish(process)
    assert stored_numbers(database) == [1], "a thought whose reply was never sent is not in the store"

    stub.latency = 0.01
    process = spawn(env)
    try:
        again = Peer(process)
        again.initialize()
        retried = again.call("sequentialthinking", thought(2))["result"]
        assert not retried["isError"] and retried["structuredContent"]["thoughtHistoryLength"] == 2
        replayed = again.call("sequentialthinking", thought(2))["result"]  # the client retries once more
        assert replayed["structuredContent"]["replayed"] is True
        assert replayed["structuredContent"]["usage"]["llmCalls"] == 0
    finally:
        finish(process)
    assert stored_numbers(database) == [1, 2]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MiB filesystem, so the store meets ENOSPC as it would on a full disk."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        message = f"cannot mount a tmpfs for the full-disk test (needs root): {done.stderr.decode().strip()}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(directory: Path) -> Path:
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:  # ENOSPC: the disk is full
        pass
    finally:
        os.close(fd)
    return filler


async def test_a_full_disk_records_nothing_says_so_and_the_retry_after_freeing_space_is_stored_once(
    small_disk: Path,
) -> None:
    settings = Settings(thinking_data_dir=small_disk / "data")
    database = settings.database_path()
    assert database is not None
    async with Client(build_server(settings)) as client:
        assert not (await client.call_tool("sequentialthinking", thought(1))).is_error
        filler = fill(small_disk)
        long = "x" * 19_000  # more than the WAL can take on a full disk
        full = await client.call_tool("sequentialthinking", thought(2, long))
        text = "".join(getattr(block, "text", "") for block in full.content)
        assert full.is_error
        assert "full" in text and "nothing was recorded" in text and "THINKING_DATA_DIR" in text, text
        assert "Error executing tool" not in text

        filler.unlink()
        retried = await client.call_tool("sequentialthinking", thought(2, long))
        assert not retried.is_error
        assert retried.structured_content is not None
        assert retried.structured_content["thoughtHistoryLength"] == 2
    assert stored_numbers(database) == [1, 2]
