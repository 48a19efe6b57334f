"""A limit holds as a cap across processes: four OS processes hammer one principal on one PostgreSQL database,
several thoughts in flight in each, each reserving its worst case before its model call, and the principal's
tokens never go past the daily limit; every paid call is counted, and every thought, refused or not, is
recorded."""

from __future__ import annotations

import asyncio
import multiprocessing
import queue
from pathlib import Path

from limits_worker import COST, ESTIMATE, PRINCIPAL, hammer
from thinking_hats.store import open_store

PROCESSES, LANES, PER_LANE = 4, 4, 15  # 240 thoughts, at most 16 in flight at once
LIMIT = 5_000  # tokens: 50 thoughts of 100
DEADLINE = 120.0


def test_four_processes_never_take_a_principal_past_its_token_limit(
    postgres_url: str,
) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES, timeout=DEADLINE)
    results = ctx.Queue()
    processes = [
        ctx.Process(target=hammer, args=(postgres_url, i, LANES, PER_LANE, LIMIT, barrier, results))
        for i in range(PROCESSES)
    ]
    for p in processes:
        p.start()
    counts: list[dict[str, int]] = []
    failures: list[str] = []
    try:
        for _ in processes:
            try:
                _, done, failure = results.get(timeout=DEADLINE)
            except queue.Empty:
                failures.append(f"a worker sent nothing within {DEADLINE} s")
                break
            counts.append(done)
            if failure:
                failures.append(failure)
    finally:
        for p in processes:
            p.join(timeout=DEADLINE)
            if p.is_alive():
                p.kill()
                p.join()
    assert not failures, "\n".join(failures)

    async def usage() -> list[object]:
        store = await open_store(postgres_url)
        try:
            return list(await store.usage(PRINCIPAL))
        finally:
            await store.close()

    [row] = asyncio.run(usage())
    admitted = sum(c["augmented"] for c in counts)
    refused = sum(c["refused"] for c in counts)
    paid = sum(c["paid"] for c in counts)
    per_thought = COST.input_tokens + COST.output_tokens
    tokens = row.input_tokens + row.output_tokens  # type: ignore[attr-defined]
    in_flight = PROCESSES * LANES
    assert admitted + refused == PROCESSES * LANES * PER_LANE == row.thoughts  # type: ignore[attr-defined]
    assert refused == row.refusals > 0  # type: ignore[attr-defined]
    assert paid == admitted == row.calls  # type: ignore[attr-defined]  # every paid call counted
    assert tokens == admitted * per_thought
    # Each admitted thought reserved its worst case first, against what was spent and what the others held: the
    # limit is a cap (before reservations: up to the thoughts in flight over it). Refusals came only when what
    # was spent and held left no room for one more worst case.
    assert tokens <= LIMIT, f"{tokens} tokens against a limit of {LIMIT}"
    assert tokens > LIMIT - in_flight * ESTIMATE.tokens

    async def held() -> int:
        store = await open_store(postgres_url)
        try:
            async with store.backend.transaction(write=False) as tx:
                return int((await tx.rows("SELECT count(*) FROM reservations"))[0][0])
        finally:
            await store.close()

    assert asyncio.run(held()) == 0  # every reservation was given back as its thought ended
    print(f"limit {LIMIT}, spent {tokens} ({admitted} thoughts admitted, {refused} refused)")


async def test_four_clients_on_two_replicas_of_two_workers_never_take_a_principal_past_its_limit(
    postgres_url: str, tmp_path: Path
) -> None:
    """The real service: two replicas of `serve --transport http --workers 2` on one PostgreSQL, the stub model
    server, 4 clients (two on each replica) sending double thoughts against a daily limit of 12,000 tokens."""
    from benchmarks.deploy import stub_model
    from benchmarks.limits import SMOKE, run

    async with stub_model(SMOKE.latency) as (model_url, _):
        result = await run(SMOKE, model_url, postgres_url, tmp_path, "tokens", "double",
                           THINKING_PRINCIPAL_TOKENS_PER_DAY="12000")  # fmt: skip

    assert result["admitted"] >= 2 and result["refused"] >= 1  # the limit was reached, by more than one thought
    assert result["spent"] <= 12_000 and result["overshoot"] == 0  # before: 25,848 tokens against 5,000
    assert result["reservations_left"] == 0
