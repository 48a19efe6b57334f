"""What the web view costs: a session of 1,000 thoughts opening, and the list of 10,000 sessions paging.

A SQLite store in a temporary directory gets one session of 1,000 augmented thoughts (each with three hats'
views and a synthesis, as the server stores them, revisions and branches among them) and 10,000 sessions of one
thought each, all of one principal. The web view's ASGI app (the same one the HTTP transport mounts at /ui/) then
answers, in process, with the server-side rendering and chain drawing included:

- the session page of the 1,000-thought session (goal: under 1 s), and its first event-stream poll;
- the first page of the 10,000 sessions, and the 200th (keyset pagination: goal, as fast as the first).

Each is timed `--repeat` times; the table shows min / median / max and the JSON keeps them.

    .venv/bin/python benchmarks/web_view.py [--smoke] [--output benchmarks/web_view_results.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from thinking_hats.serving.gate import Principals  # noqa: E402
from thinking_hats.serving.ui import WebView  # noqa: E402
from thinking_hats.store import LOCAL, Store, Write, open_store  # noqa: E402

WORDS = [
    "the",
    "cache",
    "index",
    "query",
    "latency",
    "page",
    "report",
    "column",
    "user",
    "data",
    "risk",
    "plan",
    "option",
    "cost",
]


def text(n: int, length: int) -> str:
    return " ".join(WORDS[(n * 7 + i) % len(WORDS)] for i in range(length // 6))


def reply(n: int) -> dict[str, Any]:
    hats = [
        {"hat": hat, "status": "ok", "ms": 600 + n % 50, "tokens": 240, "output": text(n + i, 400)}
        for i, hat in enumerate(("factual", "critical", "optimistic"))
    ]
    hats.append({"hat": "synthesis", "status": "ok", "ms": 650, "tokens": 300, "output": text(n, 600)})
    analysis = {
        "strategy": "triple",
        "complexity": {"score": 62.5, "factors": [{"name": "length", "points": 20.0, "detail": "long"}]},
        "hats": hats,
        "synthesis": text(n, 600),
        "problems": [],
    }
    usage = {"llmCalls": 4, "inputTokens": 2400, "outputTokens": 300, "cachedInputTokens": 0}
    return {
        "reply": {"mode": "augmented", "analysis": analysis, "usage": usage, "thoughtNumber": n},
        "markdown": "",
        "is_error": False,
    }


async def fill(store: Store, thoughts: int, sessions: int) -> None:
    for n in range(1, thoughts + 1):
        data: dict[str, Any] = {"thought": text(n, 300), "total_thoughts": thoughts}
        branch = None
        if n % 50 == 0:
            data |= {"is_revision": True, "revises_thought": n - 1}
        if n % 120 == 0:
            branch = f"b{n}"
            data |= {"branch_from_thought": n - 2, "branch_id": branch}
        await store.commit(
            Write(LOCAL, "long", "sequentialthinking", n, branch, data, existed=n > 1), lambda c, b, n=n: reply(n)
        )
    now = time.time()
    async with store.backend.transaction(write=True) as tx:
        await tx.many(
            "INSERT INTO sessions(principal, id, tool, created, updated, meta) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (LOCAL, f"s{i:05d}", "sequentialthinking", now - i, now - i,
                 json.dumps({"usage": {"llmCalls": 4}, "strategies": ["triple"], "entries": 1, "branches": []}))
                for i in range(sessions)
            ],
        )  # fmt: skip
        await tx.many(
            "INSERT INTO entries(principal, session_id, seq, number, branch_id, created, data, reply)"
            " VALUES (?, ?, 1, 1, NULL, ?, ?, ?)",
            [
                (LOCAL, f"s{i:05d}", now - i, json.dumps({"thought": text(i, 200)}), json.dumps(reply(i)))
                for i in range(sessions)
            ],
        )


async def get(view: WebView, path: str, query: str = "", first_event: bool = False) -> tuple[float, int, int]:
    """(seconds, status, bytes) of one GET answered by the view; `first_event`: until the first event arrives."""
    sent: list[dict[str, Any]] = []
    done = asyncio.Event()
    leave = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await leave.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        body = message.get("body", b"")
        if not message.get("more_body", False) and message["type"] == "http.response.body":
            done.set()
        if first_event and b"event: " in body:
            done.set()

    scope = {"type": "http", "method": "GET", "path": path, "query_string": query.encode(), "headers": []}
    started = time.perf_counter()
    task = asyncio.ensure_future(view(scope, receive, send))
    await done.wait()
    elapsed = time.perf_counter() - started
    leave.set()
    await task
    size = sum(len(m.get("body", b"")) for m in sent if m["type"] == "http.response.body")
    return elapsed, int(sent[0]["status"]), size


def spread(values: list[float]) -> list[float]:
    return [round(min(values) * 1000, 1), round(statistics.median(values) * 1000, 1), round(max(values) * 1000, 1)]


async def run(smoke: bool, repeat: int) -> dict[str, Any]:
    thoughts, sessions = (50, 300) if smoke else (1000, 10_000)
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(None, Path(tmp) / "sessions.sqlite3")
        try:
            started = time.perf_counter()
            await fill(store, thoughts, sessions)
            filled = time.perf_counter() - started
            view = WebView(lambda: store, lambda: Principals({}, open=True))
            await get(view, "/ui/s/long")  # templates compiled once, as on a running server
            timings: dict[str, list[float]] = {"session": [], "events": [], "list_first": [], "list_deep": []}
            sizes: dict[str, int] = {}
            cursor = ""
            for _ in range(repeat):
                seconds, status, size = await get(view, "/ui/s/long")
                assert status == 200
                timings["session"].append(seconds)
                sizes["session"] = size
                seconds, status, _ = await get(view, "/ui/s/long/events", "after=0", first_event=True)
                assert status == 200
                timings["events"].append(seconds)
                seconds, status, size = await get(view, "/ui/")
                timings["list_first"].append(seconds)
                sizes["list"] = size
            # Walk to the 200th page of 50 (or the last one) by following each page's "Older" link.
            pages = 1
            page = ""
            while pages < min(200, (sessions + thoughts) // 50):
                found = await store.page(LOCAL, 51, _cursor(cursor))
                last = found[49][0]
                cursor = f"{last.updated!r}:{last.id}"
                pages += 1
                page = cursor
            for _ in range(repeat):
                seconds, status, _ = await get(view, "/ui/", f"before={page}")
                assert status == 200
                timings["list_deep"].append(seconds)
        finally:
            await store.close()
    return {
        "thoughts": thoughts,
        "sessions": sessions + 1,
        "deep_page": pages,
        "fill_s": round(filled, 1),
        "session_page_kib": round(sizes["session"] / 1024),
        "list_page_kib": round(sizes["list"] / 1024, 1),
        **{f"{name}_ms": spread(values) for name, values in timings.items()},
    }


def _cursor(text: str) -> tuple[float, str] | None:
    if not text:
        return None
    at, _, last = text.partition(":")
    return float(at), last


def table(found: dict[str, Any]) -> str:
    rows = [
        (f"session page, {found['thoughts']:,} thoughts ({found['session_page_kib']} KiB)", found["session_ms"]),
        ("its event stream, first event (every thought)", found["events_ms"]),
        (f"sessions list, page 1 of {found['sessions']:,}", found["list_first_ms"]),
        (f"sessions list, page {found['deep_page']}", found["list_deep_ms"]),
    ]
    lines = ["| web view (SQLite, in process) | min / median / max ms |", "|---|---|"]
    lines += [f"| {name} | {' / '.join(str(v) for v in values)} |" for name, values in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny counts: a check that it runs")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--output", type=Path, help="write the JSON here")
    args = parser.parse_args()
    found = asyncio.run(run(args.smoke, 2 if args.smoke else args.repeat))
    print(table(found))
    text_out = json.dumps(found, indent=2)
    if args.output is not None:
        args.output.write_text(text_out + "\n")
    print(text_out)


if __name__ == "__main__":
    main()
