"""The floor of the Python stack: a bare mcp 2.x `MCPServer` with one echo tool shaped like `sequentialthinking`.

Same name, same arguments and the same structured reply as the reference TypeScript server
(`@modelcontextprotocol/server-sequential-thinking`), with nothing behind it: no store, no settings, no router.
Whatever thinking-hats costs beyond this server is ours; what this server costs is the SDK's.

    python benchmarks/floor_server.py     # serves stdio; the benchmark starts it as a subprocess
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, ConfigDict, Field

# The reply declares its JSON Schema dialect as the reference server's does (zod emits draft-07): a client that
# validates each reply (the mcp 1.x Python client) checks an undeclared schema against the far costlier draft
# 2020-12 meta-schema, which would make the floor slower than the servers it is the floor of.
DRAFT_07 = "http://json-schema.org/draft-07/schema#"


class Echo(BaseModel):
    model_config = ConfigDict(json_schema_extra={"$schema": DRAFT_07})

    # The wire names, as the reference server sends them.
    thoughtNumber: int
    totalThoughts: int
    nextThoughtNeeded: bool
    branches: list[str]
    thoughtHistoryLength: int


def build() -> MCPServer:
    server = MCPServer("floor")
    history: list[int] = []

    @server.tool(name="sequentialthinking", description="Echo one thought (the benchmark's floor).")
    def sequentialthinking(
        thought: Annotated[str, Field(min_length=1)],
        thought_number: Annotated[int, Field(validation_alias="thoughtNumber", ge=1)],
        total_thoughts: Annotated[int, Field(validation_alias="totalThoughts", ge=1)],
        next_thought_needed: Annotated[bool, Field(validation_alias="nextThoughtNeeded")],
        is_revision: Annotated[bool | None, Field(validation_alias="isRevision")] = None,
        revises_thought: Annotated[int | None, Field(validation_alias="revisesThought", ge=1)] = None,
        branch_from_thought: Annotated[int | None, Field(validation_alias="branchFromThought", ge=1)] = None,
        branch_id: Annotated[str | None, Field(validation_alias="branchId")] = None,
        needs_more_thoughts: Annotated[bool | None, Field(validation_alias="needsMoreThoughts")] = None,
    ) -> Echo:
        history.append(thought_number)
        return Echo(
            thoughtNumber=thought_number,
            totalThoughts=max(thought_number, total_thoughts),
            nextThoughtNeeded=next_thought_needed,
            branches=[branch_id] if branch_id else [],
            thoughtHistoryLength=len(history),
        )

    return server


if __name__ == "__main__":
    build().run()
