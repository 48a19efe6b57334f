"""`thinking-hats think`: one thought from the terminal, with a live line per hat as it finishes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..analysis import Outcome, ProgressFn, ThoughtContext
from ..config import Settings
from ..hats.augmenter import build_augmenter
from ..ops import telemetry
from ..ops.ledger import drain
from ..ops.thought_log import Trace
from ..store import LOCAL, Caller, open_store
from ..terminal import json_text, printable
from ..tools.thoughts import Augmenter, Thinking, ThoughtInput

if TYPE_CHECKING:
    from ..routing.router import Route


class _Announced:
    """The augmenter, showing the route (strategy, score, hats) before the first model call: the router is
    local and instant, the hats take seconds, and until the first one finishes there is nothing else to see."""

    def __init__(self, inner: Augmenter, settings: Settings, show: Callable[[Route], None]) -> None:
        self.inner = inner
        self.settings = settings
        self.show = show

    async def analyse(self, ctx: ThoughtContext, strategy: str, progress: ProgressFn | None) -> Outcome:
        from ..routing.router import route

        # The same route the augmenter takes (deterministic, microseconds), as the orchestrator will run it.
        chosen = route(ctx, self.settings.thinking_escalation, strategy)
        self.show(chosen.with_synthesis(self.settings.thinking_synthesis))
        return await self.inner.analyse(ctx, strategy, progress)


def describe(chosen: Route) -> str:
    hats = ", ".join(chosen.hats)
    then = " + synthesis" if chosen.synthesis else (" merged" if len(chosen.hats) > 1 else "")
    count = f"{len(chosen.hats)} hat{'s' if len(chosen.hats) != 1 else ''}{then}"
    return f"{chosen.strategy} (score {chosen.score:g}): {count}: {hats}"


async def think(settings: Settings, thought: str, strategy: str | None, session: str | None, as_json: bool) -> int:
    """One thought from the terminal. On a terminal, stderr shows a live line per hat (rich); elsewhere (a pipe, a
    log file, CI) plain lines, each ending in a newline, and rich is never imported."""
    if settings.traces_endpoint:
        telemetry.install(telemetry.build_tracer(settings))
    store = await open_store(settings.postgres_url(), settings.database_path())
    augmenter, problem = build_augmenter(settings, all_agents=False)  # one thought: only its roles' agents
    screen = _Live() if sys.stderr.isatty() else _Lines()
    thinking = Thinking(
        settings,
        store,
        Trace(settings.model_copy(update={"disable_thought_logging": True})),
        _Announced(augmenter, settings, screen.route) if augmenter is not None else None,
        problem,
    )
    try:
        # Everything that can be refused is refused before the spinner starts, so an error stands on its own line.
        # In a named session the thought continues the chain; otherwise it starts a new one.
        inp = ThoughtInput(
            thought=thought,
            thought_number=1,
            total_thoughts=1,
            next_thought_needed=False,
            session_id=session,
            strategy=strategy,
        )
        thinking.check(inp)
        if augmenter is not None:
            # The input is good: load agno and the SDK in the warm-up thread now, while the store is read and the
            # thought routed, rather than after.
            augmenter.start()
        last = (await store.read(LOCAL, "sequentialthinking", session)).last if session else None
        if last is not None:
            inp = inp.model_copy(update={"thought_number": last.number + 1, "total_thoughts": last.number + 1})
        if problem:
            screen.warn(f"model augmentation is off: {printable(problem)}")
        with screen:
            # No connection: each `think` without --session starts its own session (never a replay of the last).
            result = await thinking.think(inp, Caller(LOCAL, None), progress=screen.progress)
    finally:
        if augmenter is not None:
            await augmenter.aclose()
        await drain()  # a thought stopped by Ctrl-C: the calls it made are charged before the store closes
        await store.close()
        telemetry.current().shutdown()  # sends the spans still queued
        telemetry.install(None)
    if as_json:
        sys.stdout.write(json_text(result.structured(), indent=2) + "\n")
    else:
        sys.stdout.write(printable(result.markdown) + "\n")
    # A provider that is chosen but cannot work fails like `doctor` does: recorded, but not what was asked for.
    return 1 if result.is_error or problem else 0


class _Lines:
    """Progress as plain lines on stderr, for a pipe or a log: one line per event, each ending in a newline."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None

    def route(self, chosen: Route) -> None:
        self._line(describe(chosen))

    def warn(self, text: str) -> None:
        self._line(text)

    async def progress(self, done: int, total: int, message: str) -> None:
        self._line(printable(f"[{done}/{total}] {message}", newlines=False))

    @staticmethod
    def _line(text: str) -> None:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


class _Live:
    """Progress on a terminal: the route in bold, a tick or cross per finished hat and a spinner until the end."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(stderr=True)
        self.total = 0
        self.over = False
        self.finished: list[str] = []
        self.live: Any = None

    def __enter__(self) -> None:
        from rich.live import Live

        self.live = Live(self._view(), console=self.console, refresh_per_second=12, transient=False)
        self.live.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.over = True
        self.live.update(self._view())
        self.live.__exit__(None, None, None)

    def route(self, chosen: Route) -> None:
        from rich.text import Text

        self.total = chosen.calls
        if self.live is not None:
            self.live.console.print(Text(describe(chosen), style="bold"))
            self.live.update(self._view())

    def warn(self, text: str) -> None:
        from rich.markup import escape

        self.console.print(f"[yellow]{escape(text)}[/]")

    async def progress(self, done: int, total: int, message: str) -> None:
        self.total = total
        self.finished.append(printable(f"[{done}/{total}] {message}", newlines=False))
        self.live.update(self._view())

    def _view(self) -> Any:
        from rich.spinner import Spinner
        from rich.table import Table
        from rich.text import Text

        table = Table.grid(padding=(0, 1))
        for line in self.finished:
            mark = "[green]✓[/]" if " done " in line else "[red]✗[/]"
            table.add_row(mark, Text(line))
        if not self.over:
            remaining = self.total - len(self.finished)
            table.add_row(Spinner("dots"), f"thinking… {remaining} to go" if remaining > 0 else "thinking…")
        return table
