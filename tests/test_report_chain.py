"""The Markdown report draws the chain in Mermaid, and no client text in it is live: not in the diagram, not as
Markdown (links, images) nor as HTML."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from mcp import Client
from tests.test_resources import read, record_a_session, thought

from thinking_hats.config import Settings
from thinking_hats.server import build_server

HOSTILE = (
    'Plan"] --> evil["owned"]\nclick t1 call alert(1)\n%%{init: {"securityLevel": "loose"}}%%\n'
    "```\n<script>alert(1)</script></textarea> [a](javascript:alert(1)) ![x](http://tracker.example/p.png)"
)


def mermaid_block(report: str) -> list[str]:
    start = report.index("```mermaid\n") + len("```mermaid\n")
    return report[start : report.index("\n```\n", start)].split("\n")


async def test_the_report_draws_the_chain_with_its_revision_and_branch() -> None:
    async with Client(build_server(Settings(thinking_store="memory"))) as client:
        await record_a_session(client)
        report, _ = await read(client, "thinking://sessions/plan/report")
    block = mermaid_block(report)
    assert block[0] == "flowchart TD"
    assert "  t1 --> t2" in block and "  t2 --> t3" in block
    assert "  t3 -. revises .-> t2" in block
    assert "  t1 == branch ==> t4" in block
    assert sum(1 for line in block if re.match(r"^  t\d+\[", line)) == 4


async def test_thought_text_cannot_break_out_of_or_inject_into_the_mermaid_diagram() -> None:
    async with Client(build_server(Settings(thinking_store="memory"))) as client:
        result = await client.call_tool("sequentialthinking", thought(HOSTILE, 1, sessionId="evil"))
        assert not result.is_error
        await client.call_tool("sequentialthinking", thought("then", 2, sessionId="evil"))
        report, _ = await read(client, "thinking://sessions/evil/report")
    block = mermaid_block(report)
    # Exactly the two nodes and one edge: each label one quoted run of letters, digits, spaces and entity codes.
    assert block[1:] == [block[1], block[2], "  t1 --> t2"]
    for line in block[1:3]:
        assert re.fullmatch(r'  t\d+\["[A-Za-z0-9 ]*(?:#\d+;[A-Za-z0-9 ]*)*"\]', line), line
    assert "click" not in " ".join(block[3:]) and "%%" not in "\n".join(block)


async def test_a_markdown_link_or_image_in_a_thought_is_inert_in_the_report() -> None:
    async with Client(build_server(Settings(thinking_store="memory"))) as client:
        text = "See [a](javascript:alert(1)) and ![x](http://tracker.example/p.png)\n[r]: javascript:alert(2)\n[r]"
        await client.call_tool("sequentialthinking", thought(text, 1, sessionId="links"))
        report, _ = await read(client, "thinking://sessions/links/report")
    renderer = MarkdownIt("commonmark")  # CommonMark with raw HTML on, as a client's renderer may be
    renderer.validateLink = lambda url: True  # and one that does not filter javascript: links itself
    rendered = renderer.render(report)
    assert "<a " not in rendered and "<img" not in rendered
    assert "javascript:alert(1)" in rendered and "tracker.example" in rendered  # still there, as text
