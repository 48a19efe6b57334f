"""What a thought reserves against its principal's limits before its first model call, computed as the server
does, so that a test can set a limit with room for exactly the thoughts it means to let through."""

from __future__ import annotations

from thinking_hats.analysis import ThoughtContext
from thinking_hats.config import Settings
from thinking_hats.hats.augmenter import build_augmenter
from thinking_hats.routing.router import route


async def worst_case(settings: Settings, text: str, strategy: str = "single") -> int:
    """The tokens a first thought of `text` reserves (its worst case) under `settings`' provider and prompts."""
    augmenter, problem = build_augmenter(settings, all_agents=False)
    assert augmenter is not None, problem
    try:
        ctx = ThoughtContext(thought=text, thought_number=1, total_thoughts=5)
        orchestrator = await augmenter.orchestrator()
        return orchestrator.estimate(ctx, route(ctx, settings.thinking_escalation, strategy)).tokens
    finally:
        await augmenter.aclose()
