"""Per-principal limits and usage: over a limit a thought is still recorded, with a record-only reply naming the
limit, what was used and when it resets; every model call a principal causes is counted, racing duplicates
included; `thinking-hats usage` reports it per principal and day."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from budget import worst_case
from calls import read_json, step, text_of
from fakes import FakeLLM, Hold
from thinking_hats.cli.main import main
from thinking_hats.config import Settings
from thinking_hats.errors import ConfigurationError
from thinking_hats.ops.limits import Limit, Limits, Spent
from thinking_hats.server import build_server
from thinking_hats.store import LOCAL, open_store

TOOL = "sequentialthinking"


def thought(text: str, number: int = 1, session: str = "s", **extra: Any) -> dict[str, Any]:
    return {
        "thought": text,
        "thoughtNumber": number,
        "totalThoughts": 5,
        "nextThoughtNeeded": True,
        "sessionId": session,
        "strategy": "single",
        **extra,
    }


async def until(condition: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


async def until_async(read: Any, condition: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition(await read()):
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


def settings_for(llm: FakeLLM, tmp_path: Path, **overrides: Any) -> Settings:
    return llm.settings(thinking_data_dir=tmp_path, **overrides)


async def usage_rows(settings: Settings) -> list[Any]:
    store = await open_store(settings.postgres_url(), settings.database_path())
    try:
        return await store.usage()
    finally:
        await store.close()


async def test_over_the_daily_token_limit_a_thought_is_recorded_with_a_notice_naming_the_limit_and_its_reset(
    openai_llm: FakeLLM, tmp_path: Path
) -> None:
    text = "What does the outage report say about the root cause?"
    # Room for the first thought's worst case, not for a second one on top of what the first spent.
    allowed = await worst_case(settings_for(openai_llm, tmp_path), text)
    settings = settings_for(openai_llm, tmp_path, thinking_principal_tokens_per_day=allowed)
    async with Client(build_server(settings)) as client:
        first = await client.call_tool(TOOL, thought(text))
        second = await client.call_tool(TOOL, thought("Which of the two fixes is cheaper to roll back?", 2))
        session = await read_json(client, "thinking://sessions/s")

    assert len(openai_llm.history) == 1  # the second thought called no model
    spent = first.structured_content["usage"]
    used = spent["inputTokens"] + spent["outputTokens"]
    assert 0 < used <= allowed
    reply = second.structured_content
    assert reply["mode"] == "record-only" and second.is_error is False
    midnight = (int(time.time()) // 86400 + 1) * 86400
    assert reply["limitReached"]["limit"] == "THINKING_PRINCIPAL_TOKENS_PER_DAY"
    assert reply["limitReached"]["used"] == used and reply["limitReached"]["allowed"] == allowed
    assert reply["limitReached"]["resetsAt"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(midnight))
    assert 0 < reply["limitReached"]["retryAfter"] <= 86400
    notice = reply["notice"]
    assert "THINKING_PRINCIPAL_TOKENS_PER_DAY" in notice and f"{used:,} of {allowed:,} tokens today" in notice
    assert "this thought could need" in notice
    assert "resets at" in notice and "retry after" in notice
    assert notice in text_of(second)
    assert [e["number"] for e in session["entries"]] == [1, 2]  # refused, yet recorded
    [row] = await usage_rows(settings)
    assert (row.principal, row.thoughts, row.refusals, row.calls) == (LOCAL, 2, 1, 1)
    assert row.input_tokens + row.output_tokens == used


async def test_over_the_calls_per_minute_limit_the_reply_says_when_to_retry(
    openai_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = settings_for(openai_llm, tmp_path, thinking_principal_calls_per_minute=3)
    async with Client(build_server(settings)) as client:
        first = await client.call_tool(TOOL, thought("Weigh the offer against building it.", strategy="double"))
        second = await client.call_tool(TOOL, thought("And the cost of waiting a quarter?", 2))

    assert first.structured_content["usage"]["llmCalls"] == 3
    refused = second.structured_content["limitReached"]
    assert refused["limit"] == "THINKING_PRINCIPAL_CALLS_PER_MINUTE" and refused["used"] == 3
    assert 1 <= refused["retryAfter"] <= 60
    assert "3 of 3 model calls this minute" in second.structured_content["notice"]
    assert len(openai_llm.history) == 3


def test_a_rate_limit_resets_with_the_minute_and_a_token_limit_with_the_utc_day() -> None:
    limits = Limits(Limit(tokens_per_day=100, calls_per_minute=5))
    now = 1_800_000_000.0  # a Wednesday, 08:00:00 UTC
    minute, day = int(now // 60), int(now // 86400)
    assert limits.check("bob", Spent(day, 50, minute, 5), now) is not None
    assert limits.check("bob", Spent(day, 50, minute - 1, 5), now) is None  # last minute's calls
    refusal = limits.check("bob", Spent(day, 100, minute, 0), now)
    assert refusal is not None and refusal.retry_after == 16 * 3600
    assert limits.check("bob", Spent(day - 1, 100, minute, 0), now) is None  # yesterday's tokens


def test_the_limits_file_overrides_the_defaults_per_principal(tmp_path: Path) -> None:
    path = tmp_path / "limits"
    path.write_text(
        "# who       limits\n"
        "alice tokens_per_day=none calls_per_minute=100\n"
        "local calls_per_minute=2   # the terminal user\n\n",
        encoding="utf-8",
    )
    limits = Limits.from_settings(
        Settings(
            thinking_principal_tokens_per_day=1000,
            thinking_principal_calls_per_minute=10,
            thinking_principal_limits_file=path,
        )
    )
    assert limits.of("alice") == Limit(None, 100)
    assert limits.of(LOCAL) == Limit(1000, 2)
    assert limits.of("bob") == Limit(1000, 10)
    assert Limits.from_settings(Settings()).active is False


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("alice tokens=5\n", "line 1: unknown setting 'tokens'"),
        ("alice tokens_per_day=lots\n", "tokens_per_day='lots': give a whole number"),
        ("alice tokens_per_day=0\n", "give a whole number of at least 1"),
        ("alice tokens_per_day=\u00b2\n", "line 1: tokens_per_day='\u00b2': give a whole number"),  # isdigit() took it
        ("alice\nalice calls_per_minute=3\n", "line 2: 'alice' is listed twice"),
        ("al!ce tokens_per_day=3\n", "line 1: 'al!ce' is not a principal name"),
    ],
)
def test_a_bad_limits_file_is_refused_with_the_line_and_the_fix(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "limits"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigurationError, match="THINKING_PRINCIPAL_LIMITS_FILE") as raised:
        Limits.from_settings(Settings(thinking_principal_limits_file=path))
    assert says in str(raised.value)


def test_a_limits_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "limits"
    path.write_bytes(b"alice tokens_per_day=\xff\n")
    with pytest.raises(ConfigurationError, match="not UTF-8"):
        Limits.from_settings(Settings(thinking_principal_limits_file=path))


def test_reloading_the_limits_file_applies_its_new_lines_and_a_broken_one_keeps_the_limits_in_force(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "limits"
    path.write_text("alice calls_per_minute=5\n", encoding="utf-8")
    limits = Limits.from_settings(Settings(thinking_principal_limits_file=path))
    path.write_text("alice calls_per_minute=none\nbob tokens_per_day=7\n", encoding="utf-8")
    limits.reload()
    assert (limits.of("alice"), limits.of("bob")) == (Limit(), Limit(7, None))

    path.write_text("bob tokens_per_day=seven\n", encoding="utf-8")
    limits.reload()
    assert limits.of("bob") == Limit(7, None)  # the table in force, not a lifted limit
    assert "limits not reloaded" in caplog.text and "give a whole number" in caplog.text


def test_a_limits_file_naming_no_principal_of_the_server_is_refused_with_the_likely_name(tmp_path: Path) -> None:
    path = tmp_path / "limits"
    path.write_text("alice tokens_per_day=9\nalcie calls_per_minute=3\n", encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        Limits.from_settings(Settings(thinking_principal_limits_file=path), {"alice", "bob", LOCAL})
    message = str(raised.value)
    assert "line 2: 'alcie' is no principal of this server" in message and "did you mean 'alice'?" in message


def test_on_reload_a_limits_file_naming_an_unknown_principal_keeps_the_limits_in_force(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "limits"
    path.write_text("alice tokens_per_day=9\n", encoding="utf-8")
    limits = Limits.from_settings(Settings(thinking_principal_limits_file=path), {"alice", LOCAL})
    path.write_text("alcie tokens_per_day=none\n", encoding="utf-8")
    limits.reload({"alice", LOCAL})
    assert limits.of("alice") == Limit(9, None)
    assert "limits not reloaded" in caplog.text and "'alcie' is no principal" in caplog.text


async def test_a_server_told_to_reload_checks_the_next_thought_against_the_edited_limits_file(
    openai_llm: FakeLLM, tmp_path: Path
) -> None:
    path = tmp_path / "limits"
    path.write_text(f"{LOCAL} calls_per_minute=1\n", encoding="utf-8")
    server = build_server(settings_for(openai_llm, tmp_path, thinking_principal_limits_file=path))
    async with Client(server) as client:
        first = await client.call_tool(TOOL, thought("What does the outage report say about the root cause?"))
        refused = await client.call_tool(TOOL, thought("Which of the two fixes is cheaper to roll back?", 2))
        path.write_text(f"{LOCAL} tokens_per_day=none\n", encoding="utf-8")
        server.reload()
        lifted = await client.call_tool(TOOL, thought("So roll back the retry change first?", 3))

    assert first.structured_content["mode"] != "record-only"
    assert refused.structured_content["limitReached"]["allowed"] == 1
    assert lifted.structured_content["limitReached"] is None and lifted.structured_content["mode"] != "record-only"
    assert len(openai_llm.history) == 2


async def test_identical_racing_calls_in_one_process_pay_for_one_model_call_and_it_is_counted(
    openai_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = settings_for(openai_llm, tmp_path)
    hold = Hold()
    openai_llm.enqueue("*", hold)
    call = thought("Should the migration run before or after the freeze?", session="race")
    server = build_server(settings)
    async with Client(server) as client:
        first = asyncio.ensure_future(client.call_tool(TOOL, call))
        await hold.all_arrived.wait()
        others = [asyncio.ensure_future(client.call_tool(TOOL, call)) for _ in range(15)]
        [in_flight] = server.core._app.thinking._inflight.values()  # type: ignore[union-attr]
        await until(lambda: in_flight.waiting == 15)  # all 15 wait for the first, during its model call
        hold.release()
        results = [await first, *[await o for o in others]]

    assert len(openai_llm.history) == 1  # before: 16 identical racing calls made 17 model requests
    paid = [r for r in results if not r.structured_content["replayed"]]
    assert len(paid) == 1
    assert all(r.structured_content["usage"]["llmCalls"] == 0 for r in results if r is not paid[0])
    [row] = await usage_rows(settings)
    assert row.calls == 1 and row.thoughts == 1


async def test_identical_calls_racing_on_two_processes_are_each_counted(openai_llm: FakeLLM, tmp_path: Path) -> None:
    """Two servers (as two workers) over one store: both pay for the model, and the store counts both."""
    settings = settings_for(openai_llm, tmp_path)
    hold = Hold(expected=2)
    openai_llm.enqueue("*", hold, hold)
    call = thought("Is the new index worth its write cost?", session="twice")
    async with Client(build_server(settings)) as one, Client(build_server(settings)) as two:
        calls = [asyncio.ensure_future(c.call_tool(TOOL, call)) for c in (one, two)]
        await hold.all_arrived.wait()
        hold.release()
        replies = [(await c).structured_content for c in calls]

    assert len(openai_llm.history) == 2
    assert sorted(r["replayed"] for r in replies) == [False, True]
    [row] = await usage_rows(settings)
    assert row.calls == 2 and row.thoughts == 1  # one thought, two paid calls (before: one counted)


async def test_a_crash_review_is_limited_and_counted_like_a_thought(openai_llm: FakeLLM, tmp_path: Path) -> None:
    settings = settings_for(openai_llm, tmp_path, thinking_principal_calls_per_minute=3)
    async with Client(build_server(settings)) as client:
        reviewed = await client.call_tool("crash", step(1, confidence=0.3, session_id="c"))
        refused = await client.call_tool("crash", step(2, confidence=0.3, session_id="c"))

    assert json.loads(text_of(reviewed)).get("review")
    second = json.loads(text_of(refused))
    assert "review" not in second and "THINKING_PRINCIPAL_CALLS_PER_MINUTE" in second["warning"]
    assert second["total_steps"] == 2  # recorded all the same
    [row] = await usage_rows(settings)
    # the review is routed (issue 17): a low-confidence doubt is two hats and their synthesis, 3 calls
    assert (row.calls, row.thoughts, row.refusals) == (3, 2, 1)


async def test_usage_prints_each_principal_and_day_as_a_table_or_json(
    openai_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = settings_for(openai_llm, tmp_path)
    async with Client(build_server(settings)) as client:
        await client.call_tool(TOOL, thought("Where does the latency come from?"))
        await client.call_tool(TOOL, thought("Is it the cache?", 2))
    monkeypatch.setenv("THINKING_DATA_DIR", str(tmp_path))
    today = time.strftime("%Y-%m-%d", time.gmtime())

    assert await asyncio.to_thread(main, ["usage"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["DAY", "PRINCIPAL", "INPUT", "OUTPUT", "CACHED", "CALLS", "THOUGHTS", "REFUSALS"]
    assert table[1].split()[:2] == [today, LOCAL] and table[1].split()[-3:] == ["2", "2", "0"]

    assert await asyncio.to_thread(main, ["usage", "--json", "--principal", LOCAL, "--days", "1"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["day"] == today and row["calls"] == 2 and row["thoughts"] == 2 and row["input_tokens"] > 0

    assert await asyncio.to_thread(main, ["usage", "--json", "--principal", "nobody"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert await asyncio.to_thread(main, ["usage", "--until", "2000-01-01"]) == 0
    assert capsys.readouterr().out == "no usage recorded\n"
    with pytest.raises(SystemExit):
        main(["usage", "--since", "yesterday"])
    assert "takes a day as YYYY-MM-DD" in capsys.readouterr().err


async def test_when_the_first_of_identical_racing_calls_fails_one_waiter_takes_over_and_the_rest_wait_for_it(
    tmp_path: Path,
) -> None:
    from thinking_hats.analysis import Analysis, Outcome, Usage
    from thinking_hats.ops.thought_log import Trace
    from thinking_hats.store import Caller
    from thinking_hats.tools.thoughts import Thinking, ThoughtInput

    class Flaky:
        def __init__(self) -> None:
            self.calls = 0
            self.gate = asyncio.Event()

        async def analyse(self, ctx: Any, strategy: str, progress: Any) -> Outcome:
            self.calls += 1
            if self.calls == 1:
                await self.gate.wait()
                raise RuntimeError("the first call breaks")
            await asyncio.sleep(0)  # a model call suspends: the other waiters run meanwhile
            return Outcome(Analysis(strategy="single", synthesis="ok"), Usage(llm_calls=1, input_tokens=5))

    settings = Settings(thinking_data_dir=tmp_path, disable_thought_logging=True)
    store = await open_store(None, tmp_path / "s.sqlite3")
    augmenter = Flaky()
    thinking = Thinking(settings, store, Trace(settings), augmenter)
    inp = ThoughtInput(thought="same", thought_number=1, total_thoughts=1, next_thought_needed=False, session_id="x")
    try:
        first = asyncio.ensure_future(thinking.think(inp, Caller("bob", None)))
        await until(lambda: augmenter.calls == 1)
        waiters = [asyncio.ensure_future(thinking.think(inp, Caller("bob", None))) for _ in range(3)]
        [in_flight] = thinking._inflight.values()
        await until(lambda: in_flight.waiting == 3)
        augmenter.gate.set()
        with pytest.raises(RuntimeError):
            await first
        results = [await w for w in waiters]
    finally:
        await store.close()
    assert augmenter.calls == 2  # the failed first, then one waiter; the other two got its reply
    assert sorted(r.replayed for r in results) == [False, True, True]


async def test_a_thought_abandoned_mid_model_call_still_counts_its_calls_against_the_limit(
    openai_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = settings_for(
        openai_llm, tmp_path, thinking_principal_calls_per_minute=2, thinking_synthesis="merge"
    )  # double, merged in code: its two hats' calls are all it may make
    hold = Hold(expected=2)
    openai_llm.enqueue("*", hold, hold)
    async with Client(build_server(settings)) as client:
        call = asyncio.create_task(client.call_tool(TOOL, thought("Split the team or the service?", strategy="double")))
        await hold.all_arrived.wait()
        call.cancel()  # the client gives up while both hats are thinking
        with contextlib.suppress(asyncio.CancelledError):
            await call
        await until(lambda: hold.cancelled == 2)
        settings_store = await open_store(settings.postgres_url(), settings.database_path())
        try:
            await until_async(lambda: settings_store.usage(), lambda rows: bool(rows) and rows[0].calls == 2)
        finally:
            await settings_store.close()
        after = await client.call_tool(TOOL, thought("Then what?", 2, session="other"))

    # Nothing was recorded of the abandoned thought, but its two calls count: the next thought is over the limit.
    assert after.structured_content["limitReached"]["limit"] == "THINKING_PRINCIPAL_CALLS_PER_MINUTE"
    [row] = await usage_rows(settings)
    assert (row.calls, row.thoughts, row.refusals) == (2, 1, 1)


async def test_a_retry_that_would_pass_the_limit_is_not_made(openai_llm: FakeLLM, tmp_path: Path) -> None:
    text = "Is the queue or the consumer the bottleneck?"
    allowed = await worst_case(settings_for(openai_llm, tmp_path), text)  # room for the thought, not a retry too
    settings = settings_for(openai_llm, tmp_path, thinking_principal_tokens_per_day=allowed)
    openai_llm.enqueue("*", 503)
    async with Client(build_server(settings)) as client:
        failed = await client.call_tool(TOOL, thought(text))

    assert len(openai_llm.history) == 1  # before: the 503 was retried past the limit
    [problem] = failed.structured_content["analysis"]["problems"]
    assert "not retried: THINKING_PRINCIPAL_TOKENS_PER_DAY would be passed" in problem
    [row] = await usage_rows(settings)
    assert row.input_tokens + row.output_tokens <= allowed
