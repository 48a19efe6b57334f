"""The tools' published contracts: every tool declares a draft-07 outputSchema that describes its replies, and
every real reply (through a real MCP client) validates against it; the session list speaks ISO times."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from jsonschema import Draft7Validator
from jsonschema.validators import validator_for
from mcp import Client
from mcp.types import CallToolResult

from fakes import FakeLLM
from thinking_hats.config import Settings
from thinking_hats.server import build_server

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
REQUIRED = {
    "sequentialthinking": {
        "thoughtNumber",
        "totalThoughts",
        "nextThoughtNeeded",
        "branches",
        "thoughtHistoryLength",
        "sessionId",
        "mode",
        "shouldContinue",
        "nextThoughtNumber",
    },
    "crash": {"step_number", "estimated_total", "completed", "total_steps", "next_action", "session_id"},
    "sequential_thinking": {"status", "step", "of", "thought", "next"},
}


def thought(text: str, number: int, total: int = 4, more: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "thought": text,
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": more,
        "sessionId": "contract",
        **extra,
    }


def step(number: int, total: int = 4, **extra: Any) -> dict[str, Any]:
    return {
        "step_number": number,
        "estimated_total": total,
        "purpose": "analysis",
        "context": "The nightly export job fails on the 1st of each month.",
        "thought": "Let me check what differs on the 1st.",
        "outcome": "The monthly archive runs at the same time.",
        "next_action": "Compare the two jobs' lock files.",
        "rationale": "To find the shared resource.",
        "session_id": "contract",
        **extra,
    }


def minimal(text: str, number: int, total: int, action: str, **extra: Any) -> dict[str, Any]:
    return {"thought": text, "step": number, "total_steps": total, "next_action": action, **extra}


# Realistic calls, in order, each tool in its own session: (label, arguments).
CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "sequentialthinking": [
        ("plain", thought("Restate the problem: exports fail monthly.", 1)),
        ("second", thought("List what runs on the 1st.", 2)),
        ("revision", thought("No: the archive runs at 02:00, not 03:00.", 3, isRevision=True, revisesThought=2)),
        ("branch", thought("What if the lock is the cause?", 4, branchFromThought=2, branchId="lock")),
        ("on-branch", thought("The lock file is shared.", 5, total=6, branchId="lock")),
        ("beyond-total", thought("One more check than planned.", 8, total=6)),
        ("needs-more", thought("Looks done, but check once more.", 9, more=False, needsMoreThoughts=True)),
        ("final", thought("Stagger the two jobs by an hour.", 10, more=False)),
        ("replayed", thought("Stagger the two jobs by an hour.", 10, more=False)),
        ("strategy-none", thought("A note for the record.", 1, strategy="none", sessionId="other")),
    ],
    "crash": [
        ("plain", step(1)),
        ("structured-action", step(2, next_action={"tool": "grep", "action": "find locks", "parameters": {"p": 1}})),
        ("revision", step(3, revises_step=2, revision_reason="wrong directory")),
        ("branch", step(4, branch_from=2, branch_id="lock", branch_name="Lock contention")),
        ("unnamed-branch", step(5, branch_from=4)),
        ("low-confidence", step(6, confidence=0.2, uncertainty_notes="one month of logs only")),
        ("dependencies", step(7, dependencies=[1, 3], tools_used=["grep"], external_context={"ticket": "OPS-7"})),
        ("beyond-estimate", step(9, total=4)),
        ("final", step(10, is_final_step=True, thought="I have completed the diagnosis.")),
        ("after-completion", step(11, thought="Let me note one more thing.")),
        ("replayed", step(11, thought="Let me note one more thing.")),
    ],
    "sequential_thinking": [
        ("continue", minimal("Split the problem.", 1, 3, "CONTINUE")),
        ("revise", minimal("Step 1 missed a case.", 2, 3, "REVISE", is_revision=True)),
        ("beyond-total", minimal("One more step.", 5, 3, "CONTINUE")),
        ("final", minimal("Stagger the jobs.", 6, 6, "The final conclusion or answer")),
    ],
}


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def schemas_of(client: Client) -> dict[str, dict[str, Any]]:
    return {tool.name: tool.output_schema for tool in (await client.list_tools()).tools if tool.output_schema}


def validate(schema: dict[str, Any], reply: Any) -> None:
    # As an MCP client does it: the validator class the schema's `$schema` names, refs resolved in the document.
    validator_for(schema)(schema).validate(reply)


async def test_every_tool_publishes_a_valid_draft_07_output_schema_that_requires_its_contract_fields() -> None:
    async with Client(build_server(Settings())) as client:
        schemas = await schemas_of(client)

    assert set(schemas) == set(REQUIRED)
    for name, schema in schemas.items():
        assert schema["$schema"] == DRAFT_07, name
        assert validator_for(schema) is Draft7Validator, name
        Draft7Validator.check_schema(schema)
        assert schema["type"] == "object", name
        assert REQUIRED[name] <= set(schema["required"]), name
        assert schema.get("additionalProperties") is not True, name  # not the accept-anything dict schema


@pytest.mark.parametrize("tool", sorted(CALLS))
async def test_every_real_reply_validates_against_the_published_schema(tool: str) -> None:
    async with Client(build_server(Settings())) as client:
        schema = (await schemas_of(client))[tool]
        results = [(label, await client.call_tool(tool, arguments)) for label, arguments in CALLS[tool]]

    for label, result in results:
        assert not result.is_error, f"{label}: {text_of(result)}"
        assert result.structured_content is not None, label
        validate(schema, result.structured_content)
        if tool != "sequentialthinking":  # its text is Markdown; the others' text is the same JSON
            assert json.loads(text_of(result)) == result.structured_content, label


@pytest.mark.parametrize(
    ("strategy", "failing"),
    [("single", None), ("triple", None), ("full", "critical")],  # a failed hat's error and problem are in the reply
)
async def test_augmented_replies_validate_against_the_published_schema(
    openai_llm: FakeLLM, strategy: str, failing: str | None
) -> None:
    if failing:
        openai_llm.enqueue(failing, 500)
    settings = openai_llm.settings(thinking_max_retries=0)
    async with Client(build_server(settings)) as client:
        schemas = await schemas_of(client)
        analysed = await client.call_tool(
            "sequentialthinking",
            thought(
                "Should we move the export off the 1st, given the archive, the SLA and the cost?", 1, strategy=strategy
            ),
        )
        reviewed = await client.call_tool("crash", step(1, confidence=0.3, session_id="reviewed"))

    assert not analysed.is_error, text_of(analysed)
    reply = analysed.structured_content
    assert reply is not None and reply["mode"] == "augmented" and reply["analysis"]["strategy"] == strategy
    if failing:
        assert reply["analysis"]["problems"] and any(h["status"] == "failed" for h in reply["analysis"]["hats"])
    validate(schemas["sequentialthinking"], analysed.structured_content)
    assert not reviewed.is_error, text_of(reviewed)
    assert "review" in (reviewed.structured_content or {})
    validate(schemas["crash"], reviewed.structured_content)


async def test_a_failed_analysis_still_carries_a_reply_that_fits_the_schema(openai_llm: FakeLLM) -> None:
    openai_llm.enqueue("*", 401, 401)
    async with Client(build_server(openai_llm.settings())) as client:
        schema = (await schemas_of(client))["sequentialthinking"]
        failed = await client.call_tool(
            "sequentialthinking", thought("Is the archive the cause?", 1, strategy="single")
        )

    assert failed.is_error
    validate(schema, failed.structured_content)


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param(step(1, confidence=3), id="invalid-argument"),
        pytest.param(step(1, revises_step=1), id="rule-broken"),
        pytest.param(step(1, external_context="x" * 30_000), id="external-context-too-large"),
    ],
)
async def test_a_crash_error_keeps_the_crash_error_shape_and_carries_no_structured_content(
    arguments: dict[str, Any],
) -> None:
    async with Client(build_server(Settings())) as client:
        result = await client.call_tool("crash", arguments)

    assert result.is_error and result.structured_content is None
    error = json.loads(text_of(result))
    assert set(error) == {"error", "status", "hint"} and error["status"] == "failed"


@pytest.mark.parametrize(
    ("tool", "breakage"),
    [
        ("sequentialthinking", {"thoughtNumber": "one"}),
        ("sequentialthinking", {"mode": "guessing"}),
        ("sequentialthinking", {"usage": {"llmCalls": "many"}}),
        ("crash", {"completed": "yes"}),
        ("crash", {"next_action": {"tool": "grep"}}),
        ("crash", {"branch": {"id": "b"}}),
        ("sequential_thinking", {"status": "OK"}),
        ("sequential_thinking", {"next": "STOP"}),
        ("sequential_thinking", {"of": None}),
    ],
)
async def test_the_published_schemas_refuse_a_reply_of_the_wrong_shape(tool: str, breakage: dict[str, Any]) -> None:
    arguments = CALLS[tool][0][1]
    async with Client(build_server(Settings())) as client:
        schema = (await schemas_of(client))[tool]
        reply = (await client.call_tool(tool, arguments)).structured_content
    assert reply is not None

    validate(schema, reply)
    with pytest.raises(jsonschema.ValidationError):
        validate(schema, reply | breakage)
    missing = sorted(REQUIRED[tool])[0]
    with pytest.raises(jsonschema.ValidationError):
        validate(schema, {k: v for k, v in reply.items() if k != missing})


async def test_the_minimal_tool_echoes_total_steps_as_the_seed_does() -> None:
    async with Client(build_server(Settings())) as client:
        beyond = await client.call_tool("sequential_thinking", minimal("Step five of three.", 5, 3, "CONTINUE"))
        within = await client.call_tool("sequential_thinking", minimal("Step two of three.", 2, 3, "CONTINUE"))

    assert beyond.structured_content == {
        "status": "THOUGHT_RECORDED",
        "step": 5,
        "of": 3,
        "thought": "Step five of three.",
        "next": "CONTINUE",
    }
    assert within.structured_content is not None and within.structured_content["of"] == 3


async def test_the_session_list_gives_iso_times_like_the_session_resources() -> None:
    async with Client(build_server(Settings())) as client:
        await client.call_tool("sequentialthinking", thought("Restate the problem.", 1))
        await client.call_tool("crash", step(1, session_id="steps"))
        listing = json.loads(text_of_resource(await client.read_resource("thinking://sessions")))
        session = json.loads(text_of_resource(await client.read_resource("thinking://sessions/contract")))

    iso = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
    assert {s["id"] for s in listing} == {"contract", "steps"}
    for summary in listing:
        assert set(summary) == {"id", "tool", "created", "updated", "entries"}
        assert iso.match(summary["created"]) and iso.match(summary["updated"]), summary
    listed = next(s for s in listing if s["id"] == "contract")
    assert (listed["created"], listed["updated"]) == (session["created"], session["updated"])


def text_of_resource(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.contents)
