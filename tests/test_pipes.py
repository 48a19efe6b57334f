"""stdin and stdout as asyncio pipes under the SDK's stdio transport (src/thinking_hats/pipes.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from stdio_peer import PROTOCOL, peer, server_env

# Echoes each line upper-cased through the pipes; what it prints meanwhile must reach stderr, not the wire, and
# stdout is its own again afterwards.
ECHO = textwrap.dedent(
    """
    import asyncio, sys
    from thinking_hats.serving.pipes import stdio_pipes

    async def main():
        async with stdio_pipes() as pipes:
            if pipes is None:
                print("threaded transport", flush=True)
                return
            lines, out = pipes
            print("a stray print while serving", flush=True)
            async for line in lines:
                await out.write(line.upper())
                await out.flush()
        print("stdout is back", flush=True)

    asyncio.run(main())
    """
)


def test_lines_are_served_on_the_loop_and_stray_prints_miss_the_wire() -> None:
    done = subprocess.run(
        [sys.executable, "-c", ECHO], input=b"one\n" + "zwei \u00e9\n".encode() + b"x" * 200_000 + b"\n",
        capture_output=True, timeout=60, check=True,
    )  # fmt: skip

    assert done.stdout == b"ONE\n" + "ZWEI \u00c9\n".encode() + b"X" * 200_000 + b"\nstdout is back\n"
    assert b"a stray print while serving" in done.stderr


def test_a_stdin_that_is_a_regular_file_gets_the_sdk_transport(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("one\n")
    with (tmp_path / "in.txt").open("rb") as stdin:
        done = subprocess.run([sys.executable, "-c", ECHO], stdin=stdin, capture_output=True, timeout=60, check=True)

    assert done.stdout == b"threaded transport\n"


def test_the_server_over_stdio_reads_and_writes_without_worker_threads(tmp_path: Path) -> None:
    """The SDK's own transport starts a worker thread for stdin's first line; served on the loop, the server
    keeps its two threads (the main thread and the one running the event loop)."""
    with peer(server_env(tmp_path / "data")) as server:
        for number in (1, 2, 3):
            reply = server.call(
                "sequentialthinking",
                {
                    "thought": f"Thought {number}.",
                    "thoughtNumber": number,
                    "totalThoughts": 3,
                    "nextThoughtNeeded": True,
                },
            )
            assert reply["result"]["structuredContent"]["thoughtNumber"] == number
        threads = os.listdir(f"/proc/{server.process.pid}/task")

    assert len(threads) == 2


def _requests() -> bytes:
    """initialize, initialized, tools/list and a tools/call, written at once as a piped client does."""
    messages: list[dict[str, object]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "cat", "version": "1"}},
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "sequentialthinking",
                "arguments": {"thought": "Piped.", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False},
            },
        },
    ]
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def _answered(stdout: bytes) -> list[object]:
    return [json.loads(line).get("id") for line in stdout.splitlines() if line.strip()]


def test_a_piped_client_that_closes_stdin_gets_every_reply(tmp_path: Path) -> None:
    """`cat requests.jsonl | thinking-hats`: the server answers what it read before end of input, then exits."""
    done = subprocess.run(
        [sys.executable, "-m", "thinking_hats"], input=_requests(), env=server_env(tmp_path / "data"),
        capture_output=True, timeout=60, check=True,
    )  # fmt: skip

    assert _answered(done.stdout) == [1, 2, 3]


def test_a_client_reading_a_file_as_stdin_gets_every_reply(tmp_path: Path) -> None:
    """`thinking-hats < requests.jsonl`: the SDK's own transport serves a file; the same holds there."""
    (tmp_path / "requests.jsonl").write_bytes(_requests())
    with (tmp_path / "requests.jsonl").open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "thinking_hats"], stdin=stdin, env=server_env(tmp_path / "data"),
            capture_output=True, timeout=60, check=True,
        )  # fmt: skip

    assert _answered(done.stdout) == [1, 2, 3]
