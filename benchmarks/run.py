"""The performance tables: the real server as a subprocess, driven by real MCP clients, against the stub model,
beside the floor of its stack (benchmarks/floor_server.py) and the reference TypeScript server.

    python benchmarks/run.py                 # the full run (minutes): tables on stdout, JSON in benchmarks/.cache/
    python benchmarks/run.py --record        # ... and write benchmarks/results.json (what the README shows)
    python benchmarks/run.py --smoke         # under a minute: every measurement once, tiny counts (CI runs this)
    python benchmarks/run.py --only peers,think --record    # re-measure some rows of the recorded results

Outside the project's virtual environment it re-runs itself with .venv/bin/python. The reference server
(`@modelcontextprotocol/server-sequential-thinking`), the TypeScript client SDK (both from npm) and an mcp 1.x
client environment (from PyPI) are installed into --cache on first use; whatever cannot be installed is a
note in the table, not a failure. Each figure is the median of several runs; targets (DESIGN.md section 9 and
the issues) are printed next to the figures. The benchmark reports, it does not assert timings.

A measurement is a function `async def bench_x(ctx: Ctx) -> Any` (its JSON) plus a function turning that JSON
into table rows, registered in MEASUREMENTS.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"


def _in_project_environment() -> None:
    """Re-run under the project's venv when this interpreter cannot import the project (`python
    benchmarks/run.py` from a shell without the venv activated), or say how to create one."""
    missing = [name for name in ("mcp", "thinking_hats", "uvicorn") if importlib.util.find_spec(name) is None]
    if not missing:
        return
    if VENV_PYTHON.exists() and not os.environ.get("THINKING_HATS_BENCHMARK_REEXEC"):
        os.environ["THINKING_HATS_BENCHMARK_REEXEC"] = "1"  # one try: a broken venv must not loop
        os.execv(VENV_PYTHON, [str(VENV_PYTHON), str(Path(__file__).resolve()), *sys.argv[1:]])
    sys.exit(
        f"benchmarks/run.py needs the project and its dev extra ({', '.join(missing)} not importable by "
        f"{sys.executable}): python3 -m venv .venv && .venv/bin/pip install -e '.[dev]', then "
        ".venv/bin/python benchmarks/run.py"
    )


if __name__ == "__main__":
    _in_project_environment()

import argparse  # noqa: E402
import asyncio  # noqa: E402
import compileall  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Awaitable, Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

from mcp import Client, StdioServerParameters  # noqa: E402

import thinking_hats  # noqa: E402

sys.path.insert(0, str(ROOT))

from benchmarks.observability import bench_observability, rows_observability  # noqa: E402
from benchmarks.stub_llm import StubLLM  # noqa: E402

DEFAULT_CACHE = HERE / ".cache"
RECORDED = HERE / "results.json"  # tracked: what the README's tables come from; written only with --record
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
    cold_runs: int
    startup_pairs: int  # alternating spawns of thinking-hats and the floor, for the paired start-up figure
    peer_rounds: int  # each round: every client against every server, servers in a rotated order
    peer_calls: int
    peer_warmup: int
    think_runs: int
    profile_thoughts: dict[str, int]  # per profiled workload: thoughts measured (and as many profiled)
    install_timeout: float  # seconds for npm and pip together


FULL = Plan(
    latency=0.2,
    runs=5,
    record_calls=2000,
    rss_small=1000,
    rss_large=10000,
    session_length=50,
    concurrent=20,
    concurrency_latencies=(0.2, 1.0),
    cold_runs=5,
    startup_pairs=20,
    peer_rounds=5,
    peer_calls=1000,
    peer_warmup=100,
    think_runs=5,
    profile_thoughts={"full": 40, "record-only": 500},
    install_timeout=600,
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
    cold_runs=1,
    startup_pairs=2,
    peer_rounds=1,
    peer_calls=20,
    peer_warmup=5,
    think_runs=1,
    profile_thoughts={"full": 2, "record-only": 20},
    install_timeout=45,  # in the background while the other measurements run
)


@dataclass
class Ctx:
    """What every measurement gets."""

    plan: Plan
    stub: StubLLM
    work: Path  # a temporary directory, removed after the run
    cache: Path  # npm and pip installs, kept between runs (gitignored)
    peers: asyncio.Task[Peers]  # started first; awaited by the measurements that need the peers


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


def child_processes(marker: bytes) -> list[int]:
    """This process's children whose command line contains `marker` (the stdio servers it spawned)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == os.getpid() and marker in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def children_rss_kib() -> int:
    """Resident memory of this process's `thinking_hats` children (the stdio server), from /proc."""
    total = 0
    for pid in child_processes(b"thinking_hats"):
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except (OSError, ValueError):
            continue
    return total


def cpu_s(pid: int, thread: int | None = None) -> float:
    """User + system CPU seconds of a process (or of one of its threads) so far, from /proc."""
    path = f"/proc/{pid}/task/{thread}/stat" if thread is not None else f"/proc/{pid}/stat"
    try:
        fields = Path(path).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def median_or_none(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


# --- 1. strategies -------------------------------------------------------------------------------------------


async def bench_strategies(ctx: Ctx) -> list[dict[str, Any]]:
    plan, stub, rows = ctx.plan, ctx.stub, []
    async with stdio(server_env(ctx.work / "strategies", stub, THINKING_HAT_TIMEOUT="20")) as client:
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


def rows_strategies(rows: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [
        (
            f"{row['strategy']}: wall / floor ({row['calls']} calls, {row['rounds']} rounds, "
            f"peak {row['peak_concurrency']} concurrent)",
            f"{row['wall_s']:.3f} s / {row['floor_s']:.3f} s = **{row['overhead']:.2f}x**",
            "<= 1.10x",
        )
        for row in rows
    ]


# --- 2 and 6. cold start and the tools/list reply --------------------------------------------------------------


async def bench_cold_start(ctx: Ctx) -> dict[str, Any]:
    starts, lists, sizes = [], [], []
    for run in range(ctx.plan.cold_runs):
        env = server_env(ctx.work / f"cold-{run}", None)
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


def rows_cold_start(cold: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (
            f"cold start: spawn to `initialize` reply ({cold['cpus']} CPUs)",
            f"**{cold['spawn_to_initialize_s']:.2f} s**",
            "<= 1.3 s",
        ),
        ("`tools/list` time", f"{cold['tools_list_s'] * 1000:.1f} ms", ""),
        ("`tools/list` reply size", f"{cold['tools_list_bytes']:,} bytes", ""),
    ]


# --- 3. prompt size over a long session ----------------------------------------------------------------------


async def bench_prompt_growth(ctx: Ctx) -> dict[str, Any]:
    n, stub = ctx.plan.session_length, ctx.stub
    async with stdio(server_env(ctx.work / "growth", stub)) as client:
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


def rows_prompt_growth(growth: dict[str, Any]) -> list[tuple[str, str, str]]:
    last = growth[f"prompt_tokens_thought_{growth['thoughts']}"]
    return [
        (
            f"prompt tokens, thought 3 vs thought {growth['thoughts']}",
            f"{growth['prompt_tokens_thought_3']} vs {last} = **{growth['ratio']:.2f}x**",
            "<= 1.5x",
        )
    ]


# --- 4. record-only latency and memory -------------------------------------------------------------------------


async def bench_record_only(ctx: Ctx) -> dict[str, Any]:
    plan = ctx.plan
    latencies: list[float] = []
    rss: dict[int, int] = {}
    async with stdio(server_env(ctx.work / "record", None)) as client:
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


def rows_record_only(rec: dict[str, Any]) -> list[tuple[str, str, str]]:
    small, large = (k for k in rec if k.startswith("rss_kib_after_"))
    return [
        (
            f"record-only latency over stdio, {rec['calls']:,} calls",
            f"p50 {rec['p50_ms']:.2f} ms, p95 {rec['p95_ms']:.2f} ms",
            "",
        ),
        (
            f"server RSS after {small[14:]} vs {large[14:]} thoughts",
            f"{rec[small] / 1024:.1f} MiB vs {rec[large] / 1024:.1f} MiB = **{rec['rss_ratio']:.2f}x**",
            "within 1.20x",
        ),
    ]


# --- 5. concurrency over HTTP ------------------------------------------------------------------------------------


async def bench_concurrency(ctx: Ctx) -> dict[str, Any]:
    """N triple thoughts in N sessions at once vs one alone, over HTTP, with --workers 1 and 2; and beside them, in
    the same run, the server CPU per thought against the floors of its stack making the same model calls.

    The stub runs in a process of its own (its CPU is neither the server's nor the clients'), listening with a
    backlog of 1024 like a real server; the clients are benchmarks/deploy.py's raw keep-alive JSON-RPC ones, so
    their own CPU stays small on the shared cores. The floors (benchmarks/model_floor.py): agno + the openai SDK,
    the SDK alone, and one httpx2 client, each making a triple thought's four calls with the server's prompts, in
    bursts of N concurrent thoughts."""
    from benchmarks.deploy import close, connections, serving, stub_model
    from benchmarks.deploy import server_env as deploy_env
    from benchmarks.deploy import thought as deploy_thought

    plan, out = ctx.plan, {"sessions": ctx.plan.concurrent, "strategy": "triple", "model_latency_s": ctx.plan.latency}
    serial = SERIAL  # session names unique across repeats: the same thought in the same session is a replay
    async with stub_model(plan.latency) as (model_url, _):
        for workers in (1, 2):
            env = deploy_env(ctx.work / f"concurrency-{workers}", model_url)
            async with serving(env, workers) as server:
                conns = await connections(server.url, plan.concurrent)
                try:

                    async def burst(conns: list[Any] = conns) -> None:
                        tag = next(serial)
                        calls = [
                            ("sequentialthinking", deploy_thought(f"b{tag}-{i}", 1, 1, "triple"))
                            for i in range(len(conns))
                        ]
                        await asyncio.gather(*(c.call(*call) for c, call in zip(conns, calls, strict=True)))

                    for _ in range(3):  # each worker loads agno and opens its connections on its first thoughts
                        await burst()
                    alone, together, cpu = [], [], []
                    for _ in range(plan.runs):
                        started = time.perf_counter()
                        await conns[0].call("sequentialthinking", deploy_thought(f"a{next(serial)}", 1, 1, "triple"))
                        alone.append(time.perf_counter() - started)
                        before, started = process_tree_cpu_s(server.pid), time.perf_counter()
                        await burst()
                        together.append(time.perf_counter() - started)
                        cpu.append((process_tree_cpu_s(server.pid) - before) / plan.concurrent)
                finally:
                    await close(conns)
            a, t = statistics.median(alone), statistics.median(together)
            out[f"workers_{workers}"] = {
                "alone_s": round(a, 3),
                "concurrent_s": round(t, 3),
                "ratio": round(t / a, 3),
                "server_cpu_ms_per_thought": round(statistics.median(cpu) * 1000, 2),
            }
        floors = {}
        for stack in ("agno", "sdk", "httpx"):
            process = await asyncio.create_subprocess_exec(
                sys.executable, str(HERE / "model_floor.py"), "--base-url", model_url, "--stack", stack,
                "--concurrent", str(plan.concurrent), "--bursts", str(plan.runs), "--warm", "2",
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env(ctx.work / "floor", None),
            )  # fmt: skip
            data, err = await process.communicate()
            if process.returncode != 0:
                raise RuntimeError(f"model_floor.py --stack {stack} failed: {err.decode(errors='replace')[-500:]}")
            floors[stack] = json.loads(data)["cpu_ms_per_thought"]
    ours = out["workers_1"]["server_cpu_ms_per_thought"]
    out["floor_cpu_ms_per_thought"] = floors
    out["ours_vs_agno_sdk"] = round(ours / floors["agno"], 3)
    out["ours_vs_httpx"] = round(ours / floors["httpx"], 3)
    calls = STRATEGY_CALLS["triple"]  # what each layer adds to one model call, from the floors
    out["sdk_over_httpx_ms_per_call"] = round((floors["sdk"] - floors["httpx"]) / calls, 3)
    out["agno_over_sdk_ms_per_call"] = round((floors["agno"] - floors["sdk"]) / calls, 3)
    return out


SERIAL = itertools.count()


def process_tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process and its direct children (a server's workers)."""
    children = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _parent(int(p.name)) == pid]
    return cpu_s(pid) + sum(cpu_s(child) for child in children)


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def rows_concurrency(c: dict[str, Any]) -> list[tuple[str, str, str]]:
    rows = []
    for workers, target in ((1, "<= 1.3x"), (2, "<= 1.2x")):
        w = c[f"workers_{workers}"]
        rows.append(
            (
                f"{c['sessions']} concurrent {c['strategy']} thoughts over HTTP vs one alone, `--workers {workers}`, "
                f"{c['model_latency_s'] * 1000:.0f} ms model latency ({w['server_cpu_ms_per_thought']:.1f} ms "
                "server CPU per thought)",
                f"{w['concurrent_s']:.3f} s vs {w['alone_s']:.3f} s = **{w['ratio']:.2f}x**",
                target,
            )
        )
    floors = c["floor_cpu_ms_per_thought"]
    rows.append(
        (
            "server CPU per triple thought in those bursts (`--workers 1`) vs the same four calls made by agno + the "
            f"openai SDK ({floors['agno']:.1f} ms; the SDK alone {floors['sdk']:.1f} ms, one httpx2 client "
            f"{floors['httpx']:.1f} ms = {c['ours_vs_httpx']:.2f}x; per call the SDK adds "
            f"{c['sdk_over_httpx_ms_per_call']:.2f} ms to httpx2 and agno {c['agno_over_sdk_ms_per_call']:.2f} ms "
            "to the SDK)",
            f"{c['workers_1']['server_cpu_ms_per_thought']:.1f} ms vs {floors['agno']:.1f} ms = "
            f"**{c['ours_vs_agno_sdk']:.2f}x**",
            "<= 1.1x",
        )
    )
    return rows


# --- 7. `thinking-hats think`: one-shot wall time against the model time ----------------------------------------

# Provider -> the variables pointing it at the stub (Anthropic clients append /v1 themselves).
THINK_PROVIDERS: dict[str, Callable[[StubLLM], dict[str, str]]] = {
    "openai-compatible": lambda stub: {"LLM_BASE_URL": stub.base_url},
    "anthropic": lambda stub: {"LLM_BASE_URL": stub.root, "ANTHROPIC_API_KEY": "stub-key"},
}
# Top-level modules -> what `-X importtime` adds up under one name.
IMPORT_GROUPS: dict[str, tuple[str, ...]] = {
    "agno": ("agno",),
    "openai": ("openai",),
    "anthropic": ("anthropic",),
    "pydantic": ("pydantic", "pydantic_core", "annotated_types", "typing_inspection"),
    "pydantic_settings": ("pydantic_settings", "dotenv"),
    "thinking_hats": ("thinking_hats",),
    "rich": ("rich", "pygments", "markdown_it", "mdurl"),
    "mcp": ("mcp", "mcp_types"),
    "HTTP": ("httpx2", "httpcore2", "httpx", "httpcore", "h11", "h2", "hpack", "ssl", "_ssl", "certifi", "anyio"),
}


def import_groups(stderr: str) -> dict[str, float]:
    """Milliseconds of import time (self time, summed) per group, from `python -X importtime` output."""
    owner = {module: group for group, modules in IMPORT_GROUPS.items() for module in modules}
    totals: Counter[str] = Counter()
    for line in stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
        if found:
            totals[owner.get(found[2].split(".")[0], "stdlib and other")] += int(found[1]) / 1000
    return {group: round(ms, 1) for group, ms in totals.most_common()}


async def timed_one_shot(argv: list[str], env: dict[str, str], stub: StubLLM) -> dict[str, float]:
    """One command from spawn to exit that makes exactly one model request: wall, model time, the parts around."""
    stub.reset()
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, err = await process.communicate()
    ended = time.monotonic()
    seen = list(stub.seen)
    if process.returncode != 0 or len(seen) != 1:
        tail = err.decode(errors="replace").strip().splitlines()[-3:]
        raise RuntimeError(f"{argv[:4]} exited {process.returncode} after {len(seen)} requests: {tail}")
    model = seen[0].end - seen[0].start
    return {
        "wall_s": ended - started,
        "model_s": model,
        "overhead_s": ended - started - model,
        "spawn_to_request_s": seen[0].start - started,
        "reply_to_exit_s": ended - seen[0].end,
        "stderr": err.decode(errors="replace"),  # type: ignore[dict-item]
    }


def llm_env(ctx: Ctx, llm_home: Path) -> dict[str, str]:
    """simonw's `llm` pointed at the stub as an extra OpenAI-compatible model, its log database kept between runs."""
    llm_home.mkdir(parents=True, exist_ok=True)
    (llm_home / "extra-openai-models.yaml").write_text(
        f'- model_id: stub\n  model_name: stub-model\n  api_base: "{ctx.stub.base_url}"\n'
    )
    base = {k: v for k, v in os.environ.items() if not k.startswith(("THINKING_", "LLM_", "OPENAI_"))}
    return base | {"LLM_USER_PATH": str(llm_home), "OPENAI_API_KEY": "stub-key"}


async def bench_think(ctx: Ctx) -> list[dict[str, Any]]:
    """`thinking-hats think --strategy single` from spawn to exit, split at its one model request; for the
    OpenAI-compatible route, simonw's `llm` CLI (`llm -m stub --no-stream`) against the same stub, alternating
    with ours. Both keep an existing database (ours its store, llm its log), as on a user's second run."""
    peers = await ctx.peers
    rows = []
    for provider, endpoint in THINK_PROVIDERS.items():
        env = server_env(ctx.work / f"think-{provider}", None, LLM_PROVIDER=provider, LLM_MODEL="stub-model",
                         **endpoint(ctx.stub))  # fmt: skip
        ours_argv = [sys.executable, "-m", "thinking_hats", "think", "--strategy", "single"]
        llm_argv = None
        if provider == "openai-compatible" and peers.llm_python is not None:
            llm_argv = [str(peers.llm_python), "-m", "llm", "-m", "stub", "--no-stream"]
            llm_envs = llm_env(ctx, ctx.work / "llm-home")
        ours: list[dict[str, float]] = []
        theirs: list[dict[str, float]] = []
        for run in range(-1, ctx.plan.think_runs):  # run -1 creates the databases, unmeasured
            # A new text each time: the same thought in the same store would be a replay, with no model call.
            text = f"{HARD} (run {run})"
            pair: list[tuple[list[dict[str, float]], list[str], dict[str, str]]] = [(ours, ours_argv, env)]
            if llm_argv is not None:
                pair.append((theirs, llm_argv, llm_envs))
            for into, argv, e in pair if run % 2 == 0 else reversed(pair):
                measured = await timed_one_shot([*argv, text], e, ctx.stub)
                if run >= 0:
                    into.append(measured)
        traced = await timed_one_shot([sys.executable, "-X", "importtime", *ours_argv[1:], f"{HARD} (imports)"], env,
                                      ctx.stub)  # fmt: skip
        imports = import_groups(str(traced["stderr"]))
        sdk = "anthropic" if provider == "anthropic" else "openai"
        row: dict[str, Any] = {
            "provider": provider,
            "runs": len(ours),
            "ours": summary(ours),
            "import_ms": imports,
            "sdk_and_agno_import_ms": round(imports.get(sdk, 0.0) + imports.get("agno", 0.0), 1),
            "sdk_import_ms": imports.get(sdk, 0.0),
            "agno_import_ms": imports.get("agno", 0.0),
            "llm": summary(theirs) if theirs else None,
            "llm_note": "" if llm_argv is not None else (peers.llm_note or "llm is compared on the OpenAI route only"),
        }
        if theirs:
            row["ours_vs_llm_overhead"] = round(row["ours"]["overhead_s"] / row["llm"]["overhead_s"], 3)
            row["ours_minus_llm_overhead_ms"] = round((row["ours"]["overhead_s"] - row["llm"]["overhead_s"]) * 1000, 1)
        rows.append(row)
    return rows


def summary(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(float(r[key]) for r in runs), 3) for key in runs[0] if key != "stderr"}


def rows_think(rows: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    out = []
    for row in rows:
        ours = row["ours"]
        top = ", ".join(f"{group} {ms / 1000:.2f}" for group, ms in list(row["import_ms"].items())[:5])
        llm = row.get("llm")
        against = (
            f"; `llm` {llm['wall_s']:.2f} s - {llm['model_s']:.2f} s = {llm['overhead_s']:.2f} s"
            if llm
            else f"; {row['llm_note']}"
        )
        out.append(
            (
                f"`thinking-hats think --strategy single`, {row['provider']}: wall - model time (spawn to request "
                f"{ours['spawn_to_request_s']:.2f} s, reply to exit {ours['reply_to_exit_s']:.2f} s; imports in s: "
                f"{top}; of which the SDK and agno {row['sdk_and_agno_import_ms'] / 1000:.2f}{against})",
                f"{ours['wall_s']:.2f} s - {ours['model_s']:.2f} s = **{ours['overhead_s']:.2f} s**"
                + (f" = **{row['ours_vs_llm_overhead']:.2f}x** `llm`'s" if llm else ""),
                "<= `llm`'s" if llm else "",
            )
        )
    return out


# --- 8. server CPU per thought, by component ------------------------------------------------------------------

# Module prefix -> component; the first match wins. Modules in no row (pydantic, json, logging, tenacity, the
# stdlib ...) are charged to whoever called them, so pydantic validating an MCP message counts as MCP.
COMPONENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("router", ("thinking_hats.routing.router", "thinking_hats.routing.model", "thinking_hats.routing.features")),
    ("prompts", ("thinking_hats.hats.prompts",)),
    ("store", ("thinking_hats.store",)),
    ("SQLite", ("sqlite3", "_sqlite3")),
    ("thinking_hats (other)", ("thinking_hats",)),
    ("agno", ("agno",)),
    ("SDK", ("openai", "anthropic")),
    ("HTTP", ("httpx2", "httpcore2", "httpx", "httpcore", "h11", "h2", "ssl", "_ssl", "socket", "_socket")),
    ("MCP request handling", ("mcp", "mcp_types", "anyio", "starlette", "sse_starlette", "uvicorn")),
    ("event loop", ("asyncio", "_asyncio", "selectors", "select")),
)
OURS = ("router", "prompts", "store", "thinking_hats (other)")
# Where the profiled (wall-clock) event loop waits rather than works: the loop's poll and lock waits.
IDLE = ("<method 'poll' of 'select.epoll' objects>", "<method 'acquire' of '_thread.lock' objects>")
Func = tuple[str, int, str]


def module_of(func: Func) -> str:
    """The dotted module of a profiled function: from its file, or for a builtin from its name."""
    filename, _, name = func
    if filename == "~":  # "<method 'execute' of 'sqlite3.Connection' objects>", "<built-in method _ssl.x>"
        found = re.search(r"of '([\w.]+)' objects|built-in method ([\w.]+)", name)
        return (found[1] or found[2]) if found else ""
    path = filename.replace("\\", "/")
    for marker in ("/site-packages/", "/src/"):
        if marker in path:
            return path.split(marker, 1)[1].removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    found = re.search(r"/python3\.\d+/(.+)\.py$", path)
    return found[1].replace("/", ".").removesuffix(".__init__") if found else path


def component_of(module: str) -> str | None:
    for label, prefixes in COMPONENTS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return label
    return None


def by_component(stats: dict[Func, Any]) -> dict[str, float]:
    """Share of the profiled CPU per component. A function in no component passes its own time to its callers'
    components, in proportion to the time each call edge accounts for (cProfile keeps edges, not stacks)."""
    own = {func: component_of(module_of(func)) for func in stats}
    memo: dict[Func, dict[str, float]] = {}

    def context(func: Func, seen: frozenset[Func]) -> dict[str, float]:
        """How `func`'s time splits over components by who called it."""
        if own.get(func):
            return {own[func] or "": 1.0}
        if func in memo:
            return memo[func]
        callers = stats[func][4] if func in stats else {}
        weights = {caller: edge[3] for caller, edge in callers.items() if caller not in seen and edge[3] > 0}
        total = sum(weights.values())
        if not total:
            return {"other": 1.0}
        split: Counter[str] = Counter()
        for caller, weight in weights.items():
            for label, share in context(caller, seen | {func}).items():
                split[label] += share * weight / total
        memo[func] = dict(split)
        return memo[func]

    totals: Counter[str] = Counter()
    for func, (_, _, self_time, _, callers) in stats.items():
        if func[0] == "~" and func[2] in IDLE:
            continue
        if own[func]:
            totals[own[func] or ""] += self_time
            continue
        # Its own time, split by the callers' share of it (edge[2]: this function's self time under that caller).
        weights = {caller: edge[2] for caller, edge in callers.items() if edge[2] > 0}
        total = sum(weights.values())
        if not total:
            totals["other"] += self_time
            continue
        for caller, weight in weights.items():
            for label, share in context(caller, frozenset({func})).items():
                totals[label] += self_time * share * weight / total
    grand = sum(totals.values()) or 1.0
    return {label: value / grand for label, value in totals.most_common()}


async def profile_workload(ctx: Ctx, label: str) -> dict[str, Any]:
    """CPU per thought of one workload: the total from /proc, split by a cProfile run of as many thoughts more."""
    count = ctx.plan.profile_thoughts[label]
    model = label != "record-only"
    out = ctx.work / f"profile-{label}.prof"
    env = server_env(
        ctx.work / f"profile-{label}",
        ctx.stub if model else None,
        THINKING_HAT_TIMEOUT="20",
        BENCH_PROFILE_OUT=str(out),
    )
    params = StdioServerParameters(command=sys.executable, args=[str(HERE / "profiled_server.py")], env=env)
    extra = {"strategy": label} if model else {}

    async def thoughts(client: Client, tag: str, n: int) -> None:
        for number in range(1, n + 1):
            text = HARD if model else f"Thought {number}: a plain step of reasoning to record."
            result = await client.call_tool("sequentialthinking", thought(text, number, n, f"{tag}", **extra))
            assert not result.is_error, result

    async with Client(params) as client:
        (pid,) = child_processes(b"profiled_server")
        await thoughts(client, "warm", 2 if model else 20)
        total, loop = cpu_s(pid), cpu_s(pid, pid)  # the main thread is the event loop
        await thoughts(client, "measured", count)
        total, loop = (cpu_s(pid) - total) / count, (cpu_s(pid, pid) - loop) / count
        # The main thread runs a signal's handler before it handles the next request, so a reply after a
        # signal means the handler has run: profiling is on (or the stats are written).
        os.kill(pid, signal.SIGUSR1)
        await client.list_tools()
        await thoughts(client, "profiled", count)
        os.kill(pid, signal.SIGUSR2)
        await client.list_tools()
    shares = by_component(pstats.Stats(str(out)).stats)
    components = {name: round(share * loop * 1000, 2) for name, share in shares.items()}
    components["other threads (stdio reader and writer)"] = round(max(0.0, total - loop) * 1000, 2)
    return {
        "workload": label,
        "thoughts": count,
        "cpu_ms_per_thought": round(total * 1000, 2),
        "ours_ms": round(sum(components.get(name, 0.0) for name in OURS), 2),
        "components_ms": components,
    }


async def bench_components(ctx: Ctx) -> list[dict[str, Any]]:
    return [await profile_workload(ctx, label) for label in ctx.plan.profile_thoughts]


def rows_components(rows: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    out = []
    for row in rows:
        parts = ", ".join(f"{name} {ms:.2f}" for name, ms in row["components_ms"].items() if ms >= 0.01)
        out.append(
            (
                f"server CPU per {row['workload']} thought over stdio, by component in ms ({parts})",
                f"{row['cpu_ms_per_thought']:.2f} ms, of which thinking_hats.* **{row['ours_ms']:.2f} ms**",
                "ours <= 2 ms",
            )
        )
    return out


# --- 9. start-up imports beside the floor ----------------------------------------------------------------------

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


async def startup_imports(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    """Import time by group of a server started with -X importtime, up to its `initialize` reply."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-X",
        "importtime",
        *argv,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    await process.stdin.drain()
    await process.stdout.readline()
    process.stdin.close()
    _, err = await process.communicate()
    return import_groups(err.decode(errors="replace"))


async def bench_startup_imports(ctx: Ctx) -> dict[str, Any]:
    runs: dict[str, list[dict[str, float]]] = {"thinking-hats": [], "floor": []}
    for run in range(ctx.plan.cold_runs):
        env = server_env(ctx.work / f"imports-{run}", None)
        runs["thinking-hats"].append(await startup_imports(["-m", "thinking_hats"], env))
        runs["floor"].append(await startup_imports([str(HERE / "floor_server.py")], env))
    medians = {
        name: {g: round(statistics.median(r.get(g, 0.0) for r in samples), 1) for g in {g for r in samples for g in r}}
        for name, samples in runs.items()
    }
    ours, floor = medians["thinking-hats"], medians["floor"]
    extra = {g: round(ours.get(g, 0.0) - floor.get(g, 0.0), 1) for g in ours.keys() | floor.keys()}
    return {
        "import_ms": medians,
        "total_ms": {name: round(sum(groups.values()), 1) for name, groups in medians.items()},
        "extra_ms": dict(sorted(extra.items(), key=lambda kv: -kv[1])),
    }


def rows_startup_imports(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    total = result["total_ms"]
    parts = ", ".join(f"{g} {ms:+.0f}" for g, ms in result["extra_ms"].items() if abs(ms) >= 3)
    return [
        (
            f"imports up to the `initialize` reply (`-X importtime`), thinking-hats vs the floor; extra by group in "
            f"ms: {parts}",
            f"{total['thinking-hats']:.0f} ms vs {total['floor']:.0f} ms = "
            f"**{total['thinking-hats'] - total['floor']:+.0f} ms**",
            "",
        )
    ]


async def spawn_to_initialize(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from spawning a stdio server to its `initialize` reply (raw JSON-RPC: no client library's costs)."""
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable, *argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    await process.stdin.drain()
    await process.stdout.readline()
    elapsed = time.perf_counter() - started
    process.stdin.close()
    await process.wait()
    return elapsed


async def bench_startup_pairs(ctx: Ctx) -> dict[str, Any]:
    """Start-up beside the floor, paired: the two servers are spawned alternately, so a slow moment of a shared
    machine costs both (single start-ups here vary by ~100 ms; the peer table has 5 per server and client). Over
    one existing store, as a client restarting its server has; creating a new store is measured apart."""
    ours, floor = [], []
    env = server_env(ctx.work / "pairs", None)
    fresh = [await spawn_to_initialize(["-m", "thinking_hats"], server_env(ctx.work / f"fresh-{run}", None))
             for run in range(3)]  # fmt: skip
    for run in range(ctx.plan.startup_pairs):
        pair = [(["-m", "thinking_hats"], ours), ([str(HERE / "floor_server.py")], floor)]
        for argv, into in pair if run % 2 == 0 else reversed(pair):
            into.append(await spawn_to_initialize(argv, env))
    return {
        "pairs": len(ours),
        "thinking_hats_s": round(statistics.median(ours), 3),
        "floor_s": round(statistics.median(floor), 3),
        "paired_difference_ms": round(statistics.median(a - b for a, b in zip(ours, floor, strict=True)) * 1000, 1),
        "new_store_s": round(statistics.median(fresh), 3),
    }


def rows_startup_pairs(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (
            f"start-up beside the floor, paired ({result['pairs']} alternating spawns each over an existing store, "
            f"raw `initialize`; median of the differences; a new store: {result['new_store_s']:.2f} s)",
            f"{result['thinking_hats_s']:.2f} s vs {result['floor_s']:.2f} s: "
            f"**{result['paired_difference_ms']:+.0f} ms**",
            "<= +60 ms",
        )
    ]


# --- 10. beside the floor and the reference server, through three clients --------------------------------------

NODE_PACKAGES = ("@modelcontextprotocol/sdk@^1", "@modelcontextprotocol/server-sequential-thinking")
REFERENCE = "@modelcontextprotocol/server-sequential-thinking"
MCP1 = "mcp>=1.20,<2"
LLM_CLI = "llm>=0.36,<1"
SERVERS = {  # name -> label in the tables
    "thinking-hats": "thinking-hats (record-only)",
    "floor": "floor: bare `MCPServer`, one echo tool",
    "reference": "reference TypeScript server",
}


@dataclass
class Peers:
    """What the installs produced: a path, or a note saying why it is missing."""

    node_prefix: Path | None = None
    node_note: str = ""
    mcp1_python: Path | None = None
    mcp1_note: str = ""
    llm_python: Path | None = None
    llm_note: str = ""
    versions: dict[str, str] = field(default_factory=dict)


async def quietly(argv: list[str], budget: float) -> tuple[bool, str]:
    """Run a command to completion (killed, with its children, after `budget` seconds): (succeeded, last line)."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), max(1.0, budget))
    except TimeoutError:
        os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        return False, f"`{' '.join(argv[:3])} ...` timed out after {budget:.0f} s"
    lines = [line.strip() for line in output.decode(errors="replace").splitlines() if line.strip()]
    # npm ends with where its log is; the first error line says what went wrong (pip's last line does).
    errors = [line for line in lines if line.startswith("npm error") and "complete log" not in line]
    last = errors[0] if errors else lines[-1] if lines else f"exit status {process.returncode}"
    return process.returncode == 0, last[:200]


def package_version(prefix: Path, name: str) -> str:
    try:
        return str(json.loads((prefix / "node_modules" / name / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "?"


async def install_node(cache: Path, deadline: float) -> tuple[Path | None, str]:
    if shutil.which("node") is None or shutil.which("npm") is None:
        return None, "skipped: node/npm not found (install Node.js to compare with it)"
    prefix = cache / "node"
    names = [spec.rsplit("@", 1)[0] if spec.count("@") > 1 else spec for spec in NODE_PACKAGES]
    if all((prefix / "node_modules" / name / "package.json").exists() for name in names):
        return prefix, ""
    prefix.mkdir(parents=True, exist_ok=True)
    ok, last = await quietly(
        [
            "npm",
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--fetch-retries=1",
            "--fetch-timeout=20000",
            *NODE_PACKAGES,
        ],
        deadline - time.monotonic(),
    )
    return (prefix, "") if ok else (None, f"skipped: npm install failed ({last})")


async def install_mcp1(cache: Path, deadline: float) -> tuple[Path | None, str]:
    venv = cache / "mcp1"
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import importlib.metadata as m, mcp; assert int(m.version('mcp')[0]) < 2"]
    if python.exists() and (await quietly(check, 60))[0]:
        return python, ""
    ok, last = await quietly([sys.executable, "-m", "venv", "--clear", str(venv)], deadline - time.monotonic())
    if ok:
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", MCP1]
        ok, last = await quietly(pip, deadline - time.monotonic())
    return (python, "") if ok else (None, f"skipped: could not build the mcp 1.x environment ({last})")


async def install_llm(cache: Path, deadline: float) -> tuple[Path | None, str]:
    """simonw's `llm` CLI in an environment of its own under the cache, for the one-shot comparison."""
    venv = cache / "llm"
    python = venv / "bin" / "python"
    if python.exists() and (await quietly([str(python), "-c", "import llm"], 60))[0]:
        return python, ""
    ok, last = await quietly([sys.executable, "-m", "venv", "--clear", str(venv)], deadline - time.monotonic())
    if ok:
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", LLM_CLI]
        ok, last = await quietly(pip, deadline - time.monotonic())
    return (python, "") if ok else (None, f"skipped: could not install llm ({last})")


async def prepare_peers(cache: Path, budget: float, servers: bool = True, llm: bool = True) -> Peers:
    deadline = time.monotonic() + budget

    async def nothing() -> tuple[Path | None, str]:
        return None, "not needed by the measurements chosen"

    (node, node_note), (mcp1, mcp1_note), (llm_python, llm_note) = await asyncio.gather(
        install_node(cache, deadline) if servers else nothing(),
        install_mcp1(cache, deadline) if servers else nothing(),
        install_llm(cache, deadline) if llm else nothing(),
    )
    peers = Peers(node, node_note, mcp1, mcp1_note, llm_python=llm_python, llm_note=llm_note)
    if node is not None:
        peers.versions = {name: package_version(node, name) for name in ("@modelcontextprotocol/sdk", REFERENCE)}
    return peers


def peer_servers(peers: Peers, work: Path, tag: str) -> list[dict[str, Any]]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("THINKING_", "LLM_", "CRASH_", "AGNO_"))}
    servers = [
        {
            "name": "thinking-hats",
            "command": sys.executable,
            "args": ["-m", "thinking_hats"],
            "env": server_env(work / f"peers-{tag}", None),
        },
        {"name": "floor", "command": sys.executable, "args": [str(HERE / "floor_server.py")], "env": base},
    ]
    if peers.node_prefix is not None:
        package = peers.node_prefix / "node_modules" / REFERENCE
        bin_entry = json.loads((package / "package.json").read_text())["bin"]
        script = bin_entry if isinstance(bin_entry, str) else next(iter(bin_entry.values()))
        servers.append(
            {
                "name": "reference",
                "command": shutil.which("node") or "node",
                "args": [str(package / script)],
                "env": base | {"DISABLE_THOUGHT_LOGGING": "true"},
            }
        )
    return servers


def peer_clients(peers: Peers) -> list[tuple[str, list[str] | None, str]]:
    """(name, command without the spec path, note) per client; a None command is skipped with its note."""
    node = shutil.which("node")
    return [
        ("mcp 2.x (Python)", [sys.executable, str(HERE / "client_py.py")], ""),
        (
            "mcp 1.x (Python)",
            [str(peers.mcp1_python), str(HERE / "client_py.py")] if peers.mcp1_python else None,
            peers.mcp1_note,
        ),
        ("TypeScript SDK", [node, str(HERE / "client.mjs")] if node and peers.node_prefix else None, peers.node_note),
    ]


async def drive(command: list[str], spec: dict[str, Any], path: Path, budget: float) -> dict[str, Any]:
    """One client process against every server of the spec; its JSON, or an error for every server."""
    log = write_spec(path, spec)
    with log.open("wb") as err:
        process = await asyncio.create_subprocess_exec(
            *command, str(path), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, cwd=ROOT
        )
        try:
            out, _ = await asyncio.wait_for(process.communicate(), budget)
        except TimeoutError:
            process.kill()
            await process.wait()
            out = b""
    try:
        return dict(json.loads(out))
    except ValueError:
        tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-2:])[:300]
        reason = f"client failed (exit {process.returncode}): {tail}"
        return {"client": "?", "results": {s["name"]: {"error": reason} for s in spec["servers"]}}


def write_spec(path: Path, spec: dict[str, Any]) -> Path:
    """Write a client's spec; returns where its stderr goes."""
    path.write_text(json.dumps(spec))
    return path.with_suffix(".log")


def summarize(samples: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [s for s in samples if "error" not in s]
    if not ok:
        return {"error": samples[0]["error"] if samples else "not run"}
    cpu = [s["cpu_s"] / len(s["latencies_s"]) * 1000 if s.get("cpu_s") is not None else None for s in ok]
    rss = median_or_none([s.get("rss_kib") for s in ok])
    return {
        "runs": len(ok),
        "startup_s": round(statistics.median(s["startup_s"] for s in ok), 3),
        "calls_per_s": round(statistics.median(len(s["latencies_s"]) / s["elapsed_s"] for s in ok), 1),
        "p50_ms": round(statistics.median(percentile(s["latencies_s"], 0.5) * 1000 for s in ok), 3),
        "p95_ms": round(statistics.median(percentile(s["latencies_s"], 0.95) * 1000 for s in ok), 3),
        "cpu_ms_per_call": None if (c := median_or_none(cpu)) is None else round(c, 3),
        "rss_mib": None if rss is None else round(rss / 1024, 1),
    }


async def bench_peers(ctx: Ctx) -> dict[str, Any]:
    plan, peers = ctx.plan, await ctx.peers
    clients = peer_clients(peers)
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {name: {} for name, _, _ in clients}
    versions: dict[str, str] = {}
    for round_ in range(plan.peer_rounds):
        for name, command, _ in clients:
            if command is None:
                continue
            tag = f"{round_}-{name.split()[0]}".replace(".", "")
            servers = peer_servers(peers, ctx.work, tag)
            shift = round_ % len(servers)  # rotate the order so no server always goes first (or last)
            spec = {
                "tool": "sequentialthinking",
                "warmup": plan.peer_warmup,
                "calls": plan.peer_calls,
                "clk_tck": os.sysconf("SC_CLK_TCK"),
                "node_prefix": str(peers.node_prefix or ""),
                "servers": servers[shift:] + servers[:shift],
            }
            timeout = 120 + plan.peer_calls * len(servers) * 0.1
            answer = await drive(command, spec, ctx.work / f"client-{tag}.json", timeout)
            versions[name] = answer["client"]
            for server, result in answer["results"].items():
                samples[name].setdefault(server, []).append(result)
    servers_note = {"reference": peers.node_note} if peers.node_prefix is None else {}
    return {
        "calls": plan.peer_calls,
        "rounds": plan.peer_rounds,
        "versions": versions | {f"npm {k}": v for k, v in peers.versions.items()},
        "clients": {
            name: {
                "note": note,
                "servers": {
                    server: summarize(samples[name].get(server, []))
                    if server not in servers_note
                    else {"error": servers_note[server]}
                    for server in SERVERS
                }
                if command is not None
                else {},
            }
            for name, command, note in clients
        },
    }


def _fmt(value: float | None, unit: str, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}{unit}"


def _ratio(ours: float | None, theirs: float | None) -> str:
    return "" if ours is None or theirs is None or theirs == 0 else f"{ours / theirs:.2f}x"


PEER_METRICS: tuple[tuple[str, str, str, int], ...] = (  # (key, label, unit, digits)
    ("startup_s", "start-up: spawn to `initialize` reply", " s", 2),
    ("calls_per_s", "record-only calls/s, one client", "", 0),
    ("p50_ms", "record-only call p50", " ms", 2),
    ("p95_ms", "record-only call p95", " ms", 2),
    ("cpu_ms_per_call", "server CPU per record-only call", " ms", 3),
    ("rss_mib", "server RSS after the calls", " MiB", 1),
)


def peer_table(result: dict[str, Any]) -> str:
    lines = [
        "| Client | Measurement | " + " | ".join(SERVERS.values()) + " | vs floor | vs reference | Target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    for client, data in result["clients"].items():
        shown = result["versions"].get(client, client)
        if not data["servers"]:
            lines.append(f"| {client} | {data['note']} | | | | | | |")
            continue
        for server, figures in data["servers"].items():
            if "error" in figures and (note := f"{SERVERS[server]}: {figures['error']}") not in notes:
                notes.append(note)
        for key, label, unit, digits in PEER_METRICS:
            cells, numbers = [], {}
            for server in SERVERS:
                figures = data["servers"][server]
                numbers[server] = figures.get(key)
                cells.append(_fmt(figures.get(key), unit, digits))
            ours, floor, reference = numbers["thinking-hats"], numbers["floor"], numbers["reference"]
            vs_floor = _ratio(ours, floor)
            if key == "startup_s" and ours is not None and floor is not None:
                vs_floor = f"{(ours - floor) * 1000:+.0f} ms"
            target = {"startup_s": "within 60 ms of the floor", "cpu_ms_per_call": "<= 1.2x the floor"}.get(key, "")
            if key == "p50_ms" and client.startswith("mcp 1"):
                target = "<= 2 ms"
            lines.append(
                f"| {shown if key == 'startup_s' else ''} | {label} | {' | '.join(cells)} | {vs_floor} | "
                f"{_ratio(ours, reference)} | {target} |"
            )
    return "\n".join(lines + ([""] + [f"- {note}" for note in notes] if notes else []))


def rows_peers(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    rows = []
    mcp2 = result["clients"]["mcp 2.x (Python)"]["servers"]
    ours, floor = mcp2.get("thinking-hats", {}), mcp2.get("floor", {})
    if "error" not in ours and "error" not in floor:
        rows.append(
            (
                "start-up beside the floor (bare `MCPServer`), mcp 2.x client",
                f"{ours['startup_s']:.2f} s vs {floor['startup_s']:.2f} s = "
                f"**{(ours['startup_s'] - floor['startup_s']) * 1000:+.0f} ms**",
                "<= +60 ms",
            )
        )
        if ours.get("cpu_ms_per_call") and floor.get("cpu_ms_per_call"):
            rows.append(
                (
                    "server CPU per record-only call beside the floor, mcp 2.x client",
                    f"{ours['cpu_ms_per_call']:.2f} ms vs {floor['cpu_ms_per_call']:.2f} ms = "
                    f"**{ours['cpu_ms_per_call'] / floor['cpu_ms_per_call']:.2f}x**",
                    "<= 1.2x",
                )
            )
    mcp1 = result["clients"]["mcp 1.x (Python)"]
    if mcp1["servers"] and "error" not in mcp1["servers"]["thinking-hats"]:
        p50 = mcp1["servers"]["thinking-hats"]["p50_ms"]
        rows.append(("record-only call p50 through the mcp 1.x Python client", f"**{p50:.2f} ms**", "<= 2 ms"))
    else:
        rows.append(("record-only call p50 through the mcp 1.x Python client", mcp1["note"] or "n/a", "<= 2 ms"))
    return rows


# --- the run ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measurement:
    key: str  # its key in the JSON, and its name for --only
    run: Callable[[Ctx], Awaitable[Any]]
    rows: Callable[[Any], list[tuple[str, str, str]]]  # (measurement, figure, target) rows of the main table
    table: Callable[[Any], str] | None = None  # a table of its own, printed after the main one


MEASUREMENTS = (
    Measurement("strategies", bench_strategies, rows_strategies),
    Measurement("cold_start", bench_cold_start, rows_cold_start),
    Measurement("prompt_growth", bench_prompt_growth, rows_prompt_growth),
    Measurement("record_only", bench_record_only, rows_record_only),
    Measurement("concurrency", bench_concurrency, rows_concurrency),
    Measurement("think", bench_think, rows_think),
    Measurement("components", bench_components, rows_components),
    Measurement("startup_imports", bench_startup_imports, rows_startup_imports),
    Measurement("startup_pairs", bench_startup_pairs, rows_startup_pairs),
    Measurement("peers", bench_peers, rows_peers, peer_table),
    # Metrics and traces cost, and the limit check's store round trips: benchmarks/observability.py.
    Measurement("observability", bench_observability, rows_observability),
)


def report(results: dict[str, Any]) -> str:
    lines = ["| Measurement | Figure | Target |", "|---|---|---|"]
    tables = []
    for m in MEASUREMENTS:
        if m.key in results:
            lines += [f"| {a} | {b} | {c} |" for a, b, c in m.rows(results[m.key])]
            if m.table is not None:
                tables.append(m.table(results[m.key]))
    return "\n\n".join(t for t in ["\n".join(lines), *tables, spread_table(results)] if t)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    plan = SMOKE if args.smoke else FULL
    chosen = [m for m in MEASUREMENTS if not args.only or m.key in args.only]
    with tempfile.TemporaryDirectory(prefix="thinking-hats-bench-") as tmp:
        async with StubLLM(latency=plan.latency) as stub:
            keys = {m.key for m in chosen}
            peers = asyncio.create_task(
                prepare_peers(args.cache, plan.install_timeout, servers="peers" in keys, llm="think" in keys)
                if keys & {"peers", "think"}
                else asyncio.sleep(0, Peers())
            )
            if not args.smoke:  # installing competes for the CPUs: finish it before measuring anything
                await peers
            ctx = Ctx(plan, stub, Path(tmp), args.cache, peers)
            results: dict[str, Any] = {
                "mode": "smoke" if args.smoke else "full",
                "model_latency_s": plan.latency,
                "machine": {
                    "python": platform.python_version(),
                    "platform": platform.platform(),
                    "cpus": os.cpu_count(),
                    "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
                },
            }
            runs: dict[str, list[Any]] = {m.key: [] for m in chosen}
            loads = []
            for repeat in range(args.repeat):  # whole rounds, so a slow spell of the shared machine hits every row
                for m in chosen:
                    started = time.perf_counter()
                    runs[m.key].append(await m.run(ctx))
                    loads.append(os.getloadavg()[0])
                    took = time.perf_counter() - started
                    print(f"  {m.key} ({repeat + 1}/{args.repeat}): {took:.1f} s", file=sys.stderr, flush=True)
            results["repeats"] = args.repeat
            results["spread"] = {}
            for key, measured in runs.items():
                results[key], spread = merge_runs(measured)
                if spread is not None and args.repeat > 1:  # one run has no spread for prose to quote
                    results["spread"][key] = spread
            results["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
            results["machine"]["load_1min_during"] = [round(min(loads), 2), round(max(loads), 2)]
    return results


def merge_runs(runs: list[Any]) -> tuple[Any, Any]:
    """Several runs of one measurement as (their median, their spread): every number becomes the median of the
    runs in the first tree and [min, median, max] in the second, which is what prose may quote (docs/floor.md)."""
    first = runs[0]
    if isinstance(first, bool) or any(type(r) is not type(first) for r in runs):
        return first, None
    if isinstance(first, int | float):
        # An odd number of runs has a middle one; of an even number, the lower middle (a count stays a count).
        middle = statistics.median_low(runs)
        spread = [min(runs), middle, max(runs)]
        return (round(middle, 4) if isinstance(middle, float) else middle), [round(v, 4) for v in spread]
    if isinstance(first, dict):
        merged, spreads = {}, {}
        for key in first:
            if all(isinstance(r, dict) and key in r for r in runs):
                merged[key], spread = merge_runs([r[key] for r in runs])
                if spread is not None:
                    spreads[key] = spread
            else:
                merged[key] = first[key]
        return merged, spreads or None
    if isinstance(first, list) and all(len(r) == len(first) for r in runs):
        pairs = [merge_runs([r[i] for r in runs]) for i in range(len(first))]
        spreads = [p[1] for p in pairs]
        return [p[0] for p in pairs], spreads if any(x is not None for x in spreads) else None
    return first, None


def spread_rows(spread: Any, path: str = "") -> list[tuple[str, list[float]]]:
    """(dotted path, [min, median, max]) for every number of a spread tree: the names docs/floor.md quotes them by."""
    if isinstance(spread, list) and len(spread) == 3 and all(isinstance(v, int | float) for v in spread):
        return [(path, spread)]
    items = spread.items() if isinstance(spread, dict) else enumerate(spread) if isinstance(spread, list) else ()
    rows: list[tuple[str, list[float]]] = []
    for key, value in items:
        if value is not None:
            rows += spread_rows(value, f"{path}.{key}" if path else str(key))
    return rows


def spread_table(results: dict[str, Any]) -> str:
    rows = spread_rows(results.get("spread", {}))
    if not rows:
        return ""
    lines = [
        f"Every figure over {results.get('repeats', 1)} runs (min / median / max; prose quotes them by name):",
        "",
        "| Figure | Min | Median | Max |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{path}` | {low:g} | {mid:g} | {high:g} |" for path, (low, mid, high) in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny counts and latency: checks the harness runs")
    parser.add_argument(
        "--only",
        type=lambda s: set(s.split(",")),
        help="comma-separated measurements to run; their results replace those in an existing output file",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="run the measurements this many times; figures get min/median/max"
    )
    parser.add_argument("--output", type=Path, help="where to write the JSON (default benchmarks/.cache/last-run.json)")
    parser.add_argument("--record", action="store_true", help=f"write the JSON to {RECORDED.relative_to(ROOT)}")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="npm and pip installs (default %(default)s)")
    args = parser.parse_args()
    unknown = (args.only or set()) - {m.key for m in MEASUREMENTS}
    if unknown:
        parser.error(
            f"--only: unknown {', '.join(sorted(unknown))}; choose from {', '.join(m.key for m in MEASUREMENTS)}"
        )
    output = output_path(args.output, args.record)
    # Every process measured runs our modules byte-compiled, as `pip install` leaves them and as the libraries'
    # and `llm`'s are: an editable install on a machine that sets PYTHONDONTWRITEBYTECODE (this image does) would
    # compile them from source in every start, ~20 ms the user never pays.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(Path(thinking_hats.__file__).parent, quiet=1)
    results = asyncio.run(main_async(args))
    output.parent.mkdir(parents=True, exist_ok=True)
    if args.only and output.exists():  # a partial run replaces its measurements and keeps the others
        previous = json.loads(output.read_text())
        updated = previous.get("updated", {}) | dict.fromkeys(sorted(args.only), results["machine"])
        spread = previous.get("spread", {}) | results.get("spread", {})
        for key in args.only - results.get("spread", {}).keys():
            spread.pop(key, None)  # re-measured without a spread (one run): the old spread no longer applies
        results = previous | {key: results[key] for key in args.only} | {"updated": updated, "spread": spread}
    output.write_text(json.dumps(results, indent=2) + "\n")
    print(report(results))
    print(f"\nJSON written to {output}")
    # The harness checks what it can without timing: the call counts are exact by design.
    wrong = [r for r in results.get("strategies", []) if r["calls"] != r["expected_calls"]]
    if wrong:
        print(f"call counts differ from the design: {wrong}", file=sys.stderr)
        return 1
    return 0


def output_path(output: Path | None, record: bool) -> Path:
    """--output wins; --record means the tracked results.json; otherwise an untracked file in the cache."""
    if output is not None:
        return output
    return RECORDED if record else DEFAULT_CACHE / "last-run.json"


if __name__ == "__main__":
    raise SystemExit(main())
