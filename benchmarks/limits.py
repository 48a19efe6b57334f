"""Limits as caps (issue 24): how far a principal's spend goes past its limits with 4 clients on 2 replicas of
`serve --transport http --workers 2` sharing one PostgreSQL, against the stub model.

    .venv/bin/python benchmarks/limits.py            # about a minute: table on stdout, JSON in benchmarks/.cache/
    .venv/bin/python benchmarks/limits.py --smoke    # fewer thoughts: checks the harness runs
    .venv/bin/python benchmarks/limits.py --output results.json

Runs:
1. tokens per day: a limit of 5,000 tokens (the issue's run spent 25,848 against it), then one of 40,000; every
   client sends double thoughts back to back until it has sent its share; spent = input + output tokens in the
   store's usage row.
2. calls per minute: a limit of 30 (the issue's run let 114 through); triple thoughts (4 calls each), the whole
   run inside one minute of the database's clock.

For each: what was spent against the limit, the overshoot, the thoughts admitted and refused, and the estimate
error (what the admitted thoughts reserved against what they spent). The clients are deploy.py's raw stateless
JSON-RPC connections, all as the loopback principal `local`. The benchmark reports; it does not assert.
"""

from __future__ import annotations

import asyncio
import os
import platform
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

from benchmarks.deploy import Connection, command, server_env, serving, stub_model, thought  # noqa: E402

DEFAULT_OUTPUT = HERE / ".cache" / "limits.json"
REPLICAS, WORKERS, CLIENTS = 2, 2, 4


@dataclass(frozen=True)
class Plan:
    latency: float
    thoughts_per_client: int


FULL = Plan(latency=0.05, thoughts_per_client=12)
SMOKE = Plan(latency=0.01, thoughts_per_client=4)


async def database_second(url: str) -> float:
    from thinking_hats.store import open_store

    store = await open_store(url)
    try:
        async with store.backend.transaction(write=False) as tx:
            return (await tx.now()) % 60
    finally:
        await store.close()


async def usage(url: str) -> dict[str, int]:
    from thinking_hats.store import open_store

    store = await open_store(url)
    try:
        [row] = await store.usage("local")
        async with store.backend.transaction(write=False) as tx:
            held = int((await tx.rows("SELECT count(*) FROM reservations"))[0][0])
    finally:
        await store.close()
    return {"tokens": row.input_tokens + row.output_tokens, "calls": row.calls, "thoughts": row.thoughts,
            "refusals": row.refusals, "reservations_left": held}  # fmt: skip


async def run(
    plan: Plan, model_url: str, store_url: str, work: Path, name: str, strategy: str, **limit: str
) -> dict[str, Any]:
    env = server_env(work / name, model_url, THINKING_STORE=store_url, **limit)
    async with serving(env, WORKERS) as one, serving(env, WORKERS) as two:
        conns = [await Connection(server.url).__aenter__() for server in (one, two, one, two)]  # 2 clients each
        admitted: list[dict[str, int]] = []
        refused = 0
        worst: list[int] = []  # what a refused thought said it could need: its reservation, its worst case
        try:
            if "THINKING_PRINCIPAL_CALLS_PER_MINUTE" in limit:
                second = await database_second(store_url)
                if second > 5:  # the whole run inside one minute of the database's clock
                    await asyncio.sleep(60.5 - second)
            started = time.perf_counter()

            async def client(conn: Connection, index: int) -> None:
                nonlocal refused
                for n in range(plan.thoughts_per_client):
                    result = await conn.call("sequentialthinking", thought(f"{name}-{index}-{n}", 1, 1, strategy))
                    reply = result["structuredContent"]
                    if reply.get("limitReached"):
                        refused += 1
                        found = re.search(r"could need ([\d,]+) more", reply.get("notice") or "")
                        if found:
                            worst.append(int(found.group(1).replace(",", "")))
                    else:
                        admitted.append(reply["usage"])

            await asyncio.gather(*(client(c, i) for i, c in enumerate(conns)))
            wall = time.perf_counter() - started
        finally:
            for conn in conns:
                await conn.__aexit__()
    await asyncio.sleep(0)
    spent = await usage(store_url)
    kind, allowed = next(iter(limit.items()))
    measure = "tokens" if kind.endswith("TOKENS_PER_DAY") else "calls"
    return {
        "limit": kind,
        "allowed": int(allowed),
        "strategy": strategy,
        "replicas": REPLICAS,
        "workers": WORKERS,
        "clients": CLIENTS,
        "thoughts_sent": CLIENTS * plan.thoughts_per_client,
        "admitted": len(admitted),
        "refused": refused,
        "spent": spent[measure],
        "overshoot": max(0, spent[measure] - int(allowed)),
        "overshoot_pct": round(max(0, spent[measure] - int(allowed)) / int(allowed) * 100, 1),
        "tokens": spent["tokens"],
        "calls": spent["calls"],
        "reservations_left": spent["reservations_left"],
        "worst_case_per_thought": max(worst) if worst else None,
        "spent_per_admitted_thought": round(spent[measure] / len(admitted), 1) if admitted else None,
        "wall_s": round(wall, 2),
    }


async def main_async(plan: Plan, smoke: bool) -> dict[str, Any]:
    from pg import PostgresCluster

    results: dict[str, Any] = {
        "mode": "smoke" if smoke else "full",
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
    }
    cluster = await asyncio.to_thread(PostgresCluster.launch)
    try:
        with tempfile.TemporaryDirectory(prefix="thinking-hats-limits-") as tmp:
            async with stub_model(plan.latency) as (model_url, _):
                results["runs"] = [
                    await run(plan, model_url, cluster.create_database("tokens"), Path(tmp), "tokens", "double",
                              THINKING_PRINCIPAL_TOKENS_PER_DAY="5000"),
                    await run(plan, model_url, cluster.create_database("tokens"), Path(tmp), "tokens-40k", "double",
                              THINKING_PRINCIPAL_TOKENS_PER_DAY="40000"),
                    await run(plan, model_url, cluster.create_database("calls"), Path(tmp), "calls", "triple",
                              THINKING_PRINCIPAL_CALLS_PER_MINUTE="30"),
                ]  # fmt: skip
    finally:
        cluster.stop()
    return results


def table(results: dict[str, Any]) -> str:
    lines = [
        "| Limit | Allowed | Spent | Overshoot | Thoughts admitted / refused | Reserved / spent per thought "
        "| Reservations left |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results["runs"]:
        unit = "tokens" if r["limit"].endswith("TOKENS_PER_DAY") else "calls"
        lines.append(
            f"| `{r['limit']}` ({r['strategy']}, {r['clients']} clients x {r['workers']} workers x {r['replicas']} "
            f"replicas) | {r['allowed']:,} {unit} | {r['spent']:,} | **{r['overshoot']:,}** ({r['overshoot_pct']} %) "
            f"| {r['admitted']} / {r['refused']} | {r['worst_case_per_thought']} / {r['spent_per_admitted_thought']} "
            f"| {r['reservations_left']} |"
        )
    return "\n".join(lines)


def main() -> int:
    return command(__doc__, lambda smoke: main_async(SMOKE if smoke else FULL, smoke), table, DEFAULT_OUTPUT)


if __name__ == "__main__":
    sys.exit(main())
