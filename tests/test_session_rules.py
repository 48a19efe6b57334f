"""The rules of a session, through a real MCP client: a chain that needs more thoughts continues, a session
belongs to one tool, CRASH's documented openings and purposes pass strict mode, dependencies name earlier steps,
a completed CRASH session says so; and `thinking-hats think` applies the tools' own checks."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from calls import body, read_json, step, text_of
from fakes import FakeLLM
from thinking_hats.cli.main import main
from thinking_hats.config import Settings
from thinking_hats.server import build_server


def thought(text: str, number: int, total: int = 3, more: bool = True, **extra: Any) -> dict[str, Any]:
    return {"thought": text, "thoughtNumber": number, "totalThoughts": total, "nextThoughtNeeded": more, **extra}


def crash_error(result: Any, *fragments: str) -> None:
    assert result.is_error
    error = body(result)
    assert set(error) == {"error", "status", "hint"} and error["status"] == "failed"
    message = f"{error['error']} {error['hint']}"
    for fragment in fragments:
        assert fragment in message, message


# --- needsMoreThoughts ---


async def test_needs_more_thoughts_after_a_final_looking_thought_continues_in_the_reply_the_number_and_the_text() -> (
    None
):
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool(TOOL, thought("Done? Not yet.", 3, more=False, needsMoreThoughts=True))

    reply = result.structured_content
    assert reply is not None
    assert reply["nextThoughtNeeded"] is False  # echoed as sent
    assert reply["shouldContinue"] is True
    assert reply["nextThoughtNumber"] == 4
    assert "Continue with thought 4." in text_of(result) and "Chain complete" not in text_of(result)


async def test_a_final_thought_without_needs_more_thoughts_completes_the_chain_everywhere() -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool(TOOL, thought("The answer is B.", 3, more=False, needsMoreThoughts=False))

    reply = result.structured_content
    assert reply is not None
    assert (reply["shouldContinue"], reply["nextThoughtNumber"]) == (False, None)
    assert "Chain complete." in text_of(result)


# --- a session belongs to one tool ---

TOOL = "sequentialthinking"


@pytest.mark.parametrize(
    "call",
    [
        # The same number and text as the crash step: once a replay of it, which failed with KeyError: 'reply'.
        pytest.param(thought("Let me check the connection pool settings.", 1, sessionId="shared"), id="same-as-step"),
        pytest.param(thought("A new thought.", 2, sessionId="shared"), id="next-number"),
        pytest.param(thought("Revise it.", 2, sessionId="shared", isRevision=True, revisesThought=1), id="revision"),
    ],
)
async def test_sequentialthinking_refuses_a_crash_session_and_leaves_it_untouched(call: dict[str, Any]) -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool("crash", step(1, session_id="shared"))
        before = await read_json(client, "thinking://sessions/shared")
        refused = await client.call_tool(TOOL, call)
        after = await read_json(client, "thinking://sessions/shared")
        onward = await client.call_tool("crash", step(2, session_id="shared"))

    assert refused.is_error
    message = text_of(refused)
    assert "session 'shared' belongs to the crash tool" in message, message
    assert "another sessionId" in message, message  # the fix, not only the fault
    assert "KeyError" not in message and "Error executing tool" not in message
    assert after == before  # no entry, no usage, not even the updated time
    assert not onward.is_error and body(onward)["total_steps"] == 2


async def test_crash_refuses_a_sequentialthinking_session_and_leaves_it_untouched() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool(TOOL, thought("Let me check the connection pool settings.", 1, sessionId="mine"))
        before = await read_json(client, "thinking://sessions/mine")
        refused = await client.call_tool("crash", step(1, session_id="mine"))
        after = await read_json(client, "thinking://sessions/mine")

    crash_error(refused, "belongs to the sequentialthinking tool", "another session_id")
    assert after == before


# --- crash strict mode: the CRASH server's own documentation passes ---


@pytest.mark.parametrize(
    "opening",
    ["OK, I ", "But ", "Wait ", "Therefore ", "I see the issue now. ", "I have completed "],
)
async def test_strict_mode_accepts_every_opening_the_crash_documentation_uses(opening: str) -> None:
    async with Client(build_server(Settings(crash_strict_mode=True))) as client:
        result = await client.call_tool("crash", step(1, thought=f"{opening}the pool limit explains the timeouts."))
    assert not result.is_error, text_of(result)


@pytest.mark.parametrize("purpose", ["reflection", "decision", "summary"])
async def test_strict_mode_accepts_the_purposes_the_crash_documentation_uses(purpose: str) -> None:
    async with Client(build_server(Settings(crash_strict_mode=True))) as client:
        result = await client.call_tool("crash", step(1, purpose=purpose))
    assert not result.is_error, text_of(result)


async def test_strict_mode_still_refuses_a_thought_without_a_reasoning_opening() -> None:
    async with Client(build_server(Settings(crash_strict_mode=True))) as client:
        result = await client.call_tool("crash", step(1, thought="Pool limit explains it."))
    crash_error(result, "reasoning phrase", "'but'", "'therefore'")


# --- crash dependencies ---


@pytest.mark.parametrize(
    ("dependencies", "fragments"),
    [
        pytest.param([3], ("dependencies names step 3", "this step"), id="itself"),
        pytest.param([1, 5], ("dependencies names step 5", "a later step"), id="a-future-step"),
        pytest.param([2], ("dependencies=2", "not in this session", "[1]"), id="a-missing-step"),
    ],
)
async def test_a_dependency_on_itself_a_later_or_a_missing_step_is_refused_and_nothing_is_recorded(
    dependencies: list[int], fragments: tuple[str, ...]
) -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool("crash", step(1, session_id="deps"))
        refused = await client.call_tool("crash", step(3, session_id="deps", dependencies=dependencies))
        session = await read_json(client, "thinking://sessions/deps")

    crash_error(refused, *fragments)
    assert [e["number"] for e in session["entries"]] == [1]


async def test_dependencies_on_earlier_steps_of_the_session_are_accepted_and_recorded() -> None:
    async with Client(build_server(Settings())) as client:
        for number in (1, 2):
            await client.call_tool("crash", step(number, session_id="deps"))
        accepted = await client.call_tool("crash", step(3, session_id="deps", dependencies=[1, 2]))
        session = await read_json(client, "thinking://sessions/deps")

    assert not accepted.is_error, text_of(accepted)
    assert session["entries"][-1]["input"]["dependencies"] == [1, 2]


# --- crash completion ---


@pytest.mark.parametrize(
    "completing",
    [
        pytest.param({"is_final_step": True}, id="is-final-step"),
        pytest.param({"thought": "I have completed the fix."}, id="completion-phrase"),
    ],
)
async def test_steps_after_a_session_was_completed_say_so(completing: dict[str, Any]) -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool("crash", step(1, session_id="done"))
        final = body(await client.call_tool("crash", step(2, session_id="done", **completing)))
        later = [body(await client.call_tool("crash", step(n, session_id="done"))) for n in (3, 4)]

    assert final["completed"] is True and "completed_at_step" not in final and "warning" not in final
    for reply in later:
        assert reply["completed"] is True
        assert reply["completed_at_step"] == 2
        assert "already completed at step 2" in reply["warning"] and "new session" in reply["warning"]


async def test_a_completed_session_started_afresh_after_crash_session_timeout_is_no_longer_complete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time
    from types import SimpleNamespace

    async with Client(build_server(Settings(crash_session_timeout=10))) as client:
        await client.call_tool("crash", step(1, session_id="again", is_final_step=True))
        later = time.time() + 11 * 60
        monkeypatch.setattr("thinking_hats.tools.crash.time", SimpleNamespace(time=lambda: later))
        fresh = body(await client.call_tool("crash", step(1, session_id="again")))

    assert fresh["completed"] is False and "completed_at_step" not in fresh
    assert "CRASH_SESSION_TIMEOUT" in fresh["warning"]


# --- `thinking-hats think` applies the tools' checks ---


@pytest.fixture
def configured(openai_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    monkeypatch.setenv("LLM_PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-openai")
    root = logging.getLogger()  # `main` installs its own stderr handler on the root logger
    handlers, level = list(root.handlers), root.level
    yield openai_llm
    root.handlers[:] = handlers
    root.setLevel(level)


QUESTION = "Should we raise the pool size?"


@pytest.mark.parametrize(
    ("text", "session", "fragments"),
    [
        pytest.param(QUESTION, "my plan", ("session",), id="session-id-with-a-space"),
        pytest.param(QUESTION, "plans/../../etc", ("session",), id="session-id-with-a-path"),
        pytest.param(QUESTION, "s" * 100, ("session",), id="session-id-of-100-characters"),
        pytest.param("x" * 501, None, ("501 characters", "THINKING_MAX_THOUGHT_CHARS"), id="thought-over-the-limit"),
    ],
)
def test_think_refuses_what_the_tools_refuse_with_exit_code_2_and_records_nothing(
    configured: FakeLLM,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    session: str | None,
    fragments: tuple[str, ...],
) -> None:
    monkeypatch.setenv("THINKING_MAX_THOUGHT_CHARS", "500")
    code = main(["think", text, "--strategy", "single", *(["--session", session] if session else [])])
    out, err = capsys.readouterr()

    assert code == 2, err
    assert out == ""
    for fragment in fragments:
        assert fragment in err, err
    assert "Traceback" not in err
    assert configured.history == []  # refused before any model call
    assert main(["sessions", "list"]) == 0
    assert "no sessions yet" in capsys.readouterr().out


def test_think_accepts_a_thought_at_the_limit_and_a_valid_session_id(
    configured: FakeLLM, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THINKING_MAX_THOUGHT_CHARS", "500")
    code = main(["think", "y" * 500, "--strategy", "single", "--session", "s" * 64])

    _, err = capsys.readouterr()
    assert code == 0, err
    assert len(configured.history) == 1


@pytest.mark.parametrize("branch", ["a\x00b", "tab\there", "esc\x1b[2J", "c1\x9b2J"])
async def test_a_branch_id_with_control_characters_is_refused_before_anything_is_recorded(branch: str) -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool("sequentialthinking", thought("Start.", 1, sessionId="ctl"))
        refused = await client.call_tool(
            "sequentialthinking", thought("Alt.", 2, sessionId="ctl", branchFromThought=1, branchId=branch)
        )
        stored = await read_json(client, "thinking://sessions/ctl")
    assert refused.is_error and "branchId" in text_of(refused)
    assert [e["number"] for e in stored["entries"]] == [1]
