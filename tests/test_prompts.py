"""Prompt files: rendered by name with explicit variables, overridable per file, shipped inside the wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from thinking_hats.analysis import HATS, ThoughtContext
from thinking_hats.config import load_settings
from thinking_hats.hats.prompts import PROMPT_NAMES, PromptError, Prompts, builtin_dir, clip, thought_variables

REPO = Path(__file__).resolve().parents[1]

FULL_CONTEXT = ThoughtContext(
    thought="Should we roll back the release?",
    thought_number=4,
    total_thoughts=6,
    problem="The 2.3 release doubled p99 latency.",
    revised=(2, "The regression is in the ORM upgrade."),
    branch_origin=(3, "Profile the hot path first."),
    branch_id="rollback",
    recent=((2, "The regression is in the ORM upgrade."), (3, "Profile the hot path first.")),
    previous_synthesis="The ORM upgrade is the likeliest cause; confirm with a profile.",
    confidence=0.4,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_built_in_prompts_come_with_a_default_and_a_clinical_pack() -> None:
    assert {"default", "clinical"} <= set(Prompts().packs())
    for name in PROMPT_NAMES:
        assert (builtin_dir() / "default" / f"{name}.md").is_file(), name


@pytest.mark.parametrize("pack", ["default", "clinical"])
@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_every_built_in_prompt_renders_with_the_variables_the_orchestrator_passes(pack: str, name: str) -> None:
    prompts = Prompts(pack)
    variables: dict[str, str] = {
        "thought": thought_variables(FULL_CONTEXT),
        "analyses": {"thought_message": "## Current thought (1 of 1)", "analyses": "### factual hat\n\nok"},
    }.get(name, {})
    rendered = prompts.render(name, **variables)
    assert "{{" not in rendered and "}}" not in rendered
    assert rendered.strip() and rendered.endswith("\n")


@pytest.mark.parametrize("pack", ["default", "clinical"])
def test_system_prompts_take_no_variables_and_stay_short(pack: str) -> None:
    prompts = Prompts(pack)
    for name in (*HATS, "synthesis"):
        assert prompts.variables(name) == [], name
        assert len(prompts.render(name).split()) <= 150, name


def test_hat_prompts_ask_for_a_concise_answer_without_preamble() -> None:
    prompts = Prompts()
    for name in HATS:
        text = prompts.render(name)
        assert "120 words" in text and "No preamble" in text, name
    synthesis = prompts.render("synthesis")
    assert "150 words" in synthesis and "never mention, quote or invent a hat" in synthesis


def test_the_thought_message_names_its_variables_explicitly() -> None:
    assert Prompts().variables("thought") == ["context", "number", "total", "thought"]


def test_the_thought_message_carries_the_thought_its_position_and_the_bounded_context() -> None:
    rendered = Prompts().render("thought", **thought_variables(FULL_CONTEXT))
    assert "## Current thought (4 of 6)" in rendered
    assert rendered.rstrip().endswith("Should we roll back the release?")
    for expected in (
        "The 2.3 release doubled p99 latency.",
        "## This thought revises thought 2",
        "## This thought starts branch 'rollback' from thought 3",
        "- Thought 3: Profile the hot path first.",
        "## Previous synthesis",
        "confidence in this thought: 0.40",
    ):
        assert expected in rendered


def test_a_first_thought_renders_without_empty_sections() -> None:
    first = ThoughtContext(thought="Where do we start?", thought_number=1, total_thoughts=3)
    rendered = Prompts().render("thought", **thought_variables(first))
    assert rendered == "## Current thought (1 of 3)\n\nWhere do we start?\n"


def test_the_context_block_stays_bounded_however_long_the_earlier_thoughts_are() -> None:
    def size(text_length: int) -> int:
        long = "word " * text_length
        context = ThoughtContext(
            thought="Next?",
            thought_number=50,
            total_thoughts=50,
            problem=long,
            revised=(10, long),
            recent=((47, long), (48, long), (49, long)),
            previous_synthesis=long,
        )
        return len(Prompts().render("thought", **thought_variables(context, max_chars=500)))

    assert size(10_000) == size(100_000)
    assert size(100_000) < 6 * 520 + 400


def test_clip_cuts_at_a_word_and_marks_the_cut() -> None:
    assert clip("short", 10) == "short"
    assert clip("alpha beta gamma delta", 12) == "alpha beta …"
    assert clip("x" * 50, 10) == "x" * 10 + " …"


def test_a_missing_variable_names_the_variable_the_prompt_and_the_file() -> None:
    prompts = Prompts()
    with pytest.raises(PromptError) as caught:
        prompts.render("thought", thought="t", number=1, total=2)
    message = str(caught.value)
    assert "'context'" in message
    assert "'thought'" in message
    assert str(builtin_dir() / "default" / "thought.md") in message
    assert isinstance(caught.value, ValueError)


def test_every_missing_variable_is_named_at_once() -> None:
    with pytest.raises(PromptError, match="'context', 'number', 'total', 'thought'"):
        Prompts().render("thought")


def test_placeholders_allow_whitespace_and_extra_variables_are_ignored(tmp_path: Path) -> None:
    write(tmp_path / "factual.md", "A={{a}} B={{   b }} C={{\tc\t}}")
    rendered = Prompts(override_dir=tmp_path).render("factual", a=1, b="two", c=3.5, unused="x")
    assert rendered == "A=1 B=two C=3.5\n"


def test_values_are_never_expanded_as_templates() -> None:
    rendered = Prompts().render("thought", thought="use {{ context }} here", number=1, total=1, context="")
    assert "use {{ context }} here" in rendered


def test_an_override_directory_wins_for_one_name_while_the_others_fall_back(tmp_path: Path) -> None:
    mine = write(tmp_path / "critical.md", "Be harsh. Thought {{ number }}.")
    prompts = Prompts(override_dir=tmp_path)
    assert prompts.source("critical") == mine
    assert prompts.render("critical", number=3) == "Be harsh. Thought 3.\n"
    for name in PROMPT_NAMES:
        if name != "critical":
            assert prompts.source(name) == builtin_dir() / "default" / f"{name}.md"


def test_thinking_prompts_dir_and_pack_come_from_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    mine = write(tmp_path / "overrides" / "synthesis.md", "Merge.")
    monkeypatch.setenv("THINKING_PROMPTS_DIR", str(tmp_path / "overrides"))
    monkeypatch.setenv("THINKING_PROMPT_PACK", "clinical")
    prompts = Prompts.from_settings(load_settings())
    assert prompts.pack == "clinical"
    assert prompts.source("synthesis") == mine
    assert prompts.source("critical") == builtin_dir() / "clinical" / "critical.md"
    assert prompts.source("thought") == builtin_dir() / "default" / "thought.md"


def test_the_override_beats_the_pack_too(tmp_path: Path) -> None:
    mine = write(tmp_path / "factual.md", "Only facts.")
    assert Prompts("clinical", override_dir=tmp_path).source("factual") == mine


def test_an_override_directory_that_does_not_exist_is_reported(tmp_path: Path) -> None:
    with pytest.raises(PromptError, match="THINKING_PROMPTS_DIR"):
        Prompts(override_dir=tmp_path / "missing")


def test_the_clinical_pack_differs_from_default_and_falls_back_for_missing_names() -> None:
    default, clinical = Prompts(), Prompts("clinical")
    for name in (*HATS, "synthesis"):
        assert clinical.source(name) == builtin_dir() / "clinical" / f"{name}.md"
        assert clinical.render(name) != default.render(name), name
    assert not (builtin_dir() / "clinical" / "thought.md").exists()
    assert clinical.source("thought") == default.source("thought")
    assert "clinical" in clinical.render("critical").lower()


def test_an_unknown_pack_lists_the_available_packs() -> None:
    with pytest.raises(PromptError) as caught:
        Prompts("legal")
    message = str(caught.value)
    assert "'legal'" in message and "clinical" in message and "default" in message


@pytest.mark.parametrize("name", ["nonexistent", "../README", "", "default/factual"])
def test_an_unknown_or_unsafe_prompt_name_is_refused(name: str) -> None:
    with pytest.raises(PromptError):
        Prompts().render(name)


def test_files_are_read_once_and_cached(tmp_path: Path) -> None:
    path = write(tmp_path / "factual.md", "first version")
    prompts = Prompts(override_dir=tmp_path)
    assert prompts.render("factual") == "first version\n"
    path.write_text("second version", encoding="utf-8")
    assert prompts.render("factual") == "first version\n"
    assert Prompts(override_dir=tmp_path).render("factual") == "second version\n"


def test_a_checkout_uses_the_repository_prompts_folder() -> None:
    assert builtin_dir() == REPO / "prompts"


def test_the_wheel_ships_the_prompts_and_uses_them_when_installed(tmp_path: Path) -> None:
    pytest.importorskip("hatchling", reason="building the wheel needs hatchling in this environment")
    built = subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(tmp_path / "dist")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("thinking_hats-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "site")
    for pack, name in [("default", n) for n in PROMPT_NAMES] + [("clinical", "critical")]:
        assert f"thinking_hats/prompts/{pack}/{name}.md" in names

    # Installed (here: unpacked on sys.path), the package finds the prompts inside itself, not in a checkout.
    probe = (
        "from thinking_hats.hats.prompts import Prompts, builtin_dir; "
        "print(builtin_dir()); print(Prompts('clinical').source('thought'))"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    shown = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    packaged = tmp_path / "site" / "thinking_hats" / "prompts"
    assert shown.stdout.split() == [str(packaged), str(packaged / "default" / "thought.md")]
