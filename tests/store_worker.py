"""The body of one worker process of tests/test_multiprocess.py: it opens its own Store and races the others.

A module of its own so that a spawned worker imports only the store, not the MCP stack the tests also use.
"""

from __future__ import annotations

import asyncio
import traceback
from pathlib import Path
from typing import Any

from thinking_hats.store import Write, open_store

TOOL = "sequentialthinking"
Location = tuple[str | None, Path | None]  # open_store's arguments
Acknowledged = tuple[str, str, int, bool]  # (session, thought, seq, replayed) as the store answered the worker


def _reply(count: int, branches: tuple[str, ...]) -> dict[str, Any]:
    return {"reply": {"count": count}, "is_error": False}


async def _race(location: Location, index: int, rounds: int, appends: int, barrier: Any) -> list[Acknowledged]:
    wait = barrier.wait  # a multiprocessing barrier blocks: waited for off the event loop

    store = await open_store(*location)
    done: list[Acknowledged] = []
    try:
        await asyncio.to_thread(wait)  # every process has its store open
        for r in range(rounds):
            await asyncio.to_thread(wait)  # ... and all send the first thought of session new-r at once
            text = f"worker {index} starts new-{r}"
            c = await store.commit(Write("local", f"new-{r}", TOOL, 1, None, {"thought": text}), _reply)
            done.append((f"new-{r}", text, c.entry.seq, c.replayed))
        await asyncio.to_thread(wait)
        for k in range(appends):
            text = f"worker {index} thought {k}"
            c = await store.commit(Write("local", "shared", TOOL, k + 1, None, {"thought": text}), _reply)
            done.append(("shared", text, c.entry.seq, c.replayed))
    finally:
        await store.close()
    return done


def race(location: Location, index: int, rounds: int, appends: int, barrier: Any, results: Any) -> None:
    """A spawned process's target: its own interpreter, event loop and database connection."""
    try:
        results.put((index, asyncio.run(_race(location, index, rounds, appends, barrier)), None))
    except BaseException:
        barrier.abort()  # the others stop waiting for this one
        results.put((index, [], traceback.format_exc()))
