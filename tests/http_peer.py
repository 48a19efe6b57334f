"""The real server as a subprocess on streamable HTTP (127.0.0.1, a free port), for load and exposure tests."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client

ANNOUNCEMENT = re.compile(r"streamable HTTP on (http://\S+/mcp)")
# A raw `initialize` request: the smallest thing the server must answer (or refuse) over HTTP.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def post(url: str, body: object, **headers: str) -> httpx2.Response:
    """One raw JSON-RPC POST, with the headers streamable HTTP requires plus `headers`."""
    return httpx2.post(url, json=body, headers=MCP_HEADERS | headers, timeout=30)


async def call_in_turn(
    url: str,
    calls: list[tuple[str, dict[str, Any]]],
    mode: str = "auto",
    done: Callable[[], None] = lambda: None,
    attempts: int = 10,
    call_timeout: float = 60,
) -> int:
    """Makes `calls` (tool, arguments) one after another from one MCP client; a call that fails (an error reply,
    or the connection lost when a server process dies) is sent again, the same call, from a new client, up to
    `attempts` times. `done` is called after each call that succeeded. Returns how many calls were sent again."""
    pending, retries, failed = list(calls), 0, 0
    while pending:
        try:
            # A lost connection surfaces from the client's task group at the end of this block, as an exception group.
            async with Client(url, mode=mode) as session:  # type: ignore[arg-type]
                while pending:
                    with anyio.fail_after(call_timeout):
                        result = await session.call_tool(*pending[0])
                    if result.is_error:
                        raise RuntimeError("".join(getattr(b, "text", "") for b in result.content))
                    pending.pop(0)
                    failed = 0
                    done()
        except Exception as exc:
            retries, failed = retries + 1, failed + 1
            if failed >= attempts:
                raise AssertionError(f"{pending[0]} still failing after {attempts} attempts: {exc!r}") from exc
    return retries


@dataclass
class HttpServer:
    process: subprocess.Popen[str]
    url: str = ""
    stderr: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/", 1)[0])

    def rss_kib(self) -> int:
        """Resident memory of the server process, from /proc (Linux)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS in /proc status")

    def workers(self) -> set[int]:
        """The pids of the `--workers` processes (the supervisor's spawned children), from /proc (Linux)."""
        found = set()
        for entry in Path("/proc").iterdir():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if parent == self.process.pid and b"spawn_main" in (entry / "cmdline").read_bytes():
                    found.add(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue  # not a process, or one that just ended
        return found


def _drain(server: HttpServer, ready: threading.Event) -> None:
    # Reads stderr for the whole run: the announcement sets `ready`, and a full pipe can never stall the server.
    assert server.process.stderr is not None
    for line in server.process.stderr:
        server.stderr.append(line)
        match = ANNOUNCEMENT.search(line)
        if match and not ready.is_set():
            server.url = match.group(1)
            ready.set()
    ready.set()  # the process ended: let the waiter see why


@contextmanager
def http_server(env: dict[str, str], *args: str) -> Iterator[HttpServer]:
    command = [sys.executable, "-m", "thinking_hats", "serve", "--transport", "http", "--port", "0", *args]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    server = HttpServer(process)
    ready = threading.Event()
    reader = threading.Thread(target=_drain, args=(server, ready), daemon=True)
    reader.start()
    try:
        assert ready.wait(timeout=60), "the server did not announce its address"
        assert server.url, f"the server exited: {''.join(server.stderr)}"
        yield server
    finally:
        stop(process)
        reader.join(timeout=30)
        assert process.stderr is not None
        process.stderr.close()


def stop(process: subprocess.Popen[Any]) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 30 s."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)
