"""The body of one worker process of tests/test_limits_multiprocess.py: its own store and `Thinking` core, a fake
augmenter of fixed cost, and several thoughts in flight at once, all for one principal.

A module of its own so that a spawned worker imports only the core, not the MCP stack the tests also use.
"""

from __future__ import annotations

import asyncio
import traceback
from typing import Any

from thinking_hats.analysis import Analysis, Outcome, ProgressFn, ThoughtContext, Usage
from thinking_hats.config import Settings
from thinking_hats.ops.ledger import current_ledger
from thinking_hats.ops.limits import Hold, Limit, Limits
from thinking_hats.ops.thought_log import Trace
from thinking_hats.store import Caller, open_store
from thinking_hats.tools.thoughts import Thinking, ThoughtInput

PRINCIPAL = "bob"
COST = Usage(llm_calls=1, input_tokens=60, output_tokens=40)  # 100 tokens a thought
ESTIMATE = Hold(tokens=130, calls=1)  # its worst case, as the orchestrator would estimate it: from above


class FixedCost:
    """An augmenter whose every analysis costs COST, reserved and charged as the real one does (through the
    thought's ledger); it yields to the loop as a model call would."""

    def __init__(self) -> None:
        self.paid = 0

    async def analyse(self, ctx: ThoughtContext, strategy: str, progress: ProgressFn | None) -> Outcome:
        ledger = current_ledger.get()
        assert ledger is not None
        await ledger.reserve(ESTIMATE)
        self.paid += 1
        for _ in range(3):
            await asyncio.sleep(0)
        ledger.spent(COST.llm_calls, COST.input_tokens, COST.output_tokens, 0)
        return Outcome(analysis=Analysis(strategy="single", synthesis="ok"), usage=COST)


async def _hammer(url: str, index: int, lanes: int, per_lane: int, tokens_per_day: int, barrier: Any) -> dict[str, int]:
    settings = Settings(thinking_store=url, disable_thought_logging=True)
    store = await open_store(url)
    augmenter = FixedCost()
    thinking = Thinking(
        settings, store, Trace(settings), augmenter, limits=Limits(Limit(tokens_per_day=tokens_per_day))
    )
    counts = {"augmented": 0, "refused": 0}

    async def lane(n: int) -> None:
        for k in range(per_lane):
            inp = ThoughtInput(
                thought=f"worker {index} lane {n} thought {k}",
                thought_number=1,
                total_thoughts=1,
                next_thought_needed=False,
                session_id=f"w{index}-{n}-{k}",
                strategy="single",
            )
            result = await thinking.think(inp, Caller(PRINCIPAL, None))
            counts["refused" if result.reply.limit_reached else "augmented"] += 1

    try:
        await asyncio.to_thread(barrier.wait)  # every process is ready: they start hammering together
        async with asyncio.TaskGroup() as group:
            for n in range(lanes):
                group.create_task(lane(n))
    finally:
        await store.close()
    return counts | {"paid": augmenter.paid}


def hammer(url: str, index: int, lanes: int, per_lane: int, tokens_per_day: int, barrier: Any, results: Any) -> None:
    try:
        results.put((index, asyncio.run(_hammer(url, index, lanes, per_lane, tokens_per_day, barrier)), None))
    except BaseException:
        barrier.abort()
        results.put((index, {}, traceback.format_exc()))
