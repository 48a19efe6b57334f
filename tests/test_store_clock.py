"""Limits count the store's minutes and days, not a replica's: under PostgreSQL the database's clock decides, so a
replica whose clock runs ahead neither starts a new minute early (before: one replica 30 s ahead let 360 calls
through a limit of 30 a minute) nor books its charges into a minute the others do not count."""

from __future__ import annotations

import asyncio
import time

import pytest

from thinking_hats.ops.limits import Hold, Limit, Refusal
from thinking_hats.store import Charge, Store, open_store


async def store_now(store: Store) -> float:
    async with store.backend.transaction(write=False) as tx:
        return await tx.now()


async def test_a_replica_whose_clock_runs_a_minute_ahead_is_held_to_the_stores_minute(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await open_store(postgres_url)
    try:
        second = (await store_now(store)) % 60
        if second > 45:  # room for the test inside one of the store's minutes
            await asyncio.sleep(61 - second)
        real = time.time
        monkeypatch.setattr(time, "time", lambda: real() + 60)  # this replica is a minute ahead
        await store.charge("bob", Charge(calls=2, input_tokens=10))
        refused = await store.reserve("bob", Limit(calls_per_minute=2), Hold(10, 1), 60)
        monkeypatch.setattr(time, "time", real)
        also_refused = await store.reserve("bob", Limit(calls_per_minute=2), Hold(10, 1), 60)
    finally:
        await store.close()

    assert isinstance(refused, Refusal) and refused.used == 2  # the same minute, by the store's clock
    assert isinstance(also_refused, Refusal)  # a replica on time sees the charge in its minute too
    assert 0 < refused.retry_after <= 60
