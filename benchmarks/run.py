"""The performance table: the real server as a subprocess, driven by a real MCP client, against the stub model.

    python benchmarks/run.py           # the full run (minutes): table on stdout, JSON in benchmarks/results.json
    python benchmarks/run.py --smoke   # seconds: every measurement once, tiny counts (CI runs this)

Each figure is the median of several runs. Targets (DESIGN.md section 9) are printed next to the figures; the
benchmark reports, it does not assert: CI runs the smoke mode only so the harness cannot rot.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.stub_llm import StubLLM  # noqa: E402

STRATEGY_ROUNDS = {"single": 1, "double": 2, "triple": 2, "full": 2}
STRATEGY_CALLS = {"single": 1, "double": 3, "triple": 4, "full": 6}
HARD = (
    "Should we move the payments service to a new region this quarter, weighing the outage risk, the cost, "
    "the team's on-call load and the customers' latency? What are the alternatives and what could go wrong?"
)


@dataclass(frozen=True)
class Plan:
    latency: float
    runs: int
    record_calls: int
    rss_small: int
    rss_large: int
    session_length: int
    concurrent: int
    concurrency_latencies: tuple[float, ...]


FULL = Plan(
    latency=0.2,
    runs=5,
    record_calls=2000,
    rss_small=1000,
    rss_large=10000,
    session_length=50,
    concurrent=20,
    concurrency_latencies=(0.2, 1.0),
)
SMOKE = Plan(
    latency=0.02,
    runs=1,
    record_calls=40,
    rss_small=20,
    rss_large=60,
    session_length=6,
    concurrent=4,
    concurrency_latencies=(0.02,),
)


def thought(text: str, number: int, total: int, session: str, **extra: Any) -> dict[str, Any]:
    return {
        "thought": text,
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": number < total,
        "sessionId": session,
        **extra,
    }


def server_env(data_dir: Path, stub: StubLLM | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("THINKING_", "LLM_", "CRASH_", "AGNO_"))}
    env |= {"THINKING_DATA_DIR": str(data_dir), "DISABLE_THOUGHT_LOGGING": "true", "AGNO_TELEMETRY": "false"}
    if stub is not None:
        env |= {"LLM_PROVIDER": "openai-compatible", "LLM_BASE_URL": stub.base_url, "LLM_MODEL": "stub-model"}
    return env | extra


def stdio(env: dict[str, str]) -> Client:
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "thinking_hats"], env=env))


def children_rss_kib() -> int:
    """Resident memory of this process's `thinking_hats` children (the stdio server), from /proc."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            if parent != os.getpid() or b"thinking_hats" not in (entry / "cmdline").read_bytes():
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --- 1. strategies -------------------------------------------------------------------------------------------


async def bench_strategies(plan: Plan, stub: StubLLM, work: Path) -> list[dict[str, Any]]:
    rows = []
    async with stdio(server_env(work / "strategies", stub, THINKING_HAT_TIMEOUT="20")) as client:
        # The first thought waits for the background warm-up (agno and the SDK): not what we are measuring.
        await client.call_tool("sequentialthinking", thought(HARD, 1, 1, "warm", strategy="single"))
        for strategy in STRATEGY_ROUNDS:
            walls, calls, peaks = [], [], []
            for run in range(plan.runs):
                stub.reset()
                started = time.perf_counter()
                result = await client.call_tool(
                    "sequentialthinking", thought(HARD, 1, 1, f"{strategy}-{run}", strategy=strategy)
                )
                walls.append(time.perf_counter() - started)
                assert not result.is_error, result
                stats = stub.stats()
                calls.append(stats["requests"])
                peaks.append(stats["peak_concurrency"])
            floor = STRATEGY_ROUNDS[strategy] * plan.latency
            wall = statistics.median(walls)
            rows.append(
                {
                    "strategy": strategy,
                    "wall_s": round(wall, 3),
                    "floor_s": round(floor, 3),
                    "overhead": round(wall / floor, 3),
                    "calls": int(statistics.median(calls)),
                    "expected_calls": STRATEGY_CALLS[strategy],
                    "rounds": STRATEGY_ROUNDS[strategy],
                    "peak_concurrency": int(statistics.median(peaks)),
                }
            )
    return rows


# --- 2 and 6. cold start and the tools/list reply --------------------------------------------------------------


async def bench_cold_start(plan: Plan, work: Path) -> dict[str, Any]:
    starts, lists, sizes = [], [], []
    for run in range(max(3, plan.runs)):
        env = server_env(work / f"cold-{run}", None)
        started = time.perf_counter()
        async with stdio(env) as client:
            starts.append(time.perf_counter() - started)
            listed = time.perf_counter()
            tools = await client.list_tools()
            lists.append(time.perf_counter() - listed)
            sizes.append(len(tools.model_dump_json(by_alias=True, exclude_none=True).encode()))
    return {
        "spawn_to_initialize_s": round(statistics.median(starts), 3),
        "tools_list_s": round(statistics.median(lists), 4),
        "tools_list_bytes": int(statistics.median(sizes)),
        "cpus": os.cpu_count(),
    }


# --- 3. prompt size over a long session ----------------------------------------------------------------------


async def bench_prompt_growth(plan: Plan, stub: StubLLM, work: Path) -> dict[str, Any]:
    n = plan.session_length
    async with stdio(server_env(work / "growth", stub)) as client:
        stub.reset()
        for number in range(1, n + 1):
            text = f"Step {number}: read the next log file, note any error that repeats, compare with the last step."
            await client.call_tool("sequentialthinking", thought(text, number, n, "growth", strategy="single"))
        tokens = [r["prompt_tokens"] for r in stub.stats()["recent"]]
    third, last = tokens[2], tokens[-1]
    return {
        "thoughts": n,
        "prompt_tokens_thought_3": third,
        f"prompt_tokens_thought_{n}": last,
        "ratio": round(last / third, 3),
    }


# --- 4. record-only latency and memory -------------------------------------------------------------------------


async def bench_record_only(plan: Plan, work: Path) -> dict[str, Any]:
    latencies: list[float] = []
    rss: dict[int, int] = {}
    async with stdio(server_env(work / "record", None)) as client:
        for number in range(1, plan.rss_large + 1):
            started = time.perf_counter()
            result = await client.call_tool(
                "sequentialthinking",
                thought(f"Thought {number}: a plain step of reasoning to record.", number, plan.rss_large, "record"),
            )
            if number <= plan.record_calls:
                latencies.append(time.perf_counter() - started)
            assert not result.is_error
            if number in (plan.rss_small, plan.rss_large):
                rss[number] = children_rss_kib()
    return {
        "calls": len(latencies),
        "p50_ms": round(percentile(latencies, 0.5) * 1000, 2),
        "p95_ms": round(percentile(latencies, 0.95) * 1000, 2),
        f"rss_kib_after_{plan.rss_small}": rss[plan.rss_small],
        f"rss_kib_after_{plan.rss_large}": rss[plan.rss_large],
        "rss_ratio": round(rss[plan.rss_large] / rss[plan.rss_small], 3),
    }


# --- 5. concurrency over HTTP ------------------------------------------------------------------------------------


@asynccontextmanager
async def http_server(env: dict[str, str]) -> AsyncIterator[str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "thinking_hats",
        "serve",
        "--transport",
        "http",
        "--port",
        "0",
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    url = ""
    while not url:
        line = (await process.stderr.readline()).decode()
        if not line:
            raise RuntimeError("the HTTP server exited before announcing its address")
        if "streamable HTTP on " in line:
            url = line.split("streamable HTTP on ", 1)[1].strip()

    async def drain() -> None:
        assert process.stderr is not None
        while await process.stderr.readline():
            pass

    drainer = asyncio.create_task(drain())
    try:
        yield url
    finally:
        process.terminate()
        await process.wait()
        drainer.cancel()


async def bench_concurrency(plan: Plan, stub: StubLLM, work: Path) -> list[dict[str, Any]]:
    """N thoughts in N sessions at once vs one alone, clients connected beforehand (thoughts, not handshakes)."""
    rows = []
    async with (
        http_server(server_env(work / "http", stub, THINKING_HAT_TIMEOUT="30")) as url,
        AsyncExitStack() as stack,
    ):
        clients = [await stack.enter_async_context(Client(url)) for _ in range(plan.concurrent)]

        async def one(client: Client, session: str) -> None:
            result = await client.call_tool("sequentialthinking", thought(HARD, 1, 1, session, strategy="triple"))
            assert not result.is_error, result

        await asyncio.gather(*(one(c, f"warm-{i}") for i, c in enumerate(clients)))
        for latency in plan.concurrency_latencies:
            stub.latency = latency
            alone, together, cpu = [], [], []
            for run in range(plan.runs):
                started = time.perf_counter()
                await one(clients[0], f"alone-{latency}-{run}")
                alone.append(time.perf_counter() - started)
                before = process_cpu_s(url)
                started = time.perf_counter()
                await asyncio.gather(*(one(c, f"c-{latency}-{run}-{i}") for i, c in enumerate(clients)))
                together.append(time.perf_counter() - started)
                cpu.append((process_cpu_s(url) - before) / plan.concurrent)
            a, t = statistics.median(alone), statistics.median(together)
            rows.append(
                {
                    "sessions": plan.concurrent,
                    "strategy": "triple",
                    "model_latency_s": latency,
                    "alone_s": round(a, 3),
                    "concurrent_s": round(t, 3),
                    "ratio": round(t / a, 3),
                    "server_cpu_ms_per_thought": round(statistics.median(cpu) * 1000, 1),
                }
            )
        stub.latency = plan.latency
    return rows


def process_cpu_s(url: str) -> float:
    """CPU seconds used so far by the HTTP server child (user + system), from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == os.getpid() and b"serve" in (entry / "cmdline").read_bytes():
                return (int(fields[11]) + int(fields[12])) / ticks
        except (OSError, ValueError, IndexError):
            continue
    return 0.0


# --- the report ------------------------------------------------------------------------------------------------


def table(results: dict[str, Any]) -> str:
    lines = ["| Measurement | Figure | Target |", "|---|---|---|"]
    for row in results["strategies"]:
        lines.append(
            f"| {row['strategy']}: wall / floor ({row['calls']} calls, {row['rounds']} rounds, "
            f"peak {row['peak_concurrency']} concurrent) | {row['wall_s']:.3f} s / {row['floor_s']:.3f} s = "
            f"**{row['overhead']:.2f}x** | <= 1.10x |"
        )
    cold = results["cold_start"]
    lines.append(
        f"| cold start: spawn to `initialize` reply ({cold['cpus']} CPUs) | "
        f"**{cold['spawn_to_initialize_s']:.2f} s** | <= 1.3 s |"
    )
    lines.append(f"| `tools/list` time | {cold['tools_list_s'] * 1000:.1f} ms | |")
    lines.append(f"| `tools/list` reply size | {cold['tools_list_bytes']:,} bytes | |")
    growth = results["prompt_growth"]
    last_key = f"prompt_tokens_thought_{growth['thoughts']}"
    lines.append(
        f"| prompt tokens, thought 3 vs thought {growth['thoughts']} | {growth['prompt_tokens_thought_3']} vs "
        f"{growth[last_key]} = **{growth['ratio']:.2f}x** | <= 1.5x |"
    )
    rec = results["record_only"]
    keys = [k for k in rec if k.startswith("rss_kib_after_")]
    lines.append(
        f"| record-only latency over stdio, {rec['calls']:,} calls | p50 {rec['p50_ms']:.2f} ms, "
        f"p95 {rec['p95_ms']:.2f} ms | |"
    )
    lines.append(
        f"| server RSS after {keys[0][14:]} vs {keys[1][14:]} thoughts | {rec[keys[0]] / 1024:.1f} MiB vs "
        f"{rec[keys[1]] / 1024:.1f} MiB = **{rec['rss_ratio']:.2f}x** | within 1.20x |"
    )
    for conc in results["concurrency"]:
        lines.append(
            f"| {conc['sessions']} concurrent {conc['strategy']} thoughts over HTTP vs one alone, "
            f"{conc['model_latency_s'] * 1000:.0f} ms model latency ({conc['server_cpu_ms_per_thought']:.1f} ms "
            f"server CPU per thought) | {conc['concurrent_s']:.3f} s vs {conc['alone_s']:.3f} s = "
            f"**{conc['ratio']:.2f}x** | <= 1.3x |"
        )
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    plan = SMOKE if args.smoke else FULL
    with tempfile.TemporaryDirectory(prefix="thinking-hats-bench-") as tmp:
        work = Path(tmp)
        async with StubLLM(latency=plan.latency) as stub:
            results: dict[str, Any] = {
                "mode": "smoke" if args.smoke else "full",
                "model_latency_s": plan.latency,
                "machine": {
                    "python": platform.python_version(),
                    "platform": platform.platform(),
                    "cpus": os.cpu_count(),
                },
                "strategies": await bench_strategies(plan, stub, work),
                "cold_start": await bench_cold_start(plan, work),
                "prompt_growth": await bench_prompt_growth(plan, stub, work),
                "record_only": await bench_record_only(plan, work),
                "concurrency": await bench_concurrency(plan, stub, work),
            }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny counts and latency: checks the harness runs")
    parser.add_argument("--output", type=Path, default=HERE / "results.json", help="where to write the JSON")
    args = parser.parse_args()
    results = asyncio.run(main_async(args))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))
    print(f"\nJSON written to {args.output}")
    # The harness checks what it can without timing: the call counts are exact by design.
    wrong = [r for r in results["strategies"] if r["calls"] != r["expected_calls"]]
    if wrong:
        print(f"call counts differ from the design: {wrong}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
