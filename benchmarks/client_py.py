"""A benchmark client on the official Python SDK, mcp 2.x or 1.x (whichever this interpreter has).

    python benchmarks/client_py.py SPEC.json     # JSON on stdout; benchmarks/run.py writes SPEC and reads it

For each server in the spec, in order: spawn it over stdio and time spawn -> `initialize` reply; list the tools
(as a real client does first, and both SDKs validate replies against the listed `outputSchema`); make `warmup`
record-only calls, then `calls` more, timing each and reading the server's CPU time (utime + stime in
/proc/<pid>/stat) before and after them. Runs under mcp 1.x in its own environment, so it imports nothing from
this repository. `client.mjs` is the same client on the TypeScript SDK.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

VERSION = importlib.metadata.version("mcp")
MCP2 = int(VERSION.split(".")[0]) >= 2


def child_pid() -> int | None:
    """The server: this process's child (both SDKs exec the command directly, no shell in between)."""
    mine = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == mine:
                    return int(entry.name)
            except (OSError, IndexError):
                continue
    return None


def cpu_ticks(pid: int | None) -> int | None:
    """User + system CPU of a process so far, in clock ticks (os.sysconf('SC_CLK_TCK') a second)."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])


def rss_kib(pid: int | None) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text() if pid is not None else ""
    except OSError:
        return None
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), None)


def arguments(number: int, total: int) -> dict[str, Any]:
    return {
        "thought": f"Thought {number}: a plain step of reasoning to record.",
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": number < total,
    }


async def measure(session: Any, spec: dict[str, Any], startup: float) -> dict[str, Any]:
    tool, warmup, calls = spec["tool"], spec["warmup"], spec["calls"]
    await session.list_tools()
    pid = child_pid()
    total = warmup + calls
    for number in range(1, warmup + 1):
        await call(session, tool, arguments(number, total))
    before = cpu_ticks(pid)
    latencies = []
    started = time.perf_counter()
    for number in range(warmup + 1, total + 1):
        begun = time.perf_counter()
        await call(session, tool, arguments(number, total))
        latencies.append(time.perf_counter() - begun)
    elapsed = time.perf_counter() - started
    after = cpu_ticks(pid)
    return {
        "startup_s": startup,
        "latencies_s": latencies,
        "elapsed_s": elapsed,
        "cpu_s": (after - before) / os.sysconf("SC_CLK_TCK") if before is not None and after is not None else None,
        "rss_kib": rss_kib(pid),
    }


async def call(session: Any, tool: str, args: dict[str, Any]) -> None:
    result = await session.call_tool(tool, args)
    if getattr(result, "is_error", None) or getattr(result, "isError", None):
        raise RuntimeError(f"{tool} failed: {result.content}")


async def one_server(spec: dict[str, Any], server: dict[str, Any]) -> dict[str, Any]:
    params = StdioServerParameters(
        command=server["command"], args=server["args"], env=server["env"], cwd=server.get("cwd")
    )
    started = time.perf_counter()
    if MCP2:
        from mcp import Client

        async with Client(params) as client:  # entering it spawns the server and completes `initialize`
            return await measure(client, spec, time.perf_counter() - started)
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await measure(session, spec, time.perf_counter() - started)


async def main(spec: dict[str, Any]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for server in spec["servers"]:
        try:
            results[server["name"]] = await one_server(spec, server)
        except Exception as exc:  # one server failing is a note in the table, not the end of the run
            results[server["name"]] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    return {"client": f"mcp {VERSION} (Python)", "results": results}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(json.loads(Path(sys.argv[1]).read_text())))))
