"""The web view in a real browser: Playwright driving Debian's chromium against the real server (a subprocess on
streamable HTTP, THINKING_UI=true), thoughts sent by a real MCP client over HTTP, the model a stub server.

Screenshots for docs/ui.md are taken here: set UI_SCREENSHOTS=docs/assets to refresh the committed ones.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from http_peer import HttpServer, http_server, stop
from stdio_peer import server_env

if os.environ.get("CI") == "true":  # the dev extra installs playwright: in CI these tests never skip
    import playwright.async_api as playwright_api
else:
    playwright_api = pytest.importorskip("playwright.async_api")

CHROMIUM = Path("/usr/bin/chromium")
ALICE = "alice-token-7f3a9c2e1b5d"
BOB = "bob-token-4d8e6f0a2c9e1f"
CAROL = "carol-token-0b1c2d3e4f5a"
TOKENS = f"alice {ALICE} operator\nbob {BOB}\n"
HOSTILE = (
    '<script>window.pwned = 1</script></textarea><img src=x onerror="window.pwned = 2">\n'
    "**bold** [a](javascript:alert(1)) ![x](http://tracker.example/p.png)\n"
    '```mermaid\ngraph TD; A["x"] --> B\nclick A call alert(1)\n```'
)
SHOTS = Path(os.environ["UI_SCREENSHOTS"]).resolve() if os.environ.get("UI_SCREENSHOTS") else None

if not CHROMIUM.exists():
    if os.environ.get("CI") == "true":
        raise RuntimeError("chromium is missing at /usr/bin/chromium: .ci/run installs it (apt-get install chromium)")
    pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)


def thought(text: str, number: int, session: str, **extra: Any) -> dict[str, Any]:
    return {"thought": text, "thoughtNumber": number, "totalThoughts": 4, "nextThoughtNeeded": True,
            "sessionId": session, **extra}  # fmt: skip


@asynccontextmanager
async def mcp_client(url: str, token: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,  # type: ignore[arg-type]
    ):
        yield client


async def send(url: str, token: str, *calls: dict[str, Any]) -> None:
    async with mcp_client(url, token) as client:
        for arguments in calls:
            result = await client.call_tool("sequentialthinking", arguments)
            assert not result.is_error, result.content


@pytest.fixture(scope="module")
def stub_model() -> Iterator[str]:
    """The stub model server (its own process: each test has its own event loop), 0.6 s per call, so a thought
    in flight stays in flight long enough to be watched."""
    command = [sys.executable, "benchmarks/stub_llm.py", "--latency", "0.6"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parent.parent)
    assert process.stdout is not None
    base_url = process.stdout.readline().strip()
    try:
        assert base_url.startswith("http://"), "the stub model server did not start"
        yield base_url
    finally:
        stop(process)
        process.stdout.close()


def view_env(root: Path, stub: str, tokens: str) -> dict[str, str]:
    (root / "tokens").write_text(tokens)
    return server_env(root / "data", THINKING_UI="true", THINKING_HTTP_TOKENS_FILE=str(root / "tokens"),
                      LLM_PROVIDER="openai-compatible", LLM_BASE_URL=stub, LLM_MODEL="stub-model",
                      AGNO_TELEMETRY="false")  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, stub_model: str) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("web-view")
    # Two workers: the page's event stream and the MCP client's calls land on either, and the store joins them.
    with http_server(view_env(root, stub_model, TOKENS), "--workers", "2") as running:
        asyncio.run(
            send(
                running.url, ALICE,
                thought("Restate the problem: the report page is slow.", 1, "alice-plan", strategy="double"),
                thought("Option A: cache the rendered page.", 2, "alice-plan", strategy="single"),
                thought("A is unsafe: the page shows live data.", 3, "alice-plan", isRevision=True,
                        revisesThought=2, strategy="single"),
                thought("Option B: index the column the query sorts on.", 2, "alice-plan", branchFromThought=1,
                        branchId="index", strategy="triple"),
                thought(HOSTILE, 1, "alice-hostile", strategy="none"),
            )
        )  # fmt: skip
        asyncio.run(send(running.url, BOB, thought("Bob's private plan.", 1, "bob-secret", strategy="none")))
        yield running


def base_of(server: HttpServer) -> str:
    return server.url.removesuffix("/mcp")


class Console:
    """Every console error and uncaught page error of a browser context: each page must have none."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def watch(self, page: Any) -> None:
        page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        page.on("pageerror", lambda error: self.errors.append(str(error)))


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    async with playwright_api.async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield launched
        finally:
            await launched.close()


@asynccontextmanager
async def signed_in(browser: Any, base: str, token: str, console: Console) -> AsyncIterator[Any]:
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    console.watch(page)
    try:
        await page.goto(f"{base}/ui/")
        assert page.url == f"{base}/ui/login"  # not signed in: sent to sign in
        await page.fill("#token", token)
        await page.click("button[type=submit]")
        await page.wait_for_url(f"{base}/ui/")
        yield page
    finally:
        await context.close()


async def shot(page: Any, name: str) -> None:
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SHOTS / f"ui-{name}.png"), full_page=False)


async def test_signing_in_with_a_token_lists_the_principals_sessions_and_not_anothers(
    server: HttpServer, browser: Any
) -> None:
    console = Console()
    async with signed_in(browser, base_of(server), ALICE, console) as page:
        listed = await page.locator("table.sessions tbody td:first-child").all_inner_texts()
        assert set(listed) == {"alice-plan", "alice-hostile"}
        assert "Bob's private plan" not in await page.content()
        row = page.locator("tr", has=page.locator("a", has_text="alice-plan"))
        assert "double, single, triple" in await row.inner_text()
        cookie = next(c for c in await page.context.cookies() if c["name"] == "thinking_hats_ui")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["expires"] > 0
        await shot(page, "sessions")
    assert console.errors == []


async def test_a_wrong_token_is_refused_at_sign_in(server: HttpServer, browser: Any) -> None:
    console = Console()
    context = await browser.new_context()
    page = await context.new_page()
    console.watch(page)
    base = base_of(server)
    await page.goto(f"{base}/ui/login")
    await page.fill("#token", ALICE + "x")
    async with page.expect_response(f"{base}/ui/login") as answer:
        await page.click("button[type=submit]")
    assert (await answer.value).status == 401
    assert "not one this server accepts" in await page.inner_text(".problem")
    assert await context.cookies() == []
    await context.close()
    # the 401 of the refused sign-in is the one console message
    assert [e for e in console.errors if "401" not in e] == []


async def test_another_principals_session_is_a_404_that_reveals_nothing(server: HttpServer, browser: Any) -> None:
    console = Console()
    base = base_of(server)
    async with signed_in(browser, base, ALICE, console) as page:
        theirs = await page.goto(f"{base}/ui/s/bob-secret")
        theirs_text = await page.content()
        nobodys = await page.goto(f"{base}/ui/s/no-such-session")
        assert theirs is not None and nobodys is not None
        assert theirs.status == nobodys.status == 404
        assert theirs_text.replace("bob-secret", "X") == (await page.content()).replace("no-such-session", "X")
        assert "Bob" not in theirs_text
        events = await page.context.request.get(f"{base}/ui/s/bob-secret/events")
        assert events.status == 404
        usage = await page.goto(f"{base}/ui/usage")
        assert usage is not None and usage.status == 200  # alice is an operator
    # the two 404 pages are the only console messages
    assert [e for e in console.errors if "404" not in e] == []
    async with signed_in(browser, base, BOB, Console()) as page:
        usage = await page.goto(f"{base}/ui/usage")
        assert usage is not None and usage.status == 404  # bob is not
        assert await page.locator("a[href='/ui/usage']").count() == 0


async def test_a_session_with_a_revision_and_a_branch_draws_both(server: HttpServer, browser: Any) -> None:
    console = Console()
    base = base_of(server)
    async with signed_in(browser, base, ALICE, console) as page:
        await page.goto(f"{base}/ui/s/alice-plan")
        chain = page.locator("#chain svg.chain")
        assert await chain.locator("a.node").count() == 4
        assert await chain.locator("path.edge.revision").count() == 1
        assert await chain.locator("path.edge.branch").count() == 1
        assert await chain.locator("path.edge.next").count() == 2
        labels = await chain.locator("a.node text").all_text_contents()
        assert labels == ["#1 double", "#2 single", "#3 single", "#2 triple"]
        assert await page.locator("#t3 .tag.revision").inner_text() == "revises #2"
        assert await page.locator("#t4 .tag.branch").inner_text() == "branch index from #1"
        assert await page.locator("#t1 details.hat").count() == 2  # double: two hats, no synthesis
        await shot(page, "session")
        await page.goto(f"{base}/ui/usage")
        assert await page.locator("svg.usage-chart rect").count() >= 1
        assert "alice" in await page.locator("table.usage").first.inner_text()
        await shot(page, "usage")
    assert console.errors == []


async def test_a_thought_sent_while_the_page_is_open_appears_live_with_each_hats_progress(
    server: HttpServer, browser: Any
) -> None:
    console = Console()
    base = base_of(server)
    await send(server.url, ALICE, thought("Start a live session.", 1, "alice-live", strategy="none"))
    async with signed_in(browser, base, ALICE, console) as page:
        await page.goto(f"{base}/ui/s/alice-live")
        await page.locator("#live").wait_for(state="visible")
        assert await page.locator("#thoughts article").count() == 1
        text = "Thought two, sent while the page is open."
        # full: five hats in parallel (0.6 s each), then the synthesis (0.6 s): progress shows before it lands
        sending = asyncio.ensure_future(send(server.url, ALICE, thought(text, 2, "alice-live", strategy="full")))
        await page.locator("#progress li").first.wait_for(state="visible", timeout=15_000)
        assert "hat" in await page.locator("#progress").inner_text()
        await shot(page, "live")
        await sending
        card = page.locator("#t2 pre.text")
        await card.wait_for(state="visible", timeout=5_000)
        assert await card.inner_text() == text
        assert await page.locator("#t2 details.hat").count() == 5
        assert await page.locator("#chain a.node").count() == 2
        assert await page.locator("#count").inner_text() == "2"
        await page.locator("#progress").wait_for(state="hidden", timeout=5_000)
        # a hostile thought arriving live is as inert as one on the page at load
        await send(server.url, ALICE, thought(HOSTILE, 3, "alice-live", strategy="none"))
        await page.locator("#t3 pre.text").wait_for(state="visible", timeout=5_000)
        assert await page.locator("#t3 pre.text").inner_text() == HOSTILE
        assert await page.evaluate("window.pwned") is None
    assert console.errors == []


async def test_a_hostile_thought_renders_as_inert_text_and_the_csp_forbids_inline_script(
    server: HttpServer, browser: Any
) -> None:
    console = Console()
    base = base_of(server)
    async with signed_in(browser, base, ALICE, console) as page:
        response = await page.goto(f"{base}/ui/s/alice-hostile")
        assert response is not None
        policy = response.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "default-src 'none'" in policy
        assert await page.locator("#t1 pre.text").inner_text() == HOSTILE
        assert await page.evaluate("window.pwned") is None
        scripts = await page.eval_on_selector_all("script", "all => all.map(s => s.getAttribute('src'))")
        assert scripts == ["/ui/static/ui.js"]
        assert await page.locator("#thoughts a, #thoughts img, #thoughts strong").count() == 0
        assert "<script>window.pwned" not in await page.inner_html("#thoughts")
        assert console.errors == []
        # The policy itself: an inline script put on the page is refused by the browser.
        await page.evaluate(
            "() => { const s = document.createElement('script'); s.textContent = 'window.pwned = 3';"
            " document.body.appendChild(s); }"
        )
        assert await page.evaluate("window.pwned") is None
    assert len(console.errors) == 1 and "Content Security Policy" in console.errors[0]


async def test_a_revoked_tokens_cookie_stops_working_after_sighup(
    tmp_path: Path, stub_model: str, browser: Any
) -> None:
    console = Console()
    env = view_env(tmp_path, stub_model, f"alice {ALICE}\ncarol {CAROL}\n")
    with http_server(env) as running:
        base = base_of(running)
        await send(running.url, CAROL, thought("Carol's plan.", 1, "carol-plan", strategy="none"))
        async with signed_in(browser, base, CAROL, console) as page:
            await page.goto(f"{base}/ui/s/carol-plan")
            await page.locator("#live").wait_for(state="visible")
            (tmp_path / "tokens").write_text(f"alice {ALICE}\n")  # carol's token is revoked
            os.kill(running.process.pid, signal.SIGHUP)
            # The open page's stream ends (the cookie no longer verifies), and every page asks to sign in again.
            await page.locator("#progress", has_text="Signed out").wait_for(state="visible", timeout=10_000)
            await page.goto(f"{base}/ui/")
            assert page.url == f"{base}/ui/login"
            answer = await page.context.request.get(f"{base}/ui/s/carol-plan", max_redirects=0)
            assert answer.status == 303 and answer.headers["location"] == "/ui/login"
    assert console.errors == []


def test_the_sign_in_form_refuses_a_post_from_another_site(server: HttpServer) -> None:
    base = base_of(server)
    for origin in ("http://evil.example", "null", ""):
        headers = {"origin": origin} if origin else {}
        answer = httpx2.post(f"{base}/ui/login", data={"token": ALICE}, headers=headers, follow_redirects=False)
        assert answer.status_code == 403 and "set-cookie" not in answer.headers
    same = httpx2.post(f"{base}/ui/login", data={"token": ALICE}, headers={"origin": base}, follow_redirects=False)
    assert same.status_code == 303 and re.search(r"HttpOnly; SameSite=Strict$", same.headers["set-cookie"])
