"""stdin and stdout as asyncio pipes under the SDK's stdio transport (src/thinking_hats/pipes.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from stdio_peer import peer, server_env

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
