"""MCP resources (session list, one session as JSON, a Markdown report) and the `sequential-thinking` prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from thinking_hats.config import Settings
from thinking_hats.server import build_server


def thought(text: str, number: int, total: int = 3, **extra: Any) -> dict[str, Any]:
    return {"thought": text, "thoughtNumber": number, "totalThoughts": total, "nextThoughtNeeded": True, **extra}


def step(number: int, **extra: Any) -> dict[str, Any]:
    return {
        "step_number": number,
        "estimated_total": 3,
        "purpose": "validation",
        "context": "Checking the fix.",
        "thought": f"Let me verify part {number}.",
        "outcome": "It holds.",
        "next_action": {"tool": "pytest", "action": "run the suite"},
        "rationale": "To be sure.",
        **extra,
    }


async def read(client: Client, uri: str) -> tuple[str, str | None]:
    result = await client.read_resource(uri)
    (content,) = result.contents
    return getattr(content, "text", ""), content.mime_type


async def read_json(client: Client, uri: str) -> Any:
    text, mime = await read(client, uri)
    assert mime == "application/json"
    return json.loads(text)


async def record_a_session(client: Client, session_id: str = "plan") -> None:
    for arguments in (
        thought("Restate the problem.", 1, sessionId=session_id),
        thought("Option A: cache the results.", 2, sessionId=session_id),
        thought("A is unsafe: stale data.", 3, sessionId=session_id, isRevision=True, revisesThought=2),
        thought("Option B: index the column.", 4, sessionId=session_id, branchFromThought=1, branchId="index"),
    ):
        result = await client.call_tool("sequentialthinking", arguments)
        assert not result.is_error


# --- thinking://sessions ---


async def test_the_session_list_is_empty_before_any_thought() -> None:
    async with Client(build_server(Settings())) as client:
        assert await read_json(client, "thinking://sessions") == []


async def test_the_session_list_shows_every_session_newest_first_with_its_size() -> None:
    async with Client(build_server(Settings())) as client:
        await record_a_session(client, "plan")
        await client.call_tool("crash", step(1, session_id="check"))
        listing = await read_json(client, "thinking://sessions")

    assert [(s["id"], s["tool"], s["entries"]) for s in listing] == [
        ("check", "crash", 1),
        ("plan", "sequentialthinking", 4),
    ]
    assert all(s["updated"] >= s["created"] for s in listing)


async def test_the_resources_and_templates_are_advertised() -> None:
    async with Client(build_server(Settings())) as client:
        resources = [str(r.uri) for r in (await client.list_resources()).resources]
        templates = {t.uri_template: t.mime_type for t in (await client.list_resource_templates()).resource_templates}
    assert "thinking://sessions" in resources
    assert templates == {
        "thinking://sessions/{session_id}": "application/json",
        "thinking://sessions/{session_id}/report": "text/markdown",
    }


# --- thinking://sessions/{id} ---


async def test_a_session_reads_as_json_with_every_thought_its_input_and_its_reply() -> None:
    async with Client(build_server(Settings())) as client:
        await record_a_session(client)
        session = await read_json(client, "thinking://sessions/plan")

    assert session["id"] == "plan" and session["tool"] == "sequentialthinking"
    assert session["created"].endswith("Z") and session["updated"].endswith("Z")
    entries = session["entries"]
    assert [e["number"] for e in entries] == [1, 2, 3, 4]
    assert [e["seq"] for e in entries] == [1, 2, 3, 4]
    assert [e["branchId"] for e in entries] == [None, None, None, "index"]
    assert entries[2]["input"]["is_revision"] is True and entries[2]["input"]["revises_thought"] == 2
    assert entries[3]["input"]["branch_from_thought"] == 1
    assert entries[0]["reply"]["thoughtNumber"] == 1 and entries[0]["reply"]["mode"] == "record-only"
    assert entries[3]["reply"]["branches"] == ["index"]


async def test_a_crash_session_reads_as_json_with_its_steps() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool("crash", step(1, session_id="check"))
        await client.call_tool("crash", step(2, session_id="check", confidence=0.2))
        session = await read_json(client, "thinking://sessions/check")

    assert session["tool"] == "crash"
    assert [e["input"]["purpose"] for e in session["entries"]] == ["validation", "validation"]
    assert session["entries"][0]["input"]["next_action"] == {"tool": "pytest", "action": "run the suite"}
    assert "Low confidence" in session["entries"][1]["reply"]["warning"]


async def test_an_unknown_session_is_refused_with_how_to_find_one_that_an_mcp_client_can_follow() -> None:
    # An MCP client may be remote (HTTP): it can read a resource, not run `thinking-hats sessions list`.
    async with Client(build_server(Settings())) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("thinking://sessions/nope")
        with pytest.raises(MCPError) as raised_report:
            await client.read_resource("thinking://sessions/nope/report")
    for error in (raised.value, raised_report.value):
        assert "no session 'nope'" in str(error) and "thinking://sessions" in str(error)
        assert "thinking-hats sessions" not in str(error)


async def test_sessions_are_readable_from_another_connection_and_after_a_restart() -> None:
    async with Client(build_server(Settings())) as client:
        await record_a_session(client)
    async with Client(build_server(Settings())) as client:
        session = await read_json(client, "thinking://sessions/plan")
    assert len(session["entries"]) == 4


async def test_with_the_memory_store_sessions_are_readable_and_nothing_is_written_to_disk(tmp_path: Path) -> None:
    data_dir = tmp_path / "memory-data"
    async with Client(build_server(Settings(thinking_store="memory", thinking_data_dir=data_dir))) as client:
        await record_a_session(client)
        session = await read_json(client, "thinking://sessions/plan")
    assert len(session["entries"]) == 4
    assert not data_dir.exists()


# --- the Markdown report ---


async def test_the_report_shows_each_thought_with_its_kind() -> None:
    async with Client(build_server(Settings())) as client:
        await record_a_session(client)
        report, mime = await read(client, "thinking://sessions/plan/report")

    assert mime == "text/markdown"
    assert report.startswith("# Session `plan` (sequentialthinking)")
    assert "4 entries" in report
    assert "## Thought 1/3\n\n> Restate the problem." in report  # client text is quoted
    assert "## Thought 3/3 (revises 2)" in report
    assert "## Thought 4/4 (branch `index` from 1)" in report
    assert report.index("Option A") < report.index("A is unsafe") < report.index("Option B")


async def test_the_report_of_a_crash_session_lists_each_step() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool("crash", step(1, session_id="check"))
        await client.call_tool("crash", step(2, session_id="check", revises_step=1, confidence=0.9))
        report, _ = await read(client, "thinking://sessions/check/report")

    assert report.startswith("# Session `check` (crash)")
    assert "## Step 1/3: validation" in report and "## Step 2/3: validation" in report
    assert "- Next action: run the suite" in report
    assert "- Revised by step 2" in report
    assert "- Confidence: 0.9" in report


# --- the prompt ---


async def test_the_sequential_thinking_prompt_is_listed_with_its_arguments() -> None:
    async with Client(build_server(Settings())) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    arguments = {a.name: a.required for a in prompts["sequential-thinking"].arguments or []}
    assert arguments == {"problem": True, "context": False}


async def test_the_prompt_frames_the_problem_and_points_at_the_tool() -> None:
    async with Client(build_server(Settings())) as client:
        plain = await client.get_prompt("sequential-thinking", {"problem": "Why is the build slow?"})
        with_context = await client.get_prompt(
            "sequential-thinking", {"problem": "Why is the build slow?", "context": "It uses Bazel."}
        )

    (message,) = plain.messages
    text = getattr(message.content, "text", "")
    assert message.role == "user"
    assert "Why is the build slow?" in text and "`sequentialthinking`" in text
    assert "Context:" not in text
    contextual = getattr(with_context.messages[0].content, "text", "")
    assert "Context:\nIt uses Bazel." in contextual


async def test_the_prompt_without_a_problem_is_refused() -> None:
    async with Client(build_server(Settings())) as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("sequential-thinking", {"context": "only context"})
    assert "problem" in str(raised.value)


async def test_an_unknown_prompt_is_refused_by_name() -> None:
    async with Client(build_server(Settings())) as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("think-harder", {"problem": "x"})
    assert "think-harder" in str(raised.value)
