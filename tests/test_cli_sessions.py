"""`thinking-hats sessions`: export formats follow the file name, the list has a header, counts read right."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from mcp import Client

from thinking_hats.cli.main import main
from thinking_hats.config import Settings
from thinking_hats.server import build_server


@pytest.fixture
def one_thought() -> str:
    async def record() -> None:
        async with Client(build_server(Settings())) as client:
            arguments = {"thought": "Only one.", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False}
            assert not (await client.call_tool("sequentialthinking", arguments | {"sessionId": "solo"})).is_error

    asyncio.run(record())
    return "solo"


@pytest.mark.parametrize(
    ("name", "given", "written"),
    [
        ("session.json", [], "json"),
        ("SESSION.JSON", [], "json"),
        ("session.md", [], "md"),
        ("session.txt", [], "md"),
        ("session.json", ["--format", "md"], "md"),
        ("session.md", ["--format", "json"], "json"),
    ],
)
def test_export_to_a_file_takes_its_format_from_the_extension_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], one_thought: str, name: str, given: list[str], written: str
) -> None:
    target = tmp_path / name
    assert main(["sessions", "export", one_thought, "-o", str(target), *given]) == 0
    text = target.read_text(encoding="utf-8")
    if written == "json":
        assert json.loads(text)["id"] == one_thought
    else:
        assert text.startswith(f"# Session `{one_thought}`")
    assert str(target) in capsys.readouterr().err


def test_export_to_stdout_is_markdown_unless_told(capsys: pytest.CaptureFixture[str], one_thought: str) -> None:
    assert main(["sessions", "export", one_thought]) == 0
    assert capsys.readouterr().out.startswith("# Session `solo`")


def test_sessions_list_has_a_header_and_aligned_columns(capsys: pytest.CaptureFixture[str], one_thought: str) -> None:
    assert main(["sessions", "list"]) == 0
    header, row = capsys.readouterr().out.splitlines()

    assert header.split() == ["SESSION", "TOOL", "ENTRIES", "UPDATED", "PRINCIPAL"]
    assert row.split()[:3] == ["solo", "sequentialthinking", "1"] and row.split()[-1] == "local"
    assert "entries" not in row
    assert row.index("sequentialthinking") == header.index("TOOL")
    assert row.index(" 1 ") + 2 == header.index("ENTRIES") + len("ENTRIES")  # numbers right-aligned


def test_a_report_of_one_entry_says_one_entry(capsys: pytest.CaptureFixture[str], one_thought: str) -> None:
    assert main(["sessions", "show", one_thought]) == 0
    out = capsys.readouterr().out
    assert "\n1 entry · started" in out and "1 entries" not in out


@pytest.mark.parametrize("order", ["after the action", "before the action"])
def test_the_principal_filter_goes_before_or_after_the_action(
    capsys: pytest.CaptureFixture[str], one_thought: str, order: str
) -> None:
    def listing(principal: str) -> str:
        flag = ["--principal", principal]
        argv = ["sessions", "list", *flag] if order == "after the action" else ["sessions", *flag, "list"]
        assert main(argv) == 0
        return capsys.readouterr().out

    assert one_thought in listing("local")
    assert one_thought not in listing("bob")
