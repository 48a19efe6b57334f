"""What observability costs, and what the limit check costs the store.

1. Server CPU per model-using thought (strategy double: 3 model calls) with metrics and tracing off, with
   `/metrics` on, and with OpenTelemetry traces on (exported over OTLP/HTTP to a local sink that discards them):
   three HTTP servers against the stub model, driven in alternating rounds so that noise on a shared machine
   falls on all three alike; the median per round. Goal: metrics <= 3 %, traces <= 10 % over off.
2. Store round trips per thought with per-principal limits off and on: every statement and transaction a thought
   sends to the store (SQLite), counted at the backend, for a named session, a connection's default session and
   a new stateless chain. Goal: the limit check adds none.

    .venv/bin/python benchmarks/observability.py [--smoke]     # on its own (run.py runs it as "observability")
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from mcp import Client  # noqa: E402

from benchmarks.deploy import serving  # noqa: E402
from benchmarks.stub_llm import StubLLM  # noqa: E402

QUESTION = "Should we move the nightly export to the new cluster this week, given the on-call load?"
CONFIGS = {
    "off": {"THINKING_METRICS": "false"},
    "metrics": {"THINKING_METRICS": "true"},
    "traces": {"THINKING_METRICS": "false"},  # + OTEL_EXPORTER_OTLP_ENDPOINT, set when the sink is up
}


def _cpu_s(pid: int) -> float:
    """CPU seconds of all of a process's threads so far, to the nanosecond (schedstat; /proc/PID/stat counts in
    10 ms ticks, coarser than the differences measured here)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that just ended
    return total / 1e9


def _env(data_dir: Path, stub: StubLLM, **extra: str) -> dict[str, str]:
    keep = ("THINKING_", "LLM_", "CRASH_", "AGNO_", "OTEL_", "PROMETHEUS_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(keep)}
    return env | {
        "THINKING_DATA_DIR": str(data_dir), "DISABLE_THOUGHT_LOGGING": "true", "AGNO_TELEMETRY": "false",
        "LLM_PROVIDER": "openai-compatible", "LLM_BASE_URL": stub.base_url, "LLM_MODEL": "stub-model", **extra,
    }  # fmt: skip


class _Sink:
    """An OTLP/HTTP endpoint that takes every export and keeps only the count of bytes."""

    def __init__(self) -> None:
        received = self.received = [0]

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                received[0] += len(self.rfile.read(int(self.headers.get("content-length", 0))))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


async def cpu_per_thought(stub: StubLLM, work: Path, rounds: int, per_round: int) -> dict[str, Any]:
    sink = _Sink()
    micro = await asyncio.to_thread(instrumentation_us, sink.url)
    extra = {name: dict(values) for name, values in CONFIGS.items()}
    extra["traces"]["OTEL_EXPORTER_OTLP_ENDPOINT"] = sink.url
    try:
        async with AsyncExitStack() as stack:
            servers = {
                name: await stack.enter_async_context(serving(_env(work / name, stub, **values), workers=1))
                for name, values in extra.items()
            }
            clients = {name: await stack.enter_async_context(Client(server.url)) for name, server in servers.items()}

            async def batch(name: str, tag: str, count: int) -> None:
                async def one(i: int) -> None:
                    args = {"thought": f"{QUESTION} ({tag} {i})", "thoughtNumber": 1, "totalThoughts": 1,
                            "nextThoughtNeeded": False, "sessionId": f"{tag}-{i}", "strategy": "double"}  # fmt: skip
                    result = await clients[name].call_tool("sequentialthinking", args)
                    assert not result.is_error, result

                for start in range(0, count, 5):  # 5 at a time: a server under some load, not one at a time
                    await asyncio.gather(*(one(i) for i in range(start, min(count, start + 5))))

            for name in servers:  # warm-up: agno, the SDK, the first connections
                await batch(name, "warm", 5)
            per: dict[str, list[float]] = {name: [] for name in servers}
            for r in range(rounds):
                order = list(servers)[r % 3 :] + list(servers)[: r % 3]  # rotated: no config always first
                for name in order:
                    pid = servers[name].pid
                    before = _cpu_s(pid)
                    await batch(name, f"r{r}", per_round)
                    per[name].append((_cpu_s(pid) - before) / per_round)
    finally:
        sink.close()
    off = statistics.median(per["off"])
    result: dict[str, Any] = {"thoughts_per_round": per_round, "rounds": rounds, "otlp_bytes": sink.received[0]}
    result["instrumentation_us_per_thought"] = micro
    result["instrumentation_pct_of_off"] = {
        k: round(v / (off * 1e6) * 100, 2) for k, v in micro.items() if not k.endswith("off")
    }
    for name, values in per.items():
        med = statistics.median(values)
        result[name] = {
            "cpu_ms_per_thought": round(med * 1000, 2),
            "overhead_pct": round((med / off - 1) * 100, 1) if name != "off" else 0.0,
            "rounds_ms": [round(v * 1000, 2) for v in values],
        }
    return result


# --- the instrumentation alone, in process ---------------------------------------------------------------------


def instrumentation_us(sink_url: str, thoughts: int = 2000) -> dict[str, float]:
    """CPU microseconds that one double thought's recording costs, measured in this process without the rest of
    the thought: what metrics record (1 thought, 3 model calls, tokens, 2 store transactions, a session) and what
    tracing records (the thought's span, 3 model-call spans, 2 store spans, exported to `sink_url` by the batch
    thread, whose CPU time.process_time() includes)."""
    import time

    from thinking_hats.config import Settings
    from thinking_hats.ops.metrics import Metrics, PrometheusMetrics
    from thinking_hats.ops.telemetry import OtelTracer, Tracer

    def metrics_of(m: Metrics) -> None:
        for role in ("factual", "critical", "synthesis"):
            m.model_call("openai", role, "ok", 0.2)
        m.store("sqlite", "read", 0.0004, False)
        m.store("sqlite", "commit", 0.0009, False)
        m.session_started("sequentialthinking")
        m.tokens("alice", 900, 300, 0)
        m.thought("sequentialthinking", "double", "augmented", 0.45)

    def spans_of(t: Tracer) -> None:
        with t.span("sequentialthinking", {"thinking_hats.tool": "sequentialthinking"}) as thought:
            with t.store_span("sqlite", "read"):
                pass
            for role in ("factual", "critical", "synthesis"):
                with t.span("chat stub-model", {"gen_ai.operation.name": "chat", "gen_ai.agent.name": role}) as c:
                    c.set("gen_ai.usage.input_tokens", 300)
                    c.set("gen_ai.usage.output_tokens", 100)
            with t.store_span("sqlite", "commit"):
                pass
            for key, value in (("thinking_hats.strategy", "double"), ("thinking_hats.score", 52.0)):
                thought.set(key, value)

    def cost(body: Any, target: Any) -> float:
        started = time.process_time()
        for _ in range(thoughts):
            body(target)
        return (time.process_time() - started) / thoughts * 1e6

    found = {"metrics off": cost(metrics_of, Metrics()), "metrics (one process)": cost(metrics_of, PrometheusMetrics())}
    with tempfile.TemporaryDirectory() as directory:
        found["metrics (--workers files)"] = cost(metrics_of, PrometheusMetrics(Path(directory)))
    os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
    found["traces off"] = cost(spans_of, Tracer())
    tracer = OtelTracer(Settings(), f"{sink_url}/v1/traces")
    started = time.process_time()
    for n in range(thoughts):
        spans_of(tracer)
        if n % 200 == 199:  # within the batch queue (2,048 spans): every span is exported, none dropped
            tracer._provider.force_flush()
    tracer.shutdown()  # the export of every span is part of the cost
    found["traces (spans + export)"] = (time.process_time() - started) / thoughts * 1e6
    return {k: round(v, 1) for k, v in found.items()}


# --- store round trips ---------------------------------------------------------------------------------------


class _Counted:
    """A store backend whose transactions and statements are counted."""

    def __init__(self, backend: Any) -> None:
        self.inner = backend
        self.name, self.location, self.lock = backend.name, backend.location, backend.lock
        self.transactions = 0
        self.statements = 0

    @asynccontextmanager
    async def transaction(self, write: bool) -> AsyncIterator[Any]:
        self.transactions += 1
        counter = self

        class Tx:
            def __init__(self, tx: Any) -> None:
                self.tx = tx

            async def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
                counter.statements += 1
                return list(await self.tx.rows(sql, params))

            async def run(self, sql: str, params: Sequence[Any] = ()) -> int:
                counter.statements += 1
                return int(await self.tx.run(sql, params))

            async def many(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
                counter.statements += 1
                await self.tx.many(sql, params)

        async with self.inner.transaction(write) as tx:
            yield Tx(tx)

    async def close(self) -> None:
        await self.inner.close()

    async def check(self) -> dict[str, Any]:
        return dict(await self.inner.check())


async def round_trips(work: Path, thoughts: int = 20) -> dict[str, Any]:
    from thinking_hats.analysis import Analysis, Outcome, Usage
    from thinking_hats.config import Settings
    from thinking_hats.ops.limits import Limit, Limits
    from thinking_hats.ops.thought_log import Trace
    from thinking_hats.store import Caller, Store, open_store
    from thinking_hats.tools.thoughts import Thinking, ThoughtInput

    class Fixed:
        async def analyse(self, ctx: Any, strategy: str, progress: Any) -> Outcome:
            return Outcome(Analysis(strategy="single", synthesis="ok"), Usage(llm_calls=1, input_tokens=9))

    cases = {
        "named session": (Caller("bob", "c1"), True),
        "connection's default session": (Caller("bob", "c1"), False),
        "new stateless chain": (Caller("bob", None), False),
    }
    found: dict[str, Any] = {}
    for case, (caller, named) in cases.items():
        found[case] = {}
        for label, limits in (("limits off", Limits(Limit())), ("limits on", Limits(Limit(10**9, 10**6)))):
            opened = await open_store(None, work / f"trips-{len(found)}-{label}.sqlite3")
            counted = _Counted(opened.backend)
            settings = Settings(disable_thought_logging=True)
            thinking = Thinking(settings, Store(counted), Trace(settings), Fixed(), limits=limits)
            for n in range(1, thoughts + 1):
                number = 1 if caller.connection is None else n  # a stateless chain: every call starts one
                inp = ThoughtInput(thought=f"t{n}", thought_number=number, total_thoughts=thoughts,
                                   next_thought_needed=True, session_id="s" if named else None)  # fmt: skip
                await thinking.think(inp, caller)
            await counted.close()
            found[case][label] = {
                "transactions_per_thought": round(counted.transactions / thoughts, 2),
                "statements_per_thought": round(counted.statements / thoughts, 2),
            }
    return found


# --- run.py's measurement ------------------------------------------------------------------------------------


async def bench_observability(ctx: Any) -> dict[str, Any]:
    smoke = ctx.plan.runs == 1
    cpu = await cpu_per_thought(ctx.stub, ctx.work / "observability", ctx.plan.runs * 3, 2 if smoke else 30)
    return {"cpu": cpu, "round_trips": await round_trips(ctx.work, 4 if smoke else 20)}


def rows_observability(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    cpu = result["cpu"]
    rows = [
        (
            "observability: server CPU per double thought (3 model calls)",
            f"off {cpu['off']['cpu_ms_per_thought']} ms; metrics {cpu['metrics']['cpu_ms_per_thought']} ms "
            f"({cpu['metrics']['overhead_pct']:+} %); traces {cpu['traces']['cpu_ms_per_thought']} ms "
            f"({cpu['traces']['overhead_pct']:+} %)",
            "metrics <= +3 %, traces <= +10 %",
        ),
        (
            "observability: the recording alone, per double thought",
            "; ".join(
                f"{k} {v} µs ({cpu['instrumentation_pct_of_off'][k]} % of off)"
                for k, v in cpu["instrumentation_us_per_thought"].items()
                if k in cpu["instrumentation_pct_of_off"]
            ),
            "metrics <= 3 %, traces <= 10 %",
        ),
    ]
    for case, by in result["round_trips"].items():
        off, on = by["limits off"], by["limits on"]
        rows.append(
            (
                f"limit check: store round trips per thought ({case})",
                f"off {off['transactions_per_thought']} tx / {off['statements_per_thought']} statements; "
                f"on {on['transactions_per_thought']} tx / {on['statements_per_thought']} statements",
                "no more with limits on",
            )
        )
    return rows


async def _main(smoke: bool) -> dict[str, Any]:
    class Plan:
        runs = 1 if smoke else 5

    with tempfile.TemporaryDirectory(prefix="th-obs-") as tmp:
        async with StubLLM(latency=0.02 if smoke else 0.2) as stub:

            class Ctx:
                plan, work = Plan, Path(tmp)

            Ctx.stub = stub  # type: ignore[attr-defined]
            return await bench_observability(Ctx)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny counts: a check that it runs")
    found = asyncio.run(_main(parser.parse_args().smoke))
    print(json.dumps(found, indent=2))
    for row in rows_observability(found):
        print(" | ".join(row))
