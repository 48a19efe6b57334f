"""`thinking-hats think`: one thought from the terminal, with a live line per hat as it finishes."""

from __future__ import annotations

import json
import sys

from .augmenter import build_augmenter
from .config import Settings
from .store import LOCAL, Caller, open_store
from .thoughts import Thinking, ThoughtInput
from .trace import Trace


async def think(settings: Settings, thought: str, strategy: str | None, session: str | None, as_json: bool) -> int:
    from rich.console import Console
    from rich.live import Live
    from rich.spinner import Spinner
    from rich.table import Table

    err = Console(stderr=True)
    store = await open_store(settings.postgres_url(), settings.database_path())
    augmenter, problem = build_augmenter(settings)
    if problem:
        err.print(f"[yellow]model augmentation is off:[/] {problem}")
    thinking = Thinking(
        settings,
        store,
        Trace(settings.model_copy(update={"disable_thought_logging": True})),
        augmenter,
        problem,
    )
    finished: list[str] = []
    state = {"total": 0, "over": False}

    def view() -> Table:
        table = Table.grid(padding=(0, 1))
        for line in finished:
            mark = "[green]✓[/]" if " done " in line else "[red]✗[/]"
            table.add_row(mark, line)
        if not state["over"]:
            remaining = int(state["total"]) - len(finished)
            table.add_row(Spinner("dots"), f"thinking… {remaining} to go" if remaining > 0 else "thinking…")
        return table

    try:
        with Live(view(), console=err, refresh_per_second=12, transient=False) as live:

            async def progress(done: int, total: int, message: str) -> None:
                state["total"] = total
                finished.append(f"[{done}/{total}] {message}")
                live.update(view())

            # In a named session the thought continues the chain; otherwise it starts a new one.
            last = (await store.read(LOCAL, "sequentialthinking", session)).last if session else None
            number = last.number + 1 if last is not None else 1
            inp = ThoughtInput(
                thought=thought,
                thought_number=number,
                total_thoughts=number,
                next_thought_needed=False,
                session_id=session,
                strategy=strategy,
            )
            result = await thinking.think(inp, Caller(LOCAL, "cli"), progress=progress)
            state["over"] = True
            live.update(view())
    finally:
        if augmenter is not None:
            await augmenter.aclose()
        await store.close()
    if as_json:
        sys.stdout.write(json.dumps(result.reply.model_dump(mode="json"), indent=2) + "\n")
    else:
        sys.stdout.write(result.markdown + "\n")
    return 1 if result.is_error else 0
