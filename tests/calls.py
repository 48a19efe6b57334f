"""What the tests send and read through an MCP client: call arguments, and the text and JSON of replies."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client


def step(number: int, total: int = 4, **extra: Any) -> dict[str, Any]:
    """A valid `crash` step; `extra` adds or overrides fields."""
    return {
        "step_number": number,
        "estimated_total": total,
        "purpose": "analysis",
        "context": "The login page times out under load.",
        "thought": "Let me check the connection pool settings.",
        "outcome": "The pool is capped at 5 connections.",
        "next_action": "Raise the pool size and re-run the load test.",
        "rationale": "To confirm the pool is the bottleneck.",
        **extra,
    }


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def body(result: Any) -> dict[str, Any]:
    """The JSON a tool reply carries as its text (crash's replies and errors)."""
    parsed: dict[str, Any] = json.loads(text_of(result))
    return parsed


async def read_json(client: Client, uri: str) -> Any:
    result = await client.read_resource(uri)
    return json.loads("".join(getattr(c, "text", "") for c in result.contents))
