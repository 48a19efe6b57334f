"""The `crash` tool (structured reasoning steps) and the minimal `sequential_thinking` tool, through a real client."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from mcp import Client

from calls import body, read_json, step, text_of
from thinking_hats.config import Settings
from thinking_hats.server import build_server

REPLY_KEYS = {"step_number", "estimated_total", "completed", "total_steps", "next_action", "session_id"}


def assert_crash_error(result: Any, *fragments: str) -> dict[str, Any]:
    assert result.is_error
    error = body(result)
    assert set(error) == {"error", "status", "hint"}
    assert error["status"] == "failed" and error["hint"]
    message = f"{error['error']} {error['hint']}"
    for fragment in fragments:
        assert fragment in message, message
    return error


# --- the happy path ---


async def test_a_step_is_recorded_and_the_reply_has_the_crash_fields() -> None:
    async with Client(build_server(Settings())) as client:
        first = body(await client.call_tool("crash", step(1)))
        second = body(await client.call_tool("crash", step(2)))

    assert set(first) == REPLY_KEYS
    assert first["step_number"] == 1 and first["estimated_total"] == 4
    assert first["completed"] is False
    assert first["total_steps"] == 1 and second["total_steps"] == 2
    assert first["next_action"] == "Raise the pool size and re-run the load test."
    assert second["session_id"] == first["session_id"]


async def test_a_structured_next_action_is_accepted_and_echoed() -> None:
    action = {"tool": "grep", "action": "search the logs", "parameters": {"pattern": "timeout"}, "expectedOutput": "x"}
    async with Client(build_server(Settings())) as client:
        reply = body(await client.call_tool("crash", step(1, next_action=action)))
    assert reply["next_action"] == action


async def test_a_step_number_beyond_the_estimate_raises_the_estimate() -> None:
    async with Client(build_server(Settings())) as client:
        reply = body(await client.call_tool("crash", step(6, total=4)))
    assert reply["estimated_total"] == 6


async def test_a_custom_purpose_is_allowed_outside_strict_mode() -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool("crash", step(1, purpose="brainstorm"))
    assert not result.is_error


@pytest.mark.parametrize("purpose", ["analysis", "action", "validation", "exploration", "hypothesis", "correction",
                                     "planning"])  # fmt: skip
async def test_every_listed_purpose_is_accepted_in_strict_mode(purpose: str) -> None:
    async with Client(build_server(Settings(crash_strict_mode=True))) as client:
        result = await client.call_tool("crash", step(1, purpose=purpose))
    assert not result.is_error, text_of(result)


# --- strict mode ---


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        pytest.param({"purpose": "brainstorm"}, ("brainstorm", "strict mode", "planning"), id="custom-purpose"),
        pytest.param({"thought": "The pool is small."}, ("reasoning phrase", "'let me'"), id="thought-opening"),
        pytest.param({"rationale": "Because the pool is small."}, ("To ",), id="rationale-opening"),
    ],
)
async def test_strict_mode_refuses_a_step_that_breaks_its_rules_and_says_which(
    change: dict[str, Any], fragments: tuple[str, ...]
) -> None:
    async with Client(build_server(Settings(crash_strict_mode=True))) as client:
        result = await client.call_tool("crash", step(1) | change)
        listing = await read_json(client, "thinking://sessions")
    assert_crash_error(result, *fragments)
    assert sum(s["entries"] for s in listing) == 0


async def test_strict_mode_is_turned_on_by_crash_strict_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRASH_STRICT_MODE", "true")
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool("crash", step(1, purpose="brainstorm"))
    assert_crash_error(result, "strict mode")


# --- completion ---


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"is_final_step": True}, id="is-final-step"),
        pytest.param({"thought": "I have completed the migration plan."}, id="i-have-completed"),
        pytest.param({"outcome": "Task completed: the pool is raised."}, id="task-completed"),
        pytest.param({"outcome": "Solution found, the pool size."}, id="solution-found"),
        pytest.param({"thought": "SOLUTION FOUND at last."}, id="any-case"),
    ],
)
async def test_a_final_step_or_a_completion_phrase_marks_the_chain_completed(change: dict[str, Any]) -> None:
    async with Client(build_server(Settings())) as client:
        reply = body(await client.call_tool("crash", step(1) | change))
    assert reply["completed"] is True


async def test_an_ordinary_step_is_not_completed() -> None:
    async with Client(build_server(Settings())) as client:
        reply = body(await client.call_tool("crash", step(1, is_final_step=False)))
    assert reply["completed"] is False


# --- revisions and branches ---


async def test_a_revision_marks_the_revised_step() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool("crash", step(1, session_id="rev"))
        await client.call_tool("crash", step(2, session_id="rev"))
        reply = body(await client.call_tool("crash", step(3, session_id="rev", revises_step=1, revision_reason="typo")))
        session = await read_json(client, "thinking://sessions/rev")

    assert reply["revised_step"] == 1
    assert session["entries"][0]["input"]["revised_by"] == 3


async def test_a_revision_of_an_unknown_step_is_refused_with_the_existing_steps() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool("crash", step(1, session_id="rev"))
        await client.call_tool("crash", step(2, session_id="rev"))
        result = await client.call_tool("crash", step(5, session_id="rev", revises_step=4))
        after = body(await client.call_tool("crash", step(3, session_id="rev")))
    assert_crash_error(result, "revises_step=4", "[1, 2]")
    assert after["total_steps"] == 3


async def test_a_branch_reports_its_id_name_origin_and_depth() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool("crash", step(1))
        named = body(await client.call_tool("crash", step(2, branch_from=1, branch_id="cache", branch_name="Cache")))
        unnamed = body(await client.call_tool("crash", step(3, branch_from=2)))

    assert named["branch"] == {"id": "cache", "name": "Cache", "from": 1, "depth": 1}
    assert unnamed["branch"] == {"id": "branch-3", "from": 2, "depth": 2}


async def test_a_branch_from_an_unknown_step_is_refused() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool("crash", step(1))
        result = await client.call_tool("crash", step(3, branch_from=2, branch_id="b"))
    assert_crash_error(result, "branch_from=2", "[1]")


async def test_branches_may_not_nest_deeper_than_crash_max_branch_depth() -> None:
    async with Client(build_server(Settings(crash_max_branch_depth=2))) as client:
        await client.call_tool("crash", step(1))
        depth_one = await client.call_tool("crash", step(2, branch_from=1, branch_id="a"))
        depth_two = await client.call_tool("crash", step(3, branch_from=2, branch_id="b"))
        too_deep = await client.call_tool("crash", step(4, branch_from=3, branch_id="c"))
        sibling = await client.call_tool("crash", step(5, branch_from=1, branch_id="d"))

    assert body(depth_one)["branch"]["depth"] == 1 and body(depth_two)["branch"]["depth"] == 2
    assert_crash_error(too_deep, "CRASH_MAX_BRANCH_DEPTH", "3 deep", "limit is 2")
    assert body(sibling)["branch"]["depth"] == 1


# --- history, confidence, errors ---


async def test_history_is_trimmed_to_max_history_size() -> None:
    async with Client(build_server(Settings(max_history_size=3))) as client:
        replies = [body(await client.call_tool("crash", step(n, total=5, session_id="long"))) for n in range(1, 6)]
        session = await read_json(client, "thinking://sessions/long")
        trimmed = await client.call_tool("crash", step(6, session_id="long", revises_step=1))

    assert [r["total_steps"] for r in replies] == [1, 2, 3, 3, 3]
    assert [e["number"] for e in session["entries"]] == [3, 4, 5]
    assert_crash_error(trimmed, "revises_step=1", "[3, 4, 5]")


async def test_max_history_size_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_HISTORY_SIZE", "2")
    async with Client(build_server(Settings())) as client:
        replies = [body(await client.call_tool("crash", step(n))) for n in (1, 2, 3)]
    assert [r["total_steps"] for r in replies] == [1, 2, 2]


async def test_a_low_confidence_step_carries_a_warning_with_its_uncertainty() -> None:
    async with Client(build_server(Settings())) as client:
        low = body(await client.call_tool("crash", step(1, confidence=0.3, uncertainty_notes="only one sample")))
        sure = body(await client.call_tool("crash", step(2, confidence=0.5)))

    assert low["confidence"] == 0.3
    assert "Low confidence" in low["warning"] and "only one sample" in low["warning"]
    assert sure["confidence"] == 0.5 and "warning" not in sure
    assert "review" not in low  # no provider: no model review, and no pretence of one


@pytest.mark.parametrize(
    ("arguments", "fragments"),
    [
        pytest.param({}, ("step_number", "rationale", "Field required"), id="no-arguments"),
        pytest.param({k: v for k, v in step(1).items() if k != "outcome"}, ("outcome",), id="missing-outcome"),
        pytest.param(step(0), ("step_number", "greater than or equal to 1"), id="step-zero"),
        pytest.param(step(1, confidence=1.5), ("confidence", "less than or equal to 1"), id="confidence-too-high"),
        pytest.param(step(1, confidence="high"), ("confidence",), id="confidence-not-a-number"),
        pytest.param(step(1, purpose="   "), ("purpose is empty",), id="blank-purpose"),
        pytest.param(step(1, next_action={"tool": "grep"}), ("next_action",), id="action-object-without-action"),
        pytest.param(step(2, revises_step=2), ("revises_step=2", "earlier"), id="revises-itself"),
        pytest.param(step(1, session_id="a b/c"), ("session_id",), id="bad-session-id"),
    ],
)
async def test_a_bad_step_gets_the_crash_error_shape_with_a_hint(
    arguments: dict[str, Any], fragments: tuple[str, ...]
) -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool("crash", arguments)
    assert_crash_error(result, *fragments)


async def test_numbers_sent_as_strings_are_accepted_by_crash() -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool("crash", step(1) | {"step_number": "2", "estimated_total": "3"})
    assert not result.is_error, text_of(result)
    assert body(result)["step_number"] == 2


# --- sessions ---


async def test_a_step_without_session_id_never_lands_in_another_clients_session() -> None:
    server = build_server(Settings())
    async with Client(server) as alice, Client(server) as bob:
        a1 = body(await alice.call_tool("crash", step(1, thought="Let me ask alice.")))
        b1 = body(await bob.call_tool("crash", step(1, thought="Let me ask bob.")))
        b2 = body(await bob.call_tool("crash", step(2, thought="Let me ask bob again.")))
        a2 = body(await alice.call_tool("crash", step(2, thought="Let me ask alice again.")))
        alice_session = await read_json(alice, f"thinking://sessions/{a1['session_id']}")

    assert a1["session_id"] == a2["session_id"] != b1["session_id"] == b2["session_id"]
    assert [a1["total_steps"], a2["total_steps"], b1["total_steps"], b2["total_steps"]] == [1, 2, 1, 2]
    assert [e["input"]["thought"] for e in alice_session["entries"]] == ["Let me ask alice.", "Let me ask alice again."]


async def test_a_later_client_without_session_id_starts_its_own_session() -> None:
    server = build_server(Settings())
    async with Client(server):  # keeps the server's core open, as a long-running HTTP server would
        async with Client(server) as first:
            earlier = body(await first.call_tool("crash", step(1)))
        async with Client(server) as second:
            later = body(await second.call_tool("crash", step(2)))
    assert later["session_id"] != earlier["session_id"]
    assert later["total_steps"] == 1


async def test_a_named_session_is_shared_on_purpose_and_survives_a_restart() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool("crash", step(1, session_id="incident-42"))
    async with Client(build_server(Settings())) as client:
        reply = body(await client.call_tool("crash", step(2, session_id="incident-42", revises_step=1)))
    assert reply["session_id"] == "incident-42" and reply["total_steps"] == 2 and reply["revised_step"] == 1


async def test_a_session_of_the_other_tool_cannot_be_used_for_crash_steps() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool(
            "sequentialthinking",
            {"thought": "x", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False, "sessionId": "mine"},
        )
        result = await client.call_tool("crash", step(1, session_id="mine"))
    assert_crash_error(result, "sequentialthinking", "another session_id")


async def test_a_named_session_idle_past_crash_session_timeout_starts_afresh_with_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with Client(build_server(Settings(crash_session_timeout=10))) as client:
        await client.call_tool("crash", step(1, session_id="idle"))
        await client.call_tool("crash", step(2, session_id="idle"))
        eleven_minutes_on = time.time() + 11 * 60
        monkeypatch.setattr("thinking_hats.tools.crash.time", SimpleNamespace(time=lambda: eleven_minutes_on))
        reply = body(await client.call_tool("crash", step(3, session_id="idle")))

    assert reply["total_steps"] == 1
    assert "CRASH_SESSION_TIMEOUT" in reply["warning"]


# --- the minimal sequential_thinking tool ---


async def test_the_minimal_tool_replies_thought_recorded() -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool(
            "sequential_thinking",
            {"thought": "Split the problem.", "step": 1, "total_steps": 3, "next_action": "CONTINUE"},
        )
    assert not result.is_error
    expected = {"status": "THOUGHT_RECORDED", "step": 1, "of": 3, "thought": "Split the problem.", "next": "CONTINUE"}
    assert body(result) == expected
    assert result.structured_content == expected


async def test_the_minimal_tool_echoes_total_steps_beyond_it_as_the_seed_does_and_accepts_the_final_answer() -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool(
            "sequential_thinking",
            {"thought": "42.", "step": 4, "total_steps": 3, "next_action": "The final conclusion or answer"},
        )
    reply = body(result)
    assert reply["step"] == 4 and reply["of"] == 3 and reply["next"] == "The final conclusion or answer"
    assert result.structured_content == reply


async def test_the_minimal_tool_refuses_an_unknown_next_action_and_lists_the_choices() -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool(
            "sequential_thinking", {"thought": "x", "step": 1, "total_steps": 1, "next_action": "STOP"}
        )
    assert result.is_error
    message = text_of(result)
    assert "next_action" in message and "CONTINUE" in message and "REVISE" in message


async def test_the_minimal_tool_keeps_no_session() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool(
            "sequential_thinking", {"thought": "x", "step": 1, "total_steps": 1, "next_action": "CONTINUE"}
        )
        listing = await read_json(client, "thinking://sessions")
    assert listing == []
