"""A raw MCP peer over stdio: newline-delimited JSON-RPC to a real `thinking-hats` subprocess.

The SDK client hides the process and refuses some payloads; tests of crash safety and malformed frames need the
pid, the pipes and the freedom to send anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PROTOCOL = "2025-06-18"


def server_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("THINKING_", "LLM_", "CRASH_", "OPENAI_"))}
    env.update({"THINKING_DATA_DIR": str(data_dir), "DISABLE_THOUGHT_LOGGING": "true", **extra})
    return env


class Peer:
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self._next_id = 100

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any] | None:
        """The next message, skipping notifications; None at end of stream."""
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                return None
            message: dict[str, Any] = json.loads(line)
            if "id" in message:
                return message

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        reply = self.receive()
        assert reply is not None, "the server closed the stream"
        assert reply["id"] == self._next_id
        return reply

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def initialize(self) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "raw-peer", "version": "0"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply


def spawn(env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "thinking_hats", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


@contextmanager
def peer(env: dict[str, str]) -> Iterator[Peer]:
    process = spawn(env)
    try:
        p = Peer(process)
        p.initialize()
        yield p
    finally:
        finish(process)


def finish(process: subprocess.Popen[bytes]) -> None:
    """Kill the server if it still runs, reap it and close its pipes (stdin may hold what it never read)."""
    if process.poll() is None:
        process.kill()
    process.wait(timeout=30)
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(BrokenPipeError):
                stream.close()
