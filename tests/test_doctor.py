"""`doctor`'s reachability check: no model blamed for a missing models list, and the key variable actually used."""

from __future__ import annotations

import json

import httpx
import pytest
import respx

from thinking_hats.cli.doctor import run_doctor
from thinking_hats.config import Settings
from thinking_hats.hats.providers import check_reachability, resolve_provider

GATEWAY = "https://llm.gateway.test/v1"
COMPATIBLE = {
    "llm_provider": "openai-compatible",
    "llm_base_url": GATEWAY,
    "llm_model": "house-7b",
    "llm_api_key": "sk-house",
    "thinking_store": "memory",
}


def invalid(wire: str = "openai") -> httpx.Response:
    """What a server says to a chat request with no model and no messages."""
    if wire == "anthropic":
        return httpx.Response(400, json={"type": "error", "error": {"type": "invalid_request_error", "message": "x"}})
    return httpx.Response(400, json={"error": {"message": "you must provide a model parameter", "type": "invalid"}})


async def reach(settings: Settings) -> tuple[bool, str]:
    provider = resolve_provider(settings)
    assert provider is not None
    return await check_reachability(provider)


async def test_without_a_models_list_an_empty_chat_request_checks_the_endpoint_at_no_cost(
    llm_router: respx.Router,
) -> None:
    llm_router.get(f"{GATEWAY}/models").mock(return_value=httpx.Response(404))
    chat = llm_router.post(f"{GATEWAY}/chat/completions").mock(return_value=invalid())

    reachable, detail = await reach(Settings(**COMPATIBLE))

    assert reachable, detail
    assert "LLM_MODEL (house-7b) was not checked" in detail and "check LLM_MODEL" not in detail
    (call,) = chat.calls
    assert json.loads(call.request.content) == {}  # no model, no messages: nothing to generate, nothing to pay
    assert call.request.headers["authorization"] == "Bearer sk-house"


async def test_the_anthropic_endpoint_is_probed_the_same_way(llm_router: respx.Router) -> None:
    llm_router.get("https://api.anthropic.com/v1/models").mock(return_value=httpx.Response(404))
    chat = llm_router.post("https://api.anthropic.com/v1/messages").mock(return_value=invalid("anthropic"))

    reachable, detail = await reach(Settings(llm_provider="anthropic", anthropic_api_key="sk-ant"))

    assert reachable, detail
    assert chat.calls.last.request.headers["x-api-key"] == "sk-ant"


async def test_no_models_list_and_no_chat_endpoint_points_at_the_base_url_not_the_model(
    llm_router: respx.Router,
) -> None:
    llm_router.get(f"{GATEWAY}/models").mock(return_value=httpx.Response(404))
    llm_router.post(f"{GATEWAY}/chat/completions").mock(return_value=httpx.Response(404))

    reachable, detail = await reach(Settings(**COMPATIBLE))

    assert not reachable
    assert f"check LLM_BASE_URL ({GATEWAY})" in detail and "LLM_MODEL" not in detail


async def test_a_refused_key_behind_a_missing_models_list_names_the_key(llm_router: respx.Router) -> None:
    llm_router.get(f"{GATEWAY}/models").mock(return_value=httpx.Response(404))
    llm_router.post(f"{GATEWAY}/chat/completions").mock(return_value=httpx.Response(401))

    reachable, detail = await reach(Settings(**COMPATIBLE))

    assert not reachable and "check LLM_API_KEY" in detail


@pytest.mark.parametrize(
    ("status", "expected"), [(500, "the provider is failing"), (400, "check LLM_BASE_URL"), (429, "rate limited")]
)
async def test_a_failing_models_list_never_blames_the_model(
    llm_router: respx.Router, status: int, expected: str
) -> None:
    llm_router.get(f"{GATEWAY}/models").mock(return_value=httpx.Response(status))

    reachable, detail = await reach(Settings(**COMPATIBLE))

    assert not reachable and expected in detail and "LLM_MODEL" not in detail


async def test_doctor_passes_a_server_that_has_no_models_list(
    llm_router: respx.Router, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_router.get(f"{GATEWAY}/models").mock(return_value=httpx.Response(404))
    llm_router.post(f"{GATEWAY}/chat/completions").mock(return_value=invalid())

    code = await run_doctor(Settings(**COMPATIBLE))

    out = capsys.readouterr().out
    assert code == 0, out
    assert "reachability: ok (no models list" in out and "FAILED" not in out


async def test_with_only_llm_api_key_set_doctor_names_llm_api_key(
    llm_router: respx.Router, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_router.get("https://api.openai.com/v1/models").mock(return_value=httpx.Response(401))
    settings = Settings(llm_provider="openai", llm_api_key="sk-generic", thinking_store="memory")

    code = await run_doctor(settings)

    out = capsys.readouterr().out
    assert code == 1
    assert "key: LLM_API_KEY set (hidden)" in out and "check LLM_API_KEY" in out
    assert "OPENAI_API_KEY" not in out.split("\nProvider:")[1]  # listed under Configuration as unset, not blamed


def test_a_failed_call_names_the_key_variable_that_was_set() -> None:
    generic = resolve_provider(Settings(llm_provider="groq", llm_api_key="k"))
    own = resolve_provider(Settings(llm_provider="groq", groq_api_key="k", llm_api_key="other"))
    assert generic is not None and own is not None
    assert generic.fix_for(401) == "check LLM_API_KEY"
    assert own.fix_for(401) == "check GROQ_API_KEY"  # the vendor's own variable wins when both are set


async def test_doctor_lists_every_setting_with_unset_ones_said_and_secrets_masked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = Settings(thinking_store="memory", thinking_http_token="tok-0123456789abcdef", llm_api_key="")

    await run_doctor(settings)

    listed = capsys.readouterr().out.split("\nStore:")[0]
    lines = dict(line.strip().split(" = ", 1) for line in listed.splitlines() if " = " in line)
    assert set(lines) == {name.upper() for name in Settings.model_fields}  # none hidden, none extra
    assert lines["THINKING_HTTP_TOKEN"] == "set (hidden)" and "tok-0123456789abcdef" not in listed
    for unset in ("THINKING_HTTP_TOKENS_FILE", "THINKING_PROMPTS_DIR", "LLM_PROVIDER", "LLM_BASE_URL", "LLM_API_KEY"):
        assert lines[unset] == "(unset)", unset
    assert lines["THINKING_HTTP_ALLOWED_HOSTS"] == "(unset)"  # blank is unset, not an empty right-hand side
    assert lines["LLM_SYNTHESIS_MODEL"] == "(unset)"  # record-only: no model runs
    assert lines["THINKING_DEADLINE"] == "45"


async def test_doctor_shows_the_models_that_run_when_the_model_variables_are_unset(
    llm_router: respx.Router, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_router.get(f"{GATEWAY}/models").mock(return_value=httpx.Response(200, json={"data": []}))
    settings = Settings(**{**COMPATIBLE, "llm_synthesis_model": None, "openai_compatible_enhanced_model_id": None})

    await run_doctor(settings)

    out = capsys.readouterr().out
    assert "  LLM_MODEL = house-7b\n" in out
    assert "  LLM_SYNTHESIS_MODEL = (unset): house-7b is used\n" in out  # the hat model, as the server resolves it
    assert "  LLM_API_KEY = set (hidden)\n" in out and "sk-house" not in out
