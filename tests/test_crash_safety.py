"""Crash safety: kill -9 in the middle of a burst loses no acknowledged thought; bad data directories are refused.

Each test runs the real server as a subprocess over stdio and speaks raw JSON-RPC to it (see stdio_peer).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import threading
from pathlib import Path

import pytest

from stdio_peer import Peer, peer, server_env, spawn
from thinking_hats.config import Settings

BURST = 400
KILL_AFTER = 60


def thought(number: int, total: int = BURST) -> dict[str, object]:
    return {
        "thought": f"Thought {number} of the burst.",
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": True,
        "sessionId": "burst",
    }


@pytest.mark.slow
def test_a_kill_9_mid_burst_loses_no_thought_whose_reply_was_received(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data")
    process = spawn(env)
    p = Peer(process)
    p.initialize()

    def write_burst() -> None:
        try:
            for n in range(1, BURST + 1):
                p.send({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                        "params": {"name": "sequentialthinking", "arguments": thought(n)}})  # fmt: skip
        except (BrokenPipeError, OSError):
            pass  # the server was killed while we were still writing: expected

    writer = threading.Thread(target=write_burst, daemon=True)
    writer.start()
    acknowledged: list[int] = []
    while (reply := p.receive()) is not None:
        assert "result" in reply and not reply["result"].get("isError"), reply
        acknowledged.append(reply["id"])
        if len(acknowledged) == KILL_AFTER:
            os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    writer.join(timeout=30)
    for stream in (process.stdin, process.stdout, process.stderr):
        with contextlib.suppress(BrokenPipeError):  # stdin still holds the burst the dead server never read
            assert stream is not None
            stream.close()

    assert process.returncode == -signal.SIGKILL
    assert KILL_AFTER <= len(acknowledged) < BURST  # it really died mid-burst

    database = Settings(thinking_data_dir=tmp_path / "data").database_path()
    assert database is not None
    with sqlite3.connect(database) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        stored = {row[0] for row in raw.execute("SELECT number FROM entries WHERE session_id = 'burst'")}
    assert set(acknowledged) <= stored  # every acknowledged thought survived

    # And the server restarts on the same store and carries on with the session.
    with peer(env) as again:
        reply = again.call("sequentialthinking", thought(max(stored) + 1))
    assert not reply["result"]["isError"]
    assert reply["result"]["structuredContent"]["thoughtHistoryLength"] == len(stored) + 1


def test_a_malformed_frame_and_absurd_nesting_do_not_take_the_server_down(tmp_path: Path) -> None:
    with peer(server_env(tmp_path / "data")) as p:
        p.send(b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {')  # truncated JSON
        deep = "[" * 50_000 + "]" * 50_000
        p.send(
            f'{{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {{"name": "crash", '
            f'"arguments": {{"step_number": 1, "external_context": {deep}}}}}}}'.encode()
        )
        reply = p.call("sequentialthinking", {**thought(1, 1), "sessionId": "after"})
        assert p.process.poll() is None, "the server died"
    assert not reply["result"]["isError"]


def test_a_corrupted_database_is_refused_at_start_up_with_the_fix(tmp_path: Path) -> None:
    data = tmp_path / "data"
    database = Settings(thinking_data_dir=data).database_path()
    assert database is not None
    database.parent.mkdir(parents=True)
    database.write_bytes(b"this is not a database " * 200)

    process = spawn(server_env(data))
    _, err = process.communicate(timeout=60)

    assert process.returncode != 0
    message = err.decode()
    assert str(database) in message
    assert "THINKING_DATA_DIR" in message or "THINKING_STORE=memory" in message


def test_an_unusable_data_directory_is_refused_at_start_up_with_the_fix(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")

    process = spawn(server_env(blocker / "data"))
    _, err = process.communicate(timeout=60)

    assert process.returncode != 0
    assert "THINKING_DATA_DIR" in err.decode()
    assert "Traceback" not in err.decode()


def test_the_store_survives_a_restart_with_wal_files_left_behind(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data")
    with peer(env) as p:
        for n in range(1, 6):
            p.call("sequentialthinking", {**thought(n, 5), "sessionId": "wal"})
        os.kill(p.process.pid, signal.SIGKILL)
    with peer(env) as p:
        reply = p.request("resources/read", {"uri": "thinking://sessions/wal"})
    session = json.loads(reply["result"]["contents"][0]["text"])
    assert [e["number"] for e in session["entries"]] == [1, 2, 3, 4, 5]
