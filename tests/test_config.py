"""Settings: the one reader of the environment, mirrored exactly by `.env.example`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from thinking_hats.config import Settings

ENV_EXAMPLE = Path(__file__).resolve().parents[1] / ".env.example"


def example_variables() -> dict[str, str]:
    values: dict[str, str] = {}
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        assert sep, f".env.example: not NAME=value: {line!r}"
        assert name not in values, f".env.example lists {name} twice"
        values[name] = value
    return values


def plain(value: object) -> object:
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def test_env_example_lists_exactly_the_settings_fields() -> None:
    listed = set(example_variables())
    fields = {name.upper() for name in Settings.model_fields}
    assert listed - fields == set(), "listed in .env.example but never read"
    assert fields - listed == set(), "read but missing from .env.example"


def test_env_example_gives_each_variable_its_default() -> None:
    values = example_variables()
    from_example = Settings(**{name.lower(): value for name, value in values.items()})  # type: ignore[arg-type]
    for name, field in Settings.model_fields.items():
        assert plain(getattr(from_example, name)) == plain(field.default), f"{name.upper()}={values[name.upper()]!r}"
        if field.default is None:
            assert values[name.upper()] == "", f"{name.upper()} has no default, so it is listed blank"


def test_env_example_is_a_valid_env_file(tmp_path: Path) -> None:
    # Copying it to .env must start the server with the defaults: nothing in it may fail validation.
    (tmp_path / ".env").write_text(ENV_EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    settings = Settings.read(env_file=tmp_path / ".env")
    assert settings.llm_provider is None and settings.thinking_http_token is None


def test_blank_optional_variables_count_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LLM_PROVIDER", "LLM_MODEL", "OPENAI_API_KEY", "THINKING_HTTP_TOKEN", "THINKING_PROMPTS_DIR"):
        monkeypatch.setenv(name, "")
    monkeypatch.setenv("THINKING_DATA_DIR", "   ")
    settings = Settings()
    assert settings.llm_provider is None
    assert settings.llm_model is None
    assert settings.openai_api_key is None
    assert settings.thinking_http_token is None
    assert settings.thinking_prompts_dir is None
    assert settings.thinking_data_dir is None  # not a data directory at '.'
    assert settings.secrets() == []


def test_seed_compatible_names_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    seed = {
        "DISABLE_THOUGHT_LOGGING": "true",
        "CRASH_STRICT_MODE": "true",
        "MAX_HISTORY_SIZE": "7",
        "CRASH_OUTPUT_FORMAT": "json",
        "CRASH_NO_COLOR": "1",
        "CRASH_SESSION_TIMEOUT": "15",
        "CRASH_MAX_BRANCH_DEPTH": "2",
    }
    for name, value in seed.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.disable_thought_logging is True
    assert settings.crash_strict_mode is True
    assert settings.max_history_size == 7
    assert settings.crash_output_format == "json"
    assert settings.crash_no_color is True
    assert settings.crash_session_timeout == 15
    assert settings.crash_max_branch_depth == 2


def test_variable_names_are_case_insensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("llm_provider", "OpenAI")
    assert Settings().llm_provider == "openai"


def test_a_dotenv_file_in_the_working_directory_is_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("MAX_HISTORY_SIZE=9\nTHINKING_TOOLS=crash\n", encoding="utf-8")
    settings = Settings()  # the tests run in tmp_path
    assert settings.max_history_size == 9 and settings.tools == ("crash",)


def test_arguments_beat_the_environment_which_beats_the_dotenv_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text(
        "MAX_HISTORY_SIZE=9\nTHINKING_TOOLS=crash\nCRASH_STRICT_MODE=true\n", encoding="utf-8"
    )
    monkeypatch.setenv("thinking_tools", "sequential_thinking")  # any case, as before
    monkeypatch.setenv("MAX_HISTORY_SIZE", "7")

    settings = Settings(max_history_size=5)

    assert (settings.max_history_size, settings.tools, settings.crash_strict_mode) == (
        5,
        ("sequential_thinking",),
        True,
    )


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("THINKING_TOOLS", "sequentialthinking,think_harder", "think_harder"),
        ("THINKING_ESCALATION", "1.5", "less than or equal to 0.99"),
        ("THINKING_STORE", "postgres", "sqlite"),
        ("MAX_HISTORY_SIZE", "0", "greater than or equal to 1"),
    ],
)
def test_a_bad_value_is_refused_with_what_is_allowed(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, fragment: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError) as raised:
        Settings()
    assert fragment in str(raised.value)


HEAVY = "sorted({m.split('.')[0] for m in sys.modules} & {'agno', 'openai', 'anthropic'})"


def imported_sdks(code: str, tmp_path: Path) -> str:
    script = f"import sys\n{code}\nprint(','.join({HEAVY}))\n"
    env = {"THINKING_DATA_DIR": str(tmp_path / "data"), "DISABLE_THOUGHT_LOGGING": "true"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_the_server_does_not_import_any_model_sdk(tmp_path: Path) -> None:
    assert (
        imported_sdks("import thinking_hats.server, thinking_hats.cli.main, thinking_hats.serving.transport", tmp_path)
        == ""
    )


def test_serving_a_record_only_thought_does_not_import_any_model_sdk(tmp_path: Path) -> None:
    code = (
        "import asyncio\n"
        "from mcp import Client\n"
        "from thinking_hats.config import Settings\n"
        "from thinking_hats.server import build_server\n"
        "async def main():\n"
        "    async with Client(build_server(Settings())) as client:\n"
        "        args = {'thought': 'x', 'thoughtNumber': 1, 'totalThoughts': 1, 'nextThoughtNeeded': False}\n"
        "        assert not (await client.call_tool('sequentialthinking', args)).is_error\n"
        "asyncio.run(main())"
    )
    assert imported_sdks(code, tmp_path) == ""
