"""The bridge from the thinking tools to the multi-agent core: route locally, then run the chosen hats.

The orchestrator (agno + the provider SDKs) costs seconds to import, so it is built lazily: a background task
warms it right after start-up, and the first thought awaits that task instead of building its own.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from ..analysis import Outcome, ProgressFn, ThoughtContext
from ..config import Settings

if TYPE_CHECKING:
    from .orchestrator import Orchestrator
    from .prompts import Prompts
    from .providers import ResolvedProvider

log = logging.getLogger("thinking_hats")


class Augmentation:
    def __init__(
        self, settings: Settings, provider: ResolvedProvider, prompts: Prompts, *, all_agents: bool = True
    ) -> None:
        self.settings = settings
        self.all_agents = all_agents  # False: agents are built as their roles are first called (one-shot use)
        self.provider = provider
        self.prompts = prompts
        self._escalation = settings.thinking_escalation
        self._ready: asyncio.Task[Orchestrator] | None = None
        # A running thought holds a lane: its calls use that lane's connections (providers.current_lane), kept
        # alive for the next thought in it. The last lane freed is the first taken again, so after a quiet spell
        # thoughts find the connections that are still open.
        self._slots = asyncio.Semaphore(settings.thinking_concurrent_thoughts)
        self._lanes = list(range(settings.thinking_concurrent_thoughts))

    def start(self) -> None:
        """Begin building the orchestrator in the background (call from inside the event loop)."""
        if self._ready is None:
            self._ready = asyncio.create_task(self._build(), name="thinking-hats-warmup")

    async def _build(self) -> Orchestrator:
        # Imports of agno and the SDKs are CPU-bound and slow; a thread keeps the loop answering meanwhile.
        def load() -> Orchestrator:
            from ..analysis import ROLES
            from .orchestrator import Orchestrator

            return Orchestrator(self.settings, self.provider, self.prompts, ROLES if self.all_agents else ())

        return await asyncio.to_thread(load)

    async def orchestrator(self) -> Orchestrator:
        self.start()
        assert self._ready is not None
        return await asyncio.shield(self._ready)

    async def analyse(self, ctx: ThoughtContext, strategy: str, progress: ProgressFn | None) -> Outcome:
        from ..routing.router import route

        chosen = route(ctx, self._escalation, strategy)
        orchestrator = await self.orchestrator()
        from ..ops.ledger import current_ledger
        from .providers import current_lane

        ledger = current_ledger.get()
        if ledger is not None:  # before the first call: a thought whose worst case does not fit makes none
            await ledger.reserve(orchestrator.estimate(ctx, chosen))

        async with self._slots:
            lane = self._lanes.pop()
            token = current_lane.set(lane)
            try:
                return await orchestrator.analyse(ctx, chosen, progress)
            finally:
                current_lane.reset(token)
                self._lanes.append(lane)

    async def aclose(self) -> None:
        if self._ready is None:
            return
        if not self._ready.done():
            self._ready.cancel()
        try:
            orchestrator = await self._ready
        except (asyncio.CancelledError, Exception):  # a failed warm-up has nothing to close
            return
        await orchestrator.aclose()


def build_augmenter(settings: Settings, *, all_agents: bool = True) -> tuple[Augmentation | None, str | None]:
    """(augmenter, None) when a provider is configured; (None, fix) when it is selected but misconfigured.

    Misconfigured means a provider that cannot work or a prompt that cannot render (an override using an
    unknown `{{ variable }}`, say): either would fail every thought, so augmentation stays off, the thoughts are
    recorded as in record-only mode, and the fix is shown at start-up and in each reply.
    """
    if settings.llm_provider is None:
        return None, None
    from .prompts import PromptError, Prompts
    from .providers import ProviderConfigError, resolve_provider

    try:
        provider = resolve_provider(settings)
    except ProviderConfigError as exc:
        return None, str(exc)
    if provider is None:
        return None, None
    try:
        prompts = Prompts.from_settings(settings).validate()
    except PromptError as exc:
        return None, str(exc)
    return Augmentation(settings, provider, prompts, all_agents=all_agents), None
