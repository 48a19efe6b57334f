"""Provider resolution from settings, the messages that name what to set, and the doctor's reachability check."""

from __future__ import annotations

import pytest

from fakes import FakeLLM
from thinking_hats.cli.doctor import run_doctor
from thinking_hats.config import Settings
from thinking_hats.hats.providers import VENDORS, ProviderConfigError, check_reachability, resolve_provider

KEYED = [(name, v.key_setting) for name, v in VENDORS.items() if v.key_required]


def test_no_provider_means_record_only() -> None:
    assert resolve_provider(Settings()) is None


@pytest.mark.parametrize(("name", "key_setting"), KEYED)
def test_each_provider_reads_its_conventional_key_variable(name: str, key_setting: str) -> None:
    provider = resolve_provider(Settings(llm_provider=name, **{key_setting: "secret-123"}))
    assert provider is not None
    assert provider.api_key.get_secret_value() == "secret-123"
    assert provider.base_url.startswith("https://")
    assert provider.model and provider.synthesis_model


@pytest.mark.parametrize(("name", "key_setting"), KEYED)
def test_a_provider_without_its_key_names_the_variable_to_set(name: str, key_setting: str) -> None:
    with pytest.raises(ProviderConfigError, match=key_setting.upper()):
        resolve_provider(Settings(llm_provider=name))


def test_the_variable_names_are_the_conventional_ones() -> None:
    assert {n: v.key_variable for n, v in VENDORS.items()} == {
        "openai": "OPENAI_API_KEY",
        "anthropic": "ANTHROPIC_API_KEY",
        "deepseek": "DEEPSEEK_API_KEY",
        "groq": "GROQ_API_KEY",
        "openrouter": "OPENROUTER_API_KEY",
        "github": "GITHUB_TOKEN",
        "ollama": None,
        "openai-compatible": "LLM_API_KEY",
    }


@pytest.mark.parametrize("name", sorted(VENDORS))
def test_llm_base_url_overrides_the_endpoint_of_every_provider(name: str) -> None:
    settings = Settings(llm_provider=name, llm_api_key="k", llm_model="m", llm_base_url="http://127.0.0.1:9/v1/")
    provider = resolve_provider(settings)
    assert provider is not None and provider.base_url == "http://127.0.0.1:9/v1"


def test_ollama_needs_no_key_and_talks_to_the_local_server() -> None:
    provider = resolve_provider(Settings(llm_provider="ollama"))
    assert provider is not None
    assert provider.base_url == "http://localhost:11434/v1"
    assert provider.describe()["key"] == "none set (this provider needs none)"


def test_an_openai_compatible_server_needs_a_base_url_and_a_model() -> None:
    with pytest.raises(ProviderConfigError, match="LLM_BASE_URL"):
        resolve_provider(Settings(llm_provider="openai-compatible", llm_model="m"))
    with pytest.raises(ProviderConfigError, match="LLM_MODEL"):
        resolve_provider(Settings(llm_provider="openai-compatible", llm_base_url="http://127.0.0.1:8000/v1"))


def test_an_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ProviderConfigError, match="openai, anthropic, deepseek"):
        resolve_provider(Settings(llm_provider="watsonx"))


def test_models_come_from_llm_model_then_the_older_names_then_the_default() -> None:
    base = {"llm_provider": "groq", "groq_api_key": "k"}
    default = resolve_provider(Settings(**base))
    assert default is not None and (default.model, default.synthesis_model) == (
        VENDORS["groq"].model,
        VENDORS["groq"].synthesis_model,
    )
    legacy = resolve_provider(Settings(**base, groq_standard_model_id="small", groq_enhanced_model_id="big"))
    assert legacy is not None and (legacy.model, legacy.synthesis_model) == ("small", "big")
    chosen = resolve_provider(
        Settings(**base, groq_standard_model_id="small", llm_model="mine", llm_synthesis_model="merge")
    )
    assert chosen is not None and (chosen.model, chosen.synthesis_model) == ("mine", "merge")


def test_the_older_variable_names_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_PROVIDER", "deepseek")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "k")
    monkeypatch.setenv("DEEPSEEK_STANDARD_MODEL_ID", "deepseek-chat")
    monkeypatch.setenv("DEEPSEEK_ENHANCED_MODEL_ID", "deepseek-reasoner")
    provider = resolve_provider(Settings())
    assert provider is not None and provider.synthesis_model == "deepseek-reasoner"


def test_the_description_never_shows_the_key() -> None:
    provider = resolve_provider(Settings(llm_provider="openai", openai_api_key="sk-VISIBLE-IF-LEAKED"))
    assert provider is not None
    assert "sk-VISIBLE-IF-LEAKED" not in repr(provider)
    assert "sk-VISIBLE-IF-LEAKED" not in str(provider.describe())


async def test_reachability_is_one_request_to_the_models_list(any_llm: FakeLLM, llm_router: object) -> None:
    provider = resolve_provider(any_llm.settings())
    assert provider is not None
    reachable, detail = await check_reachability(provider)
    assert reachable, detail
    assert any_llm.history == []  # no completion was paid for


async def test_reachability_reports_a_bad_key_with_the_variable(make_llm: object, llm_router: object) -> None:
    import httpx
    import respx

    assert isinstance(llm_router, respx.Router)
    llm_router.get("https://api.openai.com/v1/models").mock(return_value=httpx.Response(401))
    provider = resolve_provider(Settings(llm_provider="openai", openai_api_key="sk-wrong"))
    assert provider is not None
    reachable, detail = await check_reachability(provider)
    assert not reachable and "check OPENAI_API_KEY" in detail


async def test_doctor_reports_the_provider_and_its_reachability(
    openai_llm: FakeLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    code = await run_doctor(openai_llm.settings())
    out = capsys.readouterr().out
    assert code == 0, out
    assert "reachability: ok" in out
    assert "sk-fake-openai" not in out


async def test_doctor_names_the_missing_key(capsys: pytest.CaptureFixture[str]) -> None:
    code = await run_doctor(Settings(llm_provider="anthropic"))
    assert code == 1
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().out
