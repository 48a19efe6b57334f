"""`thinking-hats ui` and `thinking-hats sessions show ID --open`: the web view on 127.0.0.1 over the local store,
for the local principal, with the address printed (and no browser started where there is no display)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2

from http_peer import stop
from stdio_peer import server_env
from thinking_hats.config import Settings
from thinking_hats.store import LOCAL, Write, open_store


def record(data_dir: Path, principal: str, session: str, text: str) -> None:
    async def write() -> None:
        store = await open_store(None, Settings(thinking_data_dir=data_dir).database_path())
        try:
            await store.commit(
                Write(principal, session, "sequentialthinking", 1, None, {"thought": text, "total_thoughts": 1}),
                lambda count, branches: {"reply": {"mode": "record-only"}, "markdown": "", "is_error": False},
            )
        finally:
            await store.close()

    asyncio.run(write())


@contextmanager
def ui(data_dir: Path, *args: str) -> Iterator[str]:
    env = server_env(data_dir)
    env.pop("DISPLAY", None)  # no display: no browser may be started
    command = [sys.executable, "-m", "thinking_hats", *args]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    line = process.stdout.readline()
    try:
        assert line.startswith("thinking-hats ui: http://127.0.0.1:"), line + process.stderr.read()
        yield line.split()[2]
    finally:
        stop(process)
        process.stdout.close()
        process.stderr.close()


def test_thinking_hats_ui_serves_the_local_principals_sessions_on_loopback_and_prints_the_address(
    tmp_path: Path,
) -> None:
    record(tmp_path, LOCAL, "mine", "A local thought <b>not bold</b>.")
    record(tmp_path, "alice", "hers", "A thought of alice's.")
    with ui(tmp_path, "ui") as address:
        assert address.endswith("/ui/")
        page = httpx2.get(address)
        assert page.status_code == 200
        assert "mine" in page.text and "A local thought &lt;b&gt;not bold&lt;/b&gt;." in page.text
        assert "hers" not in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert httpx2.get(address.replace("/ui/", "/ui/usage")).status_code == 200  # the machine's owner


def test_sessions_show_open_serves_that_sessions_page(tmp_path: Path) -> None:
    record(tmp_path, LOCAL, "plan", "The plan's first thought.")
    with ui(tmp_path, "sessions", "show", "plan", "--open") as address:
        assert address.endswith("/ui/s/plan")
        page = httpx2.get(address)
        assert page.status_code == 200 and "The plan&#39;s first thought." in page.text
        assert 'class="node ok s-record"' in page.text
