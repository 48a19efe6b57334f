"""The data the multi-agent core hands back: what ran, what it cost, what it concluded.

These shapes are part of the `sequentialthinking` reply contract; record-only replies carry them empty.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

Hat = Literal["factual", "emotional", "critical", "optimistic", "creative"]
HATS: tuple[Hat, ...] = ("factual", "emotional", "critical", "optimistic", "creative")
Role = Literal["factual", "emotional", "critical", "optimistic", "creative", "synthesis"]
ROLES: tuple[Role, ...] = (*HATS, "synthesis")
RunStatus = Literal["ok", "failed", "timeout", "cancelled", "skipped"]


class _Wire(BaseModel):
    # defer_build: each model builds its validator at its first use, not at import (start-up is every client's
    # wait); the replies' schemas are built when the tools are registered either way.
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True, defer_build=True
    )


class Factor(_Wire):
    name: str
    points: float = Field(description="Contribution to the 0-100 score.")
    detail: str = ""


class Complexity(_Wire):
    score: float = 0
    factors: list[Factor] = Field(default_factory=list)


class HatRun(_Wire):
    hat: Role
    status: RunStatus
    ms: int = 0
    tokens: int = 0
    output: str | None = Field(default=None, description="The hat's analysis, when it succeeded.")
    error: str | None = None


class Analysis(_Wire):
    strategy: str = "none"
    complexity: Complexity = Field(default_factory=Complexity)
    hats: list[HatRun] = Field(default_factory=list)
    synthesis: str | None = None
    problems: list[str] = Field(default_factory=list)


class Usage(_Wire):
    llm_calls: int = 0
    input_tokens: int = Field(default=0, description="Every prompt token sent, whether the provider cached it or not.")
    output_tokens: int = 0
    cached_input_tokens: int = Field(default=0, description="Of inputTokens: read from the provider's prompt cache.")
    cache_creation_tokens: int = Field(default=0, description="Of inputTokens: written to the provider's prompt cache.")

    def add(self, other: Usage) -> Usage:
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_creation_tokens=self.cache_creation_tokens + other.cache_creation_tokens,
        )


@dataclass(frozen=True)
class ThoughtContext:
    """What the hats see of a session: bounded, whatever the session's length."""

    thought: str
    thought_number: int
    total_thoughts: int
    problem: str | None = None
    revised: tuple[int, str] | None = None  # (number, text) of the thought being revised
    branch_origin: tuple[int, str] | None = None  # (number, text) the branch starts from
    branch_id: str | None = None
    recent: tuple[tuple[int, str], ...] = ()  # last few thoughts before this one, oldest first
    previous_synthesis: str | None = None
    confidence: float | None = None
    purpose: str | None = None  # a `crash` step's purpose ("hypothesis", "decision", ...)


@dataclass
class Outcome:
    analysis: Analysis
    usage: Usage = field(default_factory=Usage)
    # Set when no model call succeeded: the one-line fix to show the user ("401 from openai: check OPENAI_API_KEY").
    failure: str | None = None


# progress(done, total, message): awaited as each hat finishes and when synthesis ends.
ProgressFn = Callable[[int, int, str], Awaitable[None]]
