"""Deployment benchmarks (issue 8): `thinking-hats serve --transport http --workers N` as a subprocess, against the
stub model, on SQLite and on a throwaway PostgreSQL server.

    .venv/bin/python benchmarks/deploy.py            # a few minutes: table on stdout, JSON in benchmarks/.cache/
    .venv/bin/python benchmarks/deploy.py --smoke    # under a minute: each measurement once, tiny counts
    .venv/bin/python benchmarks/deploy.py --output results.json

Measurements:
1. throughput: thoughts/s with the "triple" strategy (4 model calls in 2 rounds) at 200 ms model latency, 20 clients
   sending thoughts back to back, for --workers 1 and 2;
2. concurrency: 20 concurrent triple thoughts vs one alone (target <= 1.3x with --workers 2 on 2 cores);
3. record-only calls/s (no model) on SQLite and on PostgreSQL, 20 clients, --workers 1 and 2, and the latency of
   one client's calls one after another.

The clients speak the stateless protocol revision (2026-07-28) as raw JSON-RPC over keep-alive HTTP/1.1
connections, not through the MCP SDK's client: the clients share the machine's cores with the server, and the
SDK client's own CPU per call (several ms) would otherwise be measured as the server's. The PostgreSQL server is
started from its binaries by tests/pg.py (a temporary cluster, fsync off); without them that row says why. The
benchmark reports; it does not assert timings.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # pg.py: the throwaway PostgreSQL cluster of the test suite

MODERN = "2026-07-28"
HARD = (
    "Should we move the payments service to a new region this quarter, weighing the outage risk, the cost, "
    "the team's on-call load and the customers' latency? What are the alternatives and what could go wrong?"
)
DEFAULT_OUTPUT = HERE / ".cache" / "deploy.json"


@dataclass(frozen=True)
class Plan:
    latency: float  # model latency (s)
    clients: int  # concurrent clients
    thoughts_per_client: int  # throughput: triple thoughts each client sends back to back
    runs: int  # concurrency: alone / together pairs, the median reported
    record_per_client: int  # record-only calls each client sends
    sequential: int  # record-only calls of one client, for the latency


FULL = Plan(latency=0.2, clients=20, thoughts_per_client=10, runs=5, record_per_client=100, sequential=300)
SMOKE = Plan(latency=0.02, clients=4, thoughts_per_client=2, runs=1, record_per_client=10, sequential=10)


# --- a raw stateless MCP client -------------------------------------------------------------------------------


class Connection:
    """One keep-alive HTTP/1.1 connection sending `tools/call` requests of the stateless revision."""

    _ids = itertools.count(1)

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> Connection:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def __aexit__(self, *_: object) -> None:
        if self.writer is not None:
            self.writer.close()

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's result; raises on a transport error, a JSON-RPC error or an isError result."""
        assert self.reader is not None and self.writer is not None
        ident = next(self._ids)
        body = json.dumps({
            "jsonrpc": "2.0", "id": ident, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "deploy-benchmark", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}}},
        }).encode()  # fmt: skip
        head = (
            f"POST {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
            f"MCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        status, headers, payload = await self._response()
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {payload[:300]!r}")
        if headers.get("content-type", "").startswith("text/event-stream"):
            events = [json.loads(line[5:]) for line in payload.decode().splitlines() if line.startswith("data:")]
            message = next(m for m in events if m.get("id") == ident)
        else:
            message = json.loads(payload)
        if "error" in message or message["result"].get("isError"):
            raise RuntimeError(f"{tool} failed: {json.dumps(message)[:500]}")
        return dict(message["result"])

    async def _response(self) -> tuple[int, dict[str, str], bytes]:
        assert self.reader is not None
        lines = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        if headers.get("transfer-encoding") == "chunked":
            chunks = []
            while size := int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16):
                chunks.append(await self.reader.readexactly(size + 2))
            await self.reader.readuntil(b"\r\n")
            return status, headers, b"".join(c[:-2] for c in chunks)
        return status, headers, await self.reader.readexactly(int(headers.get("content-length", "0")))


def thought(session: str, number: int, total: int, strategy: str | None, text: str = HARD) -> dict[str, Any]:
    arguments: dict[str, Any] = {"thought": text, "thoughtNumber": number, "totalThoughts": total,
                                 "nextThoughtNeeded": number < total, "sessionId": session}  # fmt: skip
    if strategy is not None:
        arguments["strategy"] = strategy
    return arguments


# --- the server ---------------------------------------------------------------------------------------------------


def server_env(data_dir: Path, model_url: str | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("THINKING_", "LLM_", "CRASH_", "AGNO_"))}
    env |= {"THINKING_DATA_DIR": str(data_dir), "DISABLE_THOUGHT_LOGGING": "true", "AGNO_TELEMETRY": "false"}
    if model_url is not None:
        env |= {"LLM_PROVIDER": "openai-compatible", "LLM_BASE_URL": model_url, "LLM_MODEL": "stub-model",
                "THINKING_HAT_TIMEOUT": "60", "THINKING_DEADLINE": "120"}  # fmt: skip
    return env | extra


def _processes() -> list[tuple[int, int, list[str]]]:
    """(pid, parent pid, the fields of /proc/pid/stat after the name) of every process."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            found.append((int(entry.name), int(fields[1]), fields))
        except (OSError, ValueError, IndexError):
            continue
    return found


def cpu_s(pid: int) -> float:
    """CPU seconds used so far by process `pid` and its children (a server's workers), user + system."""
    ticks = os.sysconf("SC_CLK_TCK")
    return sum((int(f[11]) + int(f[12])) / ticks for p, parent, f in _processes() if pid in (p, parent))


def connections_per_worker(server: Server) -> list[int]:
    """How many established connections to the server's port each worker process holds (how the kernel spread
    the clients over the workers), from /proc; one number for a single process."""
    port = urlsplit(server.url).port
    established = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                established.add(f"socket:[{fields[9]}]")
    workers = [p for p, parent, _ in _processes() if parent == server.pid] or [server.pid]
    counts = []
    for pid in workers:
        held = 0
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                held += os.readlink(fd) in established
            except OSError:
                continue
        counts.append(held)
    return sorted((c for c in counts if c), reverse=True)


@dataclass
class Server:
    url: str
    pid: int


@asynccontextmanager
async def stub_model(latency: float) -> AsyncIterator[tuple[str, int]]:
    """benchmarks/stub_llm.py in a process of its own (its CPU is not the clients'): (base URL, pid)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(HERE / "stub_llm.py"), "--port", "0", "--latency", str(latency),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdout is not None
    base_url = (await process.stdout.readline()).decode().strip()
    if not base_url.startswith("http"):
        raise RuntimeError("the stub model server did not start")
    try:
        yield base_url, process.pid
    finally:
        process.terminate()
        await process.wait()


@asynccontextmanager
async def serving(env: dict[str, str], workers: int) -> AsyncIterator[Server]:
    command = [sys.executable, "-m", "thinking_hats", "serve", "--transport", "http", "--port", "0",
               "--workers", str(workers)]  # fmt: skip
    process = await asyncio.create_subprocess_exec(
        *command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    said: list[str] = []
    url = ""
    while not url:
        line = (await process.stderr.readline()).decode()
        if not line:
            raise RuntimeError("the HTTP server exited before announcing its address:\n" + "".join(said))
        said.append(line)
        if "streamable HTTP on " in line:
            url = line.split("streamable HTTP on ", 1)[1].split()[0]

    async def drain() -> None:  # a full stderr pipe would stall the server
        assert process.stderr is not None
        while await process.stderr.readline():
            pass

    drainer = asyncio.create_task(drain())
    try:
        yield Server(url, process.pid)
    finally:
        process.terminate()
        await process.wait()
        drainer.cancel()


async def connections(url: str, count: int) -> list[Connection]:
    return [await Connection(url).__aenter__() for _ in range(count)]


async def close(conns: list[Connection]) -> None:
    for conn in conns:
        await conn.__aexit__()


# --- 1 and 2. thoughts with the model -------------------------------------------------------------------------------


async def bench_model(plan: Plan, stub: tuple[str, int], work: Path, workers: int) -> dict[str, Any]:
    """Throughput of triple thoughts from `plan.clients` clients, then the concurrency ratio, on one server."""
    model_url, stub_pid = stub
    async with serving(server_env(work / f"model-{workers}", model_url), workers) as server:
        conns = await connections(server.url, plan.clients)
        try:
            # Warm-up: each worker loads agno and builds its model client on its first thoughts.
            for _ in range(2):
                await asyncio.gather(
                    *(c.call("sequentialthinking", thought(f"warm-{next(SERIAL)}", 1, 1, "triple")) for c in conns)
                )

            async def client(conn: Connection, index: int) -> None:
                n = plan.thoughts_per_client
                for number in range(1, n + 1):
                    await conn.call("sequentialthinking", thought(f"tp-{workers}-{index}", number, n, "triple"))

            spread = connections_per_worker(server)
            cpu, stub_cpu = cpu_s(server.pid), cpu_s(stub_pid)
            started = time.perf_counter()
            await asyncio.gather(*(client(c, i) for i, c in enumerate(conns)))
            wall = time.perf_counter() - started
            cpu, stub_cpu = cpu_s(server.pid) - cpu, cpu_s(stub_pid) - stub_cpu
            done = plan.clients * plan.thoughts_per_client

            alone, together = [], []
            for run in range(plan.runs):
                started = time.perf_counter()
                await conns[0].call("sequentialthinking", thought(f"alone-{workers}-{run}", 1, 1, "triple"))
                alone.append(time.perf_counter() - started)
                started = time.perf_counter()
                await asyncio.gather(
                    *(
                        c.call("sequentialthinking", thought(f"together-{workers}-{run}-{i}", 1, 1, "triple"))
                        for i, c in enumerate(conns)
                    )
                )
                together.append(time.perf_counter() - started)
        finally:
            await close(conns)
    a, t = statistics.median(alone), statistics.median(together)
    return {
        "workers": workers,
        "model_latency_s": plan.latency,
        "clients": plan.clients,
        "thoughts": done,
        "thoughts_per_s": round(done / wall, 2),
        "floor_thoughts_per_s": round(plan.clients / (2 * plan.latency), 2),  # 2 rounds of model calls each
        "server_cpu_ms_per_thought": round(cpu / done * 1000, 1),
        "stub_cpu_ms_per_thought": round(stub_cpu / done * 1000, 1),
        "connections_per_worker": spread,
        "alone_s": round(a, 3),
        "concurrent_s": round(t, 3),
        "ratio": round(t / a, 3),
    }


SERIAL = itertools.count(1)


# --- 3. record-only ---------------------------------------------------------------------------------------------


async def bench_record(plan: Plan, work: Path, backend: str, store: str | None, workers: int) -> dict[str, Any]:
    extra = {"THINKING_STORE": store} if store else {}
    async with serving(server_env(work / f"record-{backend}-{workers}", None, **extra), workers) as server:
        conns = await connections(server.url, plan.clients)
        try:
            await asyncio.gather(*(c.call("sequentialthinking", thought(f"w-{i}", 1, 1, None, "warm")) for i, c in
                                   enumerate(conns)))  # fmt: skip

            async def client(conn: Connection, index: int) -> None:
                n = plan.record_per_client
                for number in range(1, n + 1):
                    await conn.call("sequentialthinking", thought(f"rec-{index}", number, n, None, f"step {number}"))

            spread = connections_per_worker(server)
            cpu = cpu_s(server.pid)
            started = time.perf_counter()
            await asyncio.gather(*(client(c, i) for i, c in enumerate(conns)))
            wall = time.perf_counter() - started
            cpu = cpu_s(server.pid) - cpu
            calls = plan.clients * plan.record_per_client

            latencies = []
            for number in range(1, plan.sequential + 1):
                started = time.perf_counter()
                await conns[0].call("sequentialthinking", thought("seq", number, plan.sequential, None, f"s{number}"))
                latencies.append(time.perf_counter() - started)
        finally:
            await close(conns)
    return {
        "backend": backend,
        "workers": workers,
        "clients": plan.clients,
        "calls": calls,
        "calls_per_s": round(calls / wall, 1),
        "server_cpu_ms_per_call": round(cpu / calls * 1000, 2),
        "connections_per_worker": spread,
        "one_client_p50_ms": round(statistics.median(latencies) * 1000, 2),
    }


async def bench_records(plan: Plan, work: Path) -> list[dict[str, Any]]:
    rows = [await bench_record(plan, work, "sqlite", None, w) for w in (1, 2)]
    try:
        from pg import PostgresCluster, PostgresUnavailable
    except ImportError as exc:
        return [*rows, {"backend": "postgresql", "skipped": f"tests/pg.py cannot be imported: {exc}"}]
    try:
        cluster = await asyncio.to_thread(PostgresCluster.launch)
    except PostgresUnavailable as exc:
        return [*rows, {"backend": "postgresql", "skipped": str(exc)}]
    try:
        for w in (1, 2):
            rows.append(await bench_record(plan, work, "postgresql", cluster.create_database("bench"), w))
    finally:
        cluster.stop()
    return rows


# --- the report ---------------------------------------------------------------------------------------------------


def table(results: dict[str, Any]) -> str:
    lines = ["| Measurement | Figure | Target |", "|---|---|---|"]
    for row in results["model"]:
        lines.append(
            f"| thoughts/s, triple at {row['model_latency_s'] * 1000:.0f} ms, {row['clients']} clients, "
            f"--workers {row['workers']} | **{row['thoughts_per_s']:.1f}** (floor {row['floor_thoughts_per_s']:.0f}; "
            f"server CPU {row['server_cpu_ms_per_thought']:.0f} ms/thought, stub {row['stub_cpu_ms_per_thought']:.0f}; "
            f"connections per worker {row['connections_per_worker']}) | |"
        )
    for row in results["model"]:
        target = "<= 1.30x" if row["workers"] == 2 else ""
        lines.append(
            f"| {row['clients']} concurrent triple thoughts vs one alone, --workers {row['workers']} | "
            f"{row['concurrent_s']:.3f} s / {row['alone_s']:.3f} s = **{row['ratio']:.2f}x** | {target} |"
        )
    for row in results["record"]:
        if "skipped" in row:
            lines.append(f"| record-only, {row['backend']} | skipped: {row['skipped']} | |")
            continue
        lines.append(
            f"| record-only calls/s, {row['backend']}, --workers {row['workers']}, {row['clients']} clients | "
            f"**{row['calls_per_s']:.0f}** (server CPU {row['server_cpu_ms_per_call']:.1f} ms/call; one client "
            f"p50 {row['one_client_p50_ms']:.1f} ms) | |"
        )
    return "\n".join(lines)


async def main_async(plan: Plan, smoke: bool) -> dict[str, Any]:
    results: dict[str, Any] = {
        "mode": "smoke" if smoke else "full",
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        },
    }
    with tempfile.TemporaryDirectory(prefix="thinking-hats-deploy-") as tmp:
        async with stub_model(plan.latency) as stub:
            results["model"] = [await bench_model(plan, stub, Path(tmp), w) for w in (1, 2)]
        results["record"] = await bench_records(plan, Path(tmp))
    results["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return results


def command(
    doc: str | None,
    measure: Callable[[bool], Coroutine[Any, Any, dict[str, Any]]],
    table: Callable[[dict[str, Any]], str],
    default_output: Path,
) -> int:
    """The command line of a load benchmark (this one and limits.py): --smoke and --output, the JSON written, the
    table printed."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny counts and latency: checks the harness runs")
    parser.add_argument("--output", type=Path, default=default_output, help="where to write the JSON (%(default)s)")
    args = parser.parse_args()
    results = asyncio.run(measure(args.smoke))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))
    print(f"\nJSON written to {args.output}")
    return 0


def main() -> int:
    return command(__doc__, lambda smoke: main_async(SMOKE if smoke else FULL, smoke), table, DEFAULT_OUTPUT)


if __name__ == "__main__":
    sys.exit(main())
