"""The documentation pages generated from the code are the ones committed: they cannot drift from `Settings` or
from the tools the server publishes."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import jsonschema
import pytest

from thinking_hats.config import Settings
from thinking_hats.server import build_server

DOCS = Path(__file__).resolve().parent.parent / "docs"


def reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference", DOCS / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", ["configuration.md", "tool-schemas.md"])
def test_the_committed_generated_page_is_what_the_code_gives(page: str) -> None:
    committed = (DOCS / page).read_text(encoding="utf-8")
    assert committed == reference().PAGES[page](), f"docs/{page} is out of date: run python docs/reference.py"


def test_the_configuration_reference_lists_every_documented_setting_with_its_default() -> None:
    page = reference().configuration_page()
    for name, field in Settings.model_fields.items():
        if field.description:
            row = next(line for line in page.splitlines() if line.startswith(f"| `{name.upper()}` |"))
            assert field.description.replace("|", "\\|") in row
    assert "| `THINKING_DEADLINE` | number | `45` |" in page
    assert "| `THINKING_HTTP_TOKEN` | secret | unset |" in page


def test_every_example_on_the_tools_page_fits_the_schema_the_server_publishes() -> None:
    tools = {t.name: t for t in asyncio.run(build_server(Settings(thinking_store="memory")).list_tools())}
    kinds = [  # (a key only that example has, tool, which schema)
        ("thoughtHistoryLength", "sequentialthinking", "output_schema"),
        ("thoughtNumber", "sequentialthinking", "input_schema"),
        ("completed", "crash", "output_schema"),
        ("purpose", "crash", "input_schema"),
        ("status", "sequential_thinking", "output_schema"),
        ("total_steps", "sequential_thinking", "input_schema"),
    ]
    examples = [json.loads(b) for b in re.findall(r"^```json\n(.*?)^```", (DOCS / "tools.md").read_text(), re.S | re.M)]
    checked = set()
    for example in examples:
        key, tool, schema = next(kind for kind in kinds if kind[0] in example)
        jsonschema.validate(example, getattr(tools[tool], schema))
        checked.add(key)
    assert checked == {kind[0] for kind in kinds}  # an input and a reply of each tool


def test_no_walkthrough_step_opens_the_callers_stderr_or_stdout_by_path() -> None:
    # `tee /dev/stderr` opens the caller's stderr afresh, truncating a log file that CI redirected it to: a green
    # run's log came back as NUL bytes and its last lines. The shell's own `>&2` shares the descriptor instead.
    text = (DOCS / "deployment.md").read_text(encoding="utf-8")
    steps = re.findall(r"<!-- walkthrough(?:: [a-z ]+)? -->\s*```bash\n(.*?)```", text, re.DOTALL)
    assert len(steps) >= 5, "deployment.md no longer marks its walkthrough steps"
    opened = [line for step in steps for line in step.splitlines() if re.search(r"/dev/std(err|out)\b", line)]
    assert opened == []


def test_the_deployment_page_runs_as_root_without_sudo_and_keeps_systemd_to_its_own_blocks() -> None:
    # Debian does not install sudo when root has a password, and a container has no systemd: every step the
    # walkthrough runs on any machine works without either; a systemd step has its plain counterpart.
    text = (DOCS / "deployment.md").read_text(encoding="utf-8")
    marked = re.findall(r"<!-- walkthrough(?:: ([a-z ]+))? -->\s*```bash\n(.*?)```", text, re.DOTALL)
    kinds = [kind for kind, _ in marked]
    assert set(kinds) == {"", "systemd", "without systemd"}
    assert kinds.count("systemd") == kinds.count("without systemd") >= 2
    assert [b for _, b in marked if re.search(r"\bsudo\b", b)] == []
    assert [b for kind, b in marked if kind != "systemd" and re.search(r"\b(systemctl|journalctl)\b", b)] == []
    steps = "".join(b for _, b in marked)
    # Step 2 installs from a wheel built from the checkout (the package is not on the index), and nginx gets a
    # site of its own beside Debian's default one, which is never removed.
    assert "pip wheel" in steps and '"$SRC"' in steps and "pip install 'thinking-hats" not in text
    assert "/etc/nginx/sites-enabled/thinking-hats" in steps and "sites-enabled/default" not in steps
    assert "pg_ctlcluster 15 main start" in steps


def test_every_word_healthz_can_answer_is_explained_in_the_deployment_page() -> None:
    source = (DOCS.parent / "src" / "thinking_hats" / "serving" / "gate.py").read_text()
    words = set(re.findall(r'"store": "([a-z ]+)"', source))
    page = (DOCS / "deployment.md").read_text()
    assert words == {"unreachable", "not answering", "busy", "failing"}
    assert all(f"| `{word}` |" in page for word in words), words
