"""Keys and the HTTP token never show: not in logs, replies, exports, resources, doctor output or errors."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from mcp import Client

from fakes import FakeLLM
from thinking_hats.cli.main import main
from thinking_hats.server import build_server

OPENAI_KEY = "sk-LEAKCHECK-openai-0123456789"
TOKEN = "tok-LEAKCHECK-http-9876543210"
OTHER_KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-LEAKCHECK-anthropic",
    "GROQ_API_KEY": "gsk-LEAKCHECK-groq",
    "GITHUB_TOKEN": "ghp-LEAKCHECK-github",
}
SECRETS = [OPENAI_KEY, TOKEN, *OTHER_KEYS.values()]


@pytest.fixture
def leaky_env(openai_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    """A configured provider whose 401 echoes the key back, as OpenAI's does, with every secret set."""
    monkeypatch.setenv("LLM_PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("THINKING_HTTP_TOKEN", TOKEN)
    monkeypatch.setenv("THINKING_LOG_LEVEL", "DEBUG")  # the most talkative setting
    monkeypatch.setenv("DISABLE_THOUGHT_LOGGING", "false")
    monkeypatch.setenv("THINKING_RETRY_WAIT", "0")
    for name, value in OTHER_KEYS.items():
        monkeypatch.setenv(name, value)
    echo = openai_llm.error(401, message=f"Incorrect API key provided: {OPENAI_KEY}.")
    openai_llm.enqueue("*", *([echo] * 10))
    return openai_llm


def assert_clean(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{where} shows a secret"
        assert secret[-10:] not in text, f"{where} shows part of a secret"


def test_no_secret_appears_in_any_output(leaky_env: FakeLLM, capfd: pytest.CaptureFixture[str]) -> None:
    # CLI commands: think (a 401 whose body echoes the key), doctor, sessions list/show/export.
    assert main(["think", "A thought that will fail.", "--strategy", "double", "--session", "leak"]) == 1
    assert main(["doctor"]) == 0  # the models list answers: reachable
    for args in (
        ["sessions", "list"],
        ["sessions", "show", "leak"],
        ["sessions", "export", "leak", "--format", "json"],
    ):
        assert main(args) == 0
    out, err = capfd.readouterr()
    assert "401 from openai: check OPENAI_API_KEY" in out
    assert "OPENAI_API_KEY" in out and "set (hidden)" in out  # doctor says it is set, not what it is
    assert_clean(out, "stdout")
    assert_clean(err, "stderr (logs, trace)")


async def test_no_secret_appears_in_mcp_replies_or_resources(
    leaky_env: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    from thinking_hats.config import Settings

    caplog.set_level(logging.DEBUG)
    shown: list[str] = []
    async with Client(build_server(Settings())) as client:
        for number, args in enumerate(
            [{"strategy": "full"}, {"strategy": "single"}, {"thoughtNumber": "x"}, {"revisesThought": 99}], 1
        ):
            call: dict[str, Any] = {
                "thought": f"Thought {number}",
                "thoughtNumber": number,
                "totalThoughts": 4,
                "nextThoughtNeeded": True,
                "sessionId": "leak",
                **args,
            }
            result = await client.call_tool("sequentialthinking", call)
            shown.append(result.model_dump_json())
        for uri in ("thinking://sessions", "thinking://sessions/leak", "thinking://sessions/leak/report"):
            shown.append((await client.read_resource(uri)).model_dump_json())
        crash = await client.call_tool("crash", {"step_number": 1, "thought": OPENAI_KEY[:3]})
        shown.append(crash.model_dump_json())
    assert any("check OPENAI_API_KEY" in s for s in shown)
    for text in shown:
        assert_clean(text, "an MCP reply")
    assert_clean("\n".join(r.getMessage() for r in caplog.records), "log records")


def test_settings_never_print_their_secrets(leaky_env: FakeLLM) -> None:
    from thinking_hats.config import Settings

    settings = Settings()
    assert_clean(repr(settings), "repr(Settings)")
    assert_clean(str(settings.model_dump()), "Settings.model_dump()")
    assert_clean(json.dumps(settings.model_dump(mode="json")), "Settings as JSON")


async def test_agno_telemetry_sends_nothing(openai_llm: FakeLLM, llm_router: Any) -> None:
    async with Client(build_server(openai_llm.settings())) as client:
        await client.call_tool(
            "sequentialthinking",
            {"thought": "Weigh it all.", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False,
             "strategy": "full"},
        )  # fmt: skip
    hosts = {call.request.url.host for call in llm_router.calls}
    assert hosts == {"api.openai.com"}  # six completions, and no request anywhere else (agno's API included)
    assert len(llm_router.calls) == 6
