"""A prompt override that cannot render is caught up front (doctor, start-up), naming the file and the variable."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from fakes import FakeLLM
from thinking_hats.analysis import ThoughtContext
from thinking_hats.cli.doctor import run_doctor
from thinking_hats.cli.main import main
from thinking_hats.config import Settings
from thinking_hats.hats.augmenter import build_augmenter
from thinking_hats.hats.prompts import PROMPT_VARIABLES, Prompts, thought_variables
from thinking_hats.server import build_server


def override(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_prompts_have_no_problems() -> None:
    for pack in Prompts().packs():
        assert Prompts(pack).problems() == [], pack


def test_an_unknown_variable_is_named_with_its_file_and_what_the_prompt_is_given(tmp_path: Path) -> None:
    critical = override(tmp_path, "critical", "You are the critical hat. Mind the {{ colour }}.")
    thought = override(tmp_path, "thought", "{{ thought }} ({{ number }} of {{ total }}) {{ mood }} {{ tone }}")

    problems = Prompts(override_dir=tmp_path).problems()

    assert problems == [
        f"prompt 'critical' ({critical}) uses unknown variable {{{{ colour }}}}: it is given none; remove or rename it",
        f"prompt 'thought' ({thought}) uses unknown variables {{{{ mood }}}}, {{{{ tone }}}}: it is given only "
        "thought, number, total, context; remove or rename it",
    ]


def test_a_prompt_that_cannot_be_read_is_a_problem_too(tmp_path: Path) -> None:
    (tmp_path / "factual.md").write_bytes(b"\xff\xfe not utf-8")
    (problem,) = Prompts(override_dir=tmp_path).problems()
    assert "cannot read prompt 'factual'" in problem and str(tmp_path / "factual.md") in problem


async def test_doctor_fails_on_an_unknown_variable_and_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = override(tmp_path / "prompts", "analyses", "{{ analyses }} for {{ audience }}")
    settings = Settings(thinking_store="memory", thinking_prompts_dir=tmp_path / "prompts")

    code = await run_doctor(settings)

    out = capsys.readouterr().out
    assert code == 1, out
    assert f"FAILED: prompt 'analyses' ({path}) uses unknown variable {{{{ audience }}}}" in out
    assert "Some checks failed" in out


async def test_doctor_passes_a_valid_override(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    override(tmp_path / "prompts", "critical", "You are the critical hat. Be brief.")
    code = await run_doctor(Settings(thinking_store="memory", thinking_prompts_dir=tmp_path / "prompts"))
    out = capsys.readouterr().out
    assert code == 0, out
    assert "All checks passed" in out


def test_start_up_turns_augmentation_off_with_the_fix(openai_llm: FakeLLM, tmp_path: Path) -> None:
    path = override(tmp_path, "thought", "{{ thought }} {{ nonsense }}")
    augmenter, problem = build_augmenter(openai_llm.settings(thinking_prompts_dir=tmp_path))
    assert augmenter is None
    assert problem is not None and str(path) in problem and "{{ nonsense }}" in problem


async def test_over_mcp_a_bad_override_records_the_thought_and_says_why_no_hats_ran(
    openai_llm: FakeLLM, tmp_path: Path
) -> None:
    path = override(tmp_path, "critical", "You are the critical hat of {{ team }}.")
    settings = openai_llm.settings(thinking_prompts_dir=tmp_path)
    thought = {"thought": "Is the plan sound?", "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": True}

    async with Client(build_server(settings)) as client:
        result = await client.call_tool("sequentialthinking", thought | {"strategy": "full"})

    assert not result.is_error
    reply = result.structured_content
    assert reply is not None and reply["mode"] == "record-only" and reply["thoughtHistoryLength"] == 1
    assert any(str(path) in p and "{{ team }}" in p for p in reply["analysis"]["problems"])
    assert openai_llm.history == []  # no hat ran with a prompt it could not render


def test_think_says_why_augmentation_is_off_instead_of_a_traceback(
    openai_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    override(tmp_path / "prompts", "synthesis", "Merge for {{ reader }}.")
    for name, value in {
        "LLM_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-fake-openai",
        "THINKING_PROMPTS_DIR": str(tmp_path / "prompts"),
        "THINKING_DATA_DIR": str(tmp_path / "data"),
    }.items():
        monkeypatch.setenv(name, value)

    code = main(["think", "Should we ship on Friday?", "--strategy", "double"])

    out, err = capsys.readouterr()
    assert code == 1, err  # as `doctor` fails for the same override
    assert "Thought 1/1 recorded" in out and "Augmentation is off" in out  # recorded, as in record-only mode
    assert "model augmentation is off" in err and "{{ reader }}" in err and "Traceback" not in err
    assert openai_llm.history == []


def test_the_check_allows_exactly_the_variables_the_orchestrator_passes() -> None:
    # If thought_variables() gains a variable, the check must allow it, or a valid override would be refused.
    assert set(PROMPT_VARIABLES["thought"]) == set(thought_variables(ThoughtContext("t", 1, 1)))
