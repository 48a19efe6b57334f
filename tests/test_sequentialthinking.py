"""`sequentialthinking` through a real in-process MCP client, in record-only mode (no provider configured)."""

from __future__ import annotations

import asyncio
from typing import Any

import jsonschema
import pytest
from mcp import Client

from calls import read_json, text_of
from thinking_hats.config import Settings
from thinking_hats.server import build_server
from thinking_hats.tools.thoughts import ENABLE_HINT

TOOL = "sequentialthinking"
REFERENCE_FIELDS = ("thoughtNumber", "totalThoughts", "nextThoughtNeeded", "branches", "thoughtHistoryLength")
OUR_FIELDS = ("sessionId", "mode", "shouldContinue", "nextThoughtNumber", "analysis", "usage")


def thought(text: str, number: int, total: int = 3, more: bool = True, **extra: Any) -> dict[str, Any]:
    return {"thought": text, "thoughtNumber": number, "totalThoughts": total, "nextThoughtNeeded": more, **extra}


async def numbers_in(client: Client, session_id: str) -> list[int]:
    session = await read_json(client, f"thinking://sessions/{session_id}")
    return [entry["number"] for entry in session["entries"]]


async def total_entries(client: Client) -> int:
    return sum(s["entries"] for s in await read_json(client, "thinking://sessions"))


# --- the happy path and the reply ---


async def test_a_chain_of_thoughts_is_recorded_in_order_and_the_last_one_ends_it() -> None:
    async with Client(build_server(Settings())) as client:
        first = await client.call_tool(TOOL, thought("Restate the problem.", 1))
        second = await client.call_tool(TOOL, thought("List the options.", 2))
        last = await client.call_tool(TOOL, thought("Pick option B.", 3, more=False))
        session_id = first.structured_content["sessionId"]
        recorded = await read_json(client, f"thinking://sessions/{session_id}")

    assert not (first.is_error or second.is_error or last.is_error)
    assert [r.structured_content["thoughtHistoryLength"] for r in (first, second, last)] == [1, 2, 3]
    assert {r.structured_content["sessionId"] for r in (second, last)} == {session_id}
    assert first.structured_content["nextThoughtNumber"] == 2
    assert last.structured_content["nextThoughtNeeded"] is False
    assert last.structured_content["shouldContinue"] is False
    assert last.structured_content["nextThoughtNumber"] is None
    assert "Chain complete" in text_of(last)
    assert [e["input"]["thought"] for e in recorded["entries"]] == [
        "Restate the problem.",
        "List the options.",
        "Pick option B.",
    ]


async def test_a_record_only_reply_has_every_field_with_an_empty_analysis_and_usage() -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool(TOOL, thought("Restate the problem.", 1, total=2))

    reply = result.structured_content
    assert reply is not None
    for name in REFERENCE_FIELDS + OUR_FIELDS:
        assert name in reply, name
    assert reply["mode"] == "record-only"
    assert reply["thoughtNumber"] == 1 and reply["totalThoughts"] == 2 and reply["branches"] == []
    assert reply["shouldContinue"] is True
    assert reply["analysis"]["hats"] == [] and reply["analysis"]["synthesis"] is None
    assert reply["analysis"]["problems"] == []
    assert reply["usage"]["llmCalls"] == 0 and set(reply["usage"].values()) == {0}
    text = text_of(result)
    assert text.startswith("Thought 1/2 recorded") and reply["sessionId"] in text


async def test_the_hint_on_turning_augmentation_on_appears_once_per_session() -> None:
    async with Client(build_server(Settings())) as client:
        replies = [await client.call_tool(TOOL, thought(f"Step {n}.", n, total=4)) for n in (1, 2, 3)]
        other = await client.call_tool(TOOL, thought("Another problem.", 1, sessionId="other"))

    notices = [r.structured_content["notice"] for r in replies]
    assert notices[0] == ENABLE_HINT and notices[1:] == [None, None]
    assert ["LLM_PROVIDER" in text_of(r) for r in replies] == [True, False, False]
    assert "LLM_PROVIDER" in text_of(other)  # a different session gets its own single hint


async def test_the_published_output_schema_describes_the_structured_reply() -> None:
    async with Client(build_server(Settings())) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool(TOOL, thought("Restate the problem.", 1))

    schema = tools[TOOL].output_schema
    assert schema is not None
    for name in REFERENCE_FIELDS + OUR_FIELDS:
        assert name in schema["properties"], name
    jsonschema.validate(result.structured_content, schema)
    input_schema = tools[TOOL].input_schema
    assert set(input_schema["required"]) == {"thought", "thoughtNumber", "totalThoughts", "nextThoughtNeeded"}
    assert {"isRevision", "revisesThought", "branchFromThought", "branchId", "sessionId", "strategy"} <= set(
        input_schema["properties"]
    )


async def test_numbers_and_booleans_sent_as_strings_are_accepted() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool(TOOL, thought("First.", 1, sessionId="strings"))
        result = await client.call_tool(
            TOOL,
            {
                "thought": "Revise the first.",
                "thoughtNumber": "2",
                "totalThoughts": "3",
                "nextThoughtNeeded": "true",
                "isRevision": "true",
                "revisesThought": "1",
                "sessionId": "strings",
            },
        )
        session = await read_json(client, "thinking://sessions/strings")

    assert not result.is_error, text_of(result)
    reply = result.structured_content
    assert reply["thoughtNumber"] == 2 and reply["totalThoughts"] == 3 and reply["nextThoughtNeeded"] is True
    assert session["entries"][1]["input"]["is_revision"] is True
    assert session["entries"][1]["input"]["revises_thought"] == 1


async def test_a_thought_number_beyond_the_total_raises_the_total() -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool(TOOL, thought("More than planned.", 5, total=3, sessionId="grow"))
        session = await read_json(client, "thinking://sessions/grow")

    assert result.structured_content["totalThoughts"] == 5
    assert "5/5" in text_of(result)
    assert session["entries"][0]["input"]["total_thoughts"] == 5


async def test_needs_more_thoughts_keeps_the_chain_going_after_a_final_looking_thought() -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool(TOOL, thought("Done?", 3, total=3, more=False, needsMoreThoughts=True))
    assert result.structured_content["shouldContinue"] is True


@pytest.mark.parametrize("strategy", ["auto", "single", "full", "none"])
async def test_a_strategy_is_accepted_and_without_a_provider_the_thought_is_only_recorded(strategy: str) -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool(TOOL, thought("Weigh it.", 1, strategy=strategy))
    assert not result.is_error
    assert result.structured_content["mode"] == "record-only"
    assert result.structured_content["usage"]["llmCalls"] == 0


async def test_a_valid_revision_and_a_valid_branch_are_recorded_and_the_branch_is_listed() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool(TOOL, thought("Option A.", 1, sessionId="rb"))
        await client.call_tool(TOOL, thought("Option B.", 2, sessionId="rb"))
        revision = await client.call_tool(
            TOOL, thought("A is wrong.", 3, sessionId="rb", isRevision=True, revisesThought=1)
        )
        branch = await client.call_tool(
            TOOL, thought("What if B?", 4, sessionId="rb", branchFromThought=2, branchId="alt-b")
        )
        onward = await client.call_tool(TOOL, thought("B continued.", 5, sessionId="rb", branchId="alt-b"))

    assert not (revision.is_error or branch.is_error or onward.is_error)
    assert branch.structured_content["branches"] == ["alt-b"]
    assert onward.structured_content["branches"] == ["alt-b"]
    assert onward.structured_content["thoughtHistoryLength"] == 5


# --- validation against the session ---


SESSION_RULES = [
    pytest.param(
        thought("Fix thought 4.", 5, isRevision=True, revisesThought=4),
        ("revisesThought=4", "1, 2"),
        id="revision-of-an-unknown-thought",
    ),
    pytest.param(thought("Fix something.", 3, isRevision=True), ("revisesThought",), id="revision-without-target"),
    pytest.param(thought("Fix a later one.", 3, revisesThought=3), ("earlier",), id="revision-of-itself"),
    pytest.param(thought("Alternative.", 3, branchFromThought=1), ("branchId",), id="branch-without-branch-id"),
    pytest.param(
        thought("Alternative.", 5, branchFromThought=4, branchId="alt"),
        ("branchFromThought=4", "1, 2"),
        id="branch-from-an-unknown-thought",
    ),
    pytest.param(
        thought("Alternative.", 3, branchId="nowhere"), ("branchFromThought",), id="new-branch-without-origin"
    ),
]


@pytest.mark.parametrize(("arguments", "fix"), SESSION_RULES)
async def test_a_revision_or_branch_that_does_not_fit_the_session_is_refused_with_the_fix_and_the_session_is_intact(
    arguments: dict[str, Any], fix: tuple[str, ...]
) -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool(TOOL, thought("Option A.", 1, sessionId="s"))
        await client.call_tool(TOOL, thought("Option B.", 2, sessionId="s"))
        refused = await client.call_tool(TOOL, arguments | {"sessionId": "s"})
        following = await client.call_tool(TOOL, thought("Option C.", 3, sessionId="s"))
        recorded = await numbers_in(client, "s")

    assert refused.is_error
    message = text_of(refused)
    for fragment in fix:
        assert fragment in message, message
    assert not following.is_error
    assert following.structured_content["thoughtHistoryLength"] == 3
    assert recorded == [1, 2, 3]


async def test_a_revision_in_the_default_session_is_checked_against_that_session() -> None:
    async with Client(build_server(Settings())) as client:
        first = await client.call_tool(TOOL, thought("Option A.", 1))
        refused = await client.call_tool(TOOL, thought("Fix 2.", 3, isRevision=True, revisesThought=2))
        fixed = await client.call_tool(TOOL, thought("Fix 1.", 2, isRevision=True, revisesThought=1))

    assert refused.is_error and "revisesThought=2" in text_of(refused)
    assert not fixed.is_error
    assert fixed.structured_content["sessionId"] == first.structured_content["sessionId"]
    assert fixed.structured_content["thoughtHistoryLength"] == 2


# --- malformed calls ---

MAX_CHARS = 500
BAD_CALLS = [
    pytest.param({"thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": True}, ("thought", "required"),
                 id="missing-thought"),
    pytest.param({"thought": "x", "totalThoughts": 1, "nextThoughtNeeded": True}, ("thoughtNumber", "required"),
                 id="missing-thought-number"),
    pytest.param({"thought": "x", "thoughtNumber": 1, "nextThoughtNeeded": True}, ("totalThoughts", "required"),
                 id="missing-total"),
    pytest.param({"thought": "x", "thoughtNumber": 1, "totalThoughts": 1}, ("nextThoughtNeeded", "required"),
                 id="missing-next-needed"),
    pytest.param({}, ("thought", "thoughtNumber", "totalThoughts", "nextThoughtNeeded"), id="empty-arguments"),
    pytest.param(thought("x", 0), ("thoughtNumber", "greater than or equal to 1"), id="thought-number-zero"),
    pytest.param(thought("x", -3), ("thoughtNumber", "greater than or equal to 1"), id="thought-number-negative"),
    pytest.param(thought("x", 1, total=0), ("totalThoughts", "greater than or equal to 1"), id="total-zero"),
    pytest.param(thought("x", 10**9), ("thoughtNumber", "less than or equal"), id="thought-number-huge"),
    pytest.param(thought("x", 1) | {"thoughtNumber": "two"}, ("thoughtNumber", "integer", '"two"'),
                 id="thought-number-not-a-number"),
    pytest.param(thought("x", 1) | {"thoughtNumber": 1.5}, ("thoughtNumber", "integer"), id="thought-number-fraction"),
    pytest.param(thought("x", 1) | {"nextThoughtNeeded": "maybe"}, ("nextThoughtNeeded", "boolean"),
                 id="next-needed-not-a-boolean"),
    pytest.param(thought("x", 1) | {"thought": 42}, ("thought", "string"), id="thought-not-a-string"),
    pytest.param(thought("x", 1) | {"thought": ["a", "b"]}, ("thought", "string"), id="thought-a-list"),
    pytest.param(thought("", 1), ("thought", "at least 1"), id="thought-empty"),
    pytest.param(thought("   \n ", 1), ("thought is empty",), id="thought-blank"),
    pytest.param(thought("x" * (MAX_CHARS + 1), 1), ("thought", str(MAX_CHARS)), id="thought-oversized"),
    pytest.param(thought("x", 1, strategy="quintuple"), ("strategy", "'single'"), id="unknown-strategy"),
    pytest.param(thought("x", 1, sessionId="../../etc/passwd"), ("sessionId", "pattern"), id="session-id-path"),
    pytest.param(thought("x", 2, revisesThought=0, isRevision=True), ("revisesThought",), id="revises-zero"),
    pytest.param(thought("x", 1, branchId="b" * 65, branchFromThought=1), ("branchId", "64"),
                 id="branch-id-too-long"),
]  # fmt: skip


@pytest.mark.parametrize(("arguments", "fragments"), BAD_CALLS)
async def test_a_malformed_call_is_refused_with_a_message_naming_what_to_fix_and_nothing_is_recorded(
    arguments: dict[str, Any], fragments: tuple[str, ...]
) -> None:
    async with Client(build_server(Settings(thinking_max_thought_chars=MAX_CHARS))) as client:
        result = await client.call_tool(TOOL, arguments)
        recorded = await total_entries(client)

    assert result.is_error
    message = text_of(result)
    for fragment in fragments:
        assert fragment in message, message
    assert "Traceback" not in message and "internal error" not in message.lower()
    assert recorded == 0


async def test_a_thought_at_the_character_limit_is_accepted() -> None:
    async with Client(build_server(Settings(thinking_max_thought_chars=MAX_CHARS))) as client:
        result = await client.call_tool(TOOL, thought("x" * MAX_CHARS, 1))
    assert not result.is_error


async def test_an_unknown_tool_is_refused_by_name() -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool("sequentialthoughts", thought("x", 1))
    assert result.is_error
    assert "sequentialthoughts" in text_of(result)


# --- sessions ---


async def test_a_new_thought_number_one_in_the_default_session_starts_a_new_chain() -> None:
    async with Client(build_server(Settings())) as client:
        first = await client.call_tool(TOOL, thought("Problem one.", 1, total=2))
        await client.call_tool(TOOL, thought("Problem one, step two.", 2, total=2, more=False))
        fresh = await client.call_tool(TOOL, thought("Problem two.", 1, total=2))
        onward = await client.call_tool(TOOL, thought("Problem two, step two.", 2, total=2))
        old_id, new_id = first.structured_content["sessionId"], fresh.structured_content["sessionId"]
        old_numbers, new_numbers = await numbers_in(client, old_id), await numbers_in(client, new_id)

    assert new_id != old_id
    assert fresh.structured_content["thoughtHistoryLength"] == 1
    assert onward.structured_content["sessionId"] == new_id
    assert old_numbers == [1, 2] and new_numbers == [1, 2]


async def test_a_branch_in_the_default_session_stays_in_the_current_chain() -> None:
    async with Client(build_server(Settings())) as client:
        first = await client.call_tool(TOOL, thought("Problem one.", 1))
        await client.call_tool(TOOL, thought("Step two.", 2))
        branch = await client.call_tool(TOOL, thought("Again from 1.", 3, branchFromThought=1, branchId="b"))

    assert branch.structured_content["sessionId"] == first.structured_content["sessionId"]


@pytest.mark.parametrize("named", [False, True], ids=["default-session", "named-session"])
async def test_a_retried_identical_call_returns_the_stored_reply_and_is_not_recorded_twice(named: bool) -> None:
    extra = {"sessionId": "retry"} if named else {}
    async with Client(build_server(Settings())) as client:
        await client.call_tool(TOOL, thought("Step one.", 1, **extra))
        original = await client.call_tool(TOOL, thought("Step two.", 2, **extra))
        retried = await client.call_tool(TOOL, thought("Step two.", 2, **extra))
        session_id = original.structured_content["sessionId"]
        recorded = await numbers_in(client, session_id)

    assert not retried.is_error
    assert retried.structured_content == original.structured_content | {"replayed": True}
    assert text_of(retried) == text_of(original)
    assert recorded == [1, 2]


async def test_a_retried_first_thought_in_the_default_session_does_not_start_a_new_chain() -> None:
    async with Client(build_server(Settings())) as client:
        original = await client.call_tool(TOOL, thought("Step one.", 1))
        retried = await client.call_tool(TOOL, thought("Step one.", 1))
        listing = await read_json(client, "thinking://sessions")

    assert retried.structured_content == original.structured_content | {"replayed": True}
    assert [s["entries"] for s in listing] == [1]


async def test_a_named_session_survives_a_server_restart() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool(TOOL, thought("Option A.", 1, sessionId="plan"))
        await client.call_tool(TOOL, thought("Option B.", 2, sessionId="plan"))

    async with Client(build_server(Settings())) as client:  # a new server on the same THINKING_DATA_DIR
        revision = await client.call_tool(
            TOOL, thought("A was wrong.", 3, sessionId="plan", isRevision=True, revisesThought=1)
        )
        session = await read_json(client, "thinking://sessions/plan")

    assert not revision.is_error, text_of(revision)
    assert revision.structured_content["thoughtHistoryLength"] == 3
    assert [e["input"]["thought"] for e in session["entries"]] == ["Option A.", "Option B.", "A was wrong."]
    assert revision.structured_content["notice"] is None  # the hint was already given in this session


async def test_two_concurrent_clients_never_land_in_each_others_sessions() -> None:
    server = build_server(Settings())
    in_step = asyncio.Barrier(2)  # both clients connected, and then in step: their thoughts interleave

    async def chain(name: str) -> list[Any]:
        async with Client(server) as client:
            await in_step.wait()
            replies = []
            for n in (1, 2, 3):
                replies.append(await client.call_tool(TOOL, thought(f"{name} step {n}", n)))
                await in_step.wait()
            session = await read_json(client, f"thinking://sessions/{replies[0].structured_content['sessionId']}")
            return [replies, session]

    (a_replies, a_session), (b_replies, b_session) = await asyncio.gather(chain("alice"), chain("bob"))

    a_ids = {r.structured_content["sessionId"] for r in a_replies}
    b_ids = {r.structured_content["sessionId"] for r in b_replies}
    assert len(a_ids) == 1 and len(b_ids) == 1 and a_ids != b_ids
    assert [e["input"]["thought"] for e in a_session["entries"]] == ["alice step 1", "alice step 2", "alice step 3"]
    assert [e["input"]["thought"] for e in b_session["entries"]] == ["bob step 1", "bob step 2", "bob step 3"]
    assert [r.structured_content["thoughtHistoryLength"] for r in a_replies + b_replies] == [1, 2, 3, 1, 2, 3]


async def test_a_later_client_does_not_continue_an_earlier_clients_default_session() -> None:
    server = build_server(Settings())
    async with Client(server):  # keeps the server's core open, as a long-running HTTP server would
        async with Client(server) as first:
            one = await first.call_tool(TOOL, thought("First client.", 1))
        async with Client(server) as second:
            two = await second.call_tool(TOOL, thought("Second client, thought 2.", 2))

    assert two.structured_content["sessionId"] != one.structured_content["sessionId"]
    assert two.structured_content["thoughtHistoryLength"] == 1


# --- the tool list ---


async def test_thinking_tools_narrows_the_tool_list() -> None:
    async with Client(build_server(Settings(thinking_tools="sequentialthinking"))) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        refused = await client.call_tool("crash", {})
    assert names == ["sequentialthinking"]
    assert refused.is_error


async def test_thinking_tools_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKING_TOOLS", "crash, sequential_thinking")
    async with Client(build_server(Settings())) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
    assert names == ["crash", "sequential_thinking"]


async def test_all_three_tools_are_served_by_default() -> None:
    async with Client(build_server(Settings())) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
    assert names == ["crash", "sequential_thinking", "sequentialthinking"]


async def test_the_tools_that_record_thoughts_are_not_annotated_read_only() -> None:
    async with Client(build_server(Settings())) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    for name in ("sequentialthinking", "crash"):
        annotations = tools[name].annotations
        assert annotations is not None
        assert annotations.read_only_hint is False, name
        assert annotations.destructive_hint is False, name
        assert annotations.open_world_hint is False, name  # no provider: nothing leaves the machine


async def test_tool_descriptions_stay_short() -> None:
    async with Client(build_server(Settings())) as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        assert tool.description and len(tool.description) < 500, tool.name
