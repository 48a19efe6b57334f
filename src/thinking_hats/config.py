"""Settings: the one reader of the environment (and of `.env`). Everything else receives a `Settings`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationInfo, field_validator, model_validator

TOOL_NAMES = ("sequentialthinking", "crash", "sequential_thinking")
Strategy = Literal["auto", "single", "double", "triple", "full", "none"]
DOTENV = Path(".env")  # in the working directory, as client configs and docker-compose files expect


class Settings(BaseModel):
    """Every variable the server reads. `.env.example` mirrors these fields (a test keeps them in sync).

    `Settings()` reads each field from the variable of the same name in any case: arguments first, then the
    process environment, then `.env`, then the default. (pydantic-settings did this too, for ~25 ms of start-up
    that a server whose every client spawns it pays each time.) `Settings.read(env_file=...)` names another file.
    """

    model_config = ConfigDict(extra="ignore")

    @classmethod
    def read(cls, env_file: Path | None = DOTENV, *, file_first: bool = False, **given: Any) -> Settings:
        """`file_first`: the file's variables win over the process environment's, as for a service whose unit
        names the file (`usage --env-file /etc/thinking-hats/env` run from an operator's shell)."""
        return cls.model_validate(given, context={"env_file": env_file, "file_first": file_first})

    @model_validator(mode="before")
    @classmethod
    def _read_environment(cls, given: Any, info: ValidationInfo) -> Any:
        if not isinstance(given, dict):
            return given
        env_file = (info.context or {}).get("env_file", DOTENV)
        found = _environment(env_file, (info.context or {}).get("file_first", False))
        return {name: found[name] for name in cls.model_fields if name in found} | given

    # --- tools and server ---
    thinking_tools: str = Field(
        default=",".join(TOOL_NAMES), description="Comma-separated tools to serve (default: all three)."
    )
    thinking_log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="WARNING", description="Log level (logs go to stderr)."
    )
    thinking_http_token: SecretStr | None = Field(
        default=None, description="Bearer token for HTTP; required to bind beyond loopback."
    )
    thinking_http_tokens_file: Path | None = Field(
        default=None,
        description="File of principals for HTTP, one 'name token' per line (# comments); each sees only its sessions.",
    )
    thinking_http_session_limit: int = Field(
        default=100,
        ge=1,
        le=100_000,
        description="Open legacy HTTP sessions per principal; the least recently used closes first (1-100000).",
    )
    thinking_http_idle_timeout: float = Field(
        default=120,
        ge=1,
        le=86_400,
        allow_inf_nan=False,
        description="Seconds before an idle legacy HTTP session or a half-sent request is closed (1-86400).",
    )
    thinking_http_allowed_hosts: str = Field(
        default="", description="Extra Host names (comma-separated) accepted when binding beyond loopback."
    )
    thinking_http_max_body: int = Field(
        default=1_000_000, ge=1024, le=100_000_000, description="Largest HTTP request body, in bytes (1024-100000000)."
    )

    # --- sessions and storage ---
    thinking_store: str = Field(
        default="sqlite",
        description=(
            "sqlite (one machine, any number of processes), memory (nothing on disk), or "
            "postgresql://user:password@host:port/db (many replicas)."
        ),
    )
    thinking_data_dir: Path | None = Field(default=None, description="Default: the XDG user data directory.")
    thinking_retention_days: float = Field(
        default=30,
        ge=0.01,
        le=36_500,
        allow_inf_nan=False,
        description="Days a session may stay idle before it is deleted (0.01-36500).",
    )
    thinking_max_sessions: int = Field(
        default=1000,
        ge=1,
        le=10_000_000,
        description=(
            "Sessions each principal keeps unless THINKING_MAX_SESSIONS_PER_PRINCIPAL is set; a new one beyond "
            "this takes the place of its least recently used one idle past the grace period, or is refused if all "
            "are in use; never another principal's (1-10000000)."
        ),
    )
    thinking_session_grace_minutes: float = Field(
        default=60,
        ge=0,
        le=525_600,
        allow_inf_nan=False,
        description=(
            "Minutes after its last use during which the session cap never evicts a session; a new session over "
            "the cap is refused meanwhile (0-525600)."
        ),
    )
    thinking_max_thoughts: int = Field(
        default=1000, ge=1, le=100_000, description="Thoughts kept per session (1-100000)."
    )
    thinking_max_thought_chars: int = Field(
        default=20_000, ge=100, le=1_000_000, description="Longest accepted thought, in characters (100-1000000)."
    )

    # --- operating a team service: bounded store waits, the pool, per-principal session caps ---
    thinking_store_lock_timeout: float = Field(
        default=5,
        ge=0.1,
        le=600,
        allow_inf_nan=False,
        description=(
            "Seconds a store transaction waits for a lock (a session busy with another call, SQLite's write lock) "
            "before the call fails with a retryable error (0.1-600)."
        ),
    )
    thinking_store_statement_timeout: float = Field(
        default=15,
        ge=0.1,
        le=600,
        allow_inf_nan=False,
        description="Seconds one PostgreSQL statement may run before it is cancelled with a retryable error (0.1-600).",
    )
    thinking_store_pool_size: int = Field(
        default=10,
        ge=1,
        le=1000,
        description=(
            "PostgreSQL connections per replica, shared out over its --workers (each gets at least 2) (1-1000)."
        ),
    )
    thinking_max_sessions_per_principal: int | None = Field(
        default=None,
        ge=1,
        le=10_000_000,
        description=(
            "Sessions one principal may keep; a new one beyond this takes the place of its least recently used "
            "one idle past the grace period, or is refused if all are in use (default: THINKING_MAX_SESSIONS) "
            "(1-10000000)."
        ),
    )

    # --- console trace (stderr) ---
    disable_thought_logging: bool = Field(default=False, description="Turn off the per-thought trace on stderr.")
    crash_output_format: Literal["console", "json", "markdown"] = Field(
        default="console", description="Trace format for crash steps: console, json or markdown."
    )
    crash_no_color: bool = Field(
        default=False, description="No colour in the trace (colour is only used on a terminal)."
    )

    # --- the crash tool ---
    crash_strict_mode: bool = Field(
        default=False, description="Enforce purposes, thought openings and 'To ' rationales."
    )
    max_history_size: int = Field(default=100, ge=1, le=100_000, description="Steps kept per crash session (1-100000).")
    crash_session_timeout: float = Field(
        default=60,
        ge=1,
        le=525_600,
        allow_inf_nan=False,
        description="Minutes before an idle CRASH session ends (1-525600).",
    )
    crash_max_branch_depth: int = Field(
        default=5, ge=1, le=100, description="Deepest nesting of crash branches (1-100)."
    )
    crash_review_low_confidence: bool = Field(
        default=True,
        description="Review crash steps with confidence < 0.5, with the hats the router picks (two at least).",
    )

    # --- model provider ---
    llm_provider: str | None = Field(
        default=None,
        description=(
            "openai, anthropic, deepseek, groq, openrouter, github, ollama or openai-compatible; unset = record-only."
        ),
    )
    llm_base_url: str | None = Field(default=None, description="Endpoint override for any provider.")
    llm_model: str | None = Field(default=None, description="Model for the hats (default per provider).")
    llm_synthesis_model: str | None = Field(default=None, description="Model for the synthesis (default per provider).")
    openai_api_key: SecretStr | None = Field(default=None, description="Key for LLM_PROVIDER=openai.")
    anthropic_api_key: SecretStr | None = Field(default=None, description="Key for LLM_PROVIDER=anthropic.")
    deepseek_api_key: SecretStr | None = Field(default=None, description="Key for LLM_PROVIDER=deepseek.")
    groq_api_key: SecretStr | None = Field(default=None, description="Key for LLM_PROVIDER=groq.")
    openrouter_api_key: SecretStr | None = Field(default=None, description="Key for LLM_PROVIDER=openrouter.")
    github_token: SecretStr | None = Field(default=None, description="Token for LLM_PROVIDER=github (GitHub Models).")
    llm_api_key: SecretStr | None = Field(default=None, description="Key for openai-compatible servers.")
    # Older names from the multi-agent sequential-thinking server, honoured so existing configs keep working.
    openai_standard_model_id: str | None = None
    openai_enhanced_model_id: str | None = None
    anthropic_standard_model_id: str | None = None
    anthropic_enhanced_model_id: str | None = None
    deepseek_standard_model_id: str | None = None
    deepseek_enhanced_model_id: str | None = None
    groq_standard_model_id: str | None = None
    groq_enhanced_model_id: str | None = None
    openrouter_standard_model_id: str | None = None
    openrouter_enhanced_model_id: str | None = None
    github_standard_model_id: str | None = None
    github_enhanced_model_id: str | None = None
    ollama_standard_model_id: str | None = None
    ollama_enhanced_model_id: str | None = None
    agno_telemetry: bool = Field(default=False, description="Let agno send its telemetry (off by default).")

    # --- the multi-agent core ---
    thinking_strategy: Strategy = Field(
        default="auto", description="Default strategy: auto, single, double, triple, full or none."
    )
    thinking_escalation: float = Field(
        default=0.5,
        ge=0.01,
        le=0.99,
        allow_inf_nan=False,
        description="How sure the router must be before it spends one more step; lower spends more (0.01-0.99).",
    )
    thinking_synthesis: Literal["model", "merge"] = Field(
        default="model",
        description="How double and triple combine their hats: model (one synthesis call) or merge (in code).",
    )
    thinking_hat_timeout: float = Field(
        default=25, ge=0.1, le=600, allow_inf_nan=False, description="Seconds one hat may take (0.1-600)."
    )
    thinking_deadline: float = Field(
        default=45,
        ge=1,
        le=3600,
        allow_inf_nan=False,
        description="Seconds for a whole thought; keep it below your client's request timeout, often 60 (1-3600).",
    )
    thinking_concurrent_thoughts: int = Field(
        default=32,
        ge=1,
        le=1000,
        description=(
            "Augmented thoughts one process runs at once; more wait for a slot. Each slot keeps one model "
            "connection per role (five hats, the synthesis) alive, so a burst reuses them (1-1000)."
        ),
    )
    thinking_max_retries: int = Field(default=2, ge=0, le=10, description="Retries of a failed model call (0-10).")
    thinking_retry_wait: float = Field(
        default=0.5,
        ge=0,
        le=60,
        allow_inf_nan=False,
        description="First wait before a retry, in seconds; doubles each time, plus jitter (0-60).",
    )
    thinking_context_thoughts: int = Field(
        default=3, ge=0, le=50, description="Recent thoughts sent as context (0-50)."
    )
    thinking_max_output_tokens: int = Field(
        default=700, ge=16, le=200_000, description="Output cap per model call, in tokens (16-200000)."
    )
    thinking_max_reply_chars: int = Field(
        default=8000,
        ge=500,
        le=100_000,
        description="Characters kept of each hat's analysis and of the synthesis, and passed on to it (500-100000).",
    )
    thinking_prompts_dir: Path | None = Field(default=None, description="Folder overriding prompts/*.md.")
    thinking_prompt_pack: str = Field(default="default", description="Prompt pack: default or clinical.")

    # --- limits, usage and observability (docs/operations.md) ---
    thinking_principal_tokens_per_day: int | None = Field(
        default=None,
        ge=1,
        description="Model tokens (input + output) each principal may use per UTC day; unset = no limit.",
    )
    thinking_principal_calls_per_minute: int | None = Field(
        default=None, ge=1, description="Model calls each principal may make per minute; unset = no limit."
    )
    thinking_principal_limits_file: Path | None = Field(
        default=None,
        description=(
            "Per-principal limits, one 'name tokens_per_day=N calls_per_minute=M' per line (none: no limit); "
            "re-read on SIGHUP."
        ),
    )
    thinking_http_thought_log: bool = Field(
        default=False, description="Under serve --transport http, write each thought to stderr (off by default)."
    )
    thinking_metrics: bool = Field(default=True, description="Serve GET /metrics (Prometheus) under HTTP.")
    thinking_metrics_public: bool = Field(
        default=False, description="Serve /metrics without the bearer token (for a scraper on a private network)."
    )
    thinking_ui: bool = Field(
        default=False,
        description=(
            "Serve the read-only web view at /ui/ under HTTP (sign in with a token); off: not served, not imported."
        ),
    )
    display: str | None = Field(
        default=None,
        description="Set by a graphical session (X11, XWayland): `thinking-hats ui` opens a browser only when it is.",
    )
    thinking_metrics_token: SecretStr | None = Field(
        default=None,
        description=(
            "A bearer token that reads /metrics and nothing else (for a scraper); operators of the tokens file "
            "read it too."
        ),
    )
    thinking_trace_text: bool = Field(
        default=False, description="Put thought text in OpenTelemetry spans (off: no client text leaves in traces)."
    )
    otel_exporter_otlp_endpoint: str | None = Field(
        default=None, description="OTLP/HTTP collector base URL; traces go to <it>/v1/traces. Unset = no traces."
    )
    otel_exporter_otlp_traces_endpoint: str | None = Field(
        default=None, description="OTLP/HTTP traces URL, used as given (overrides the base URL)."
    )
    otel_exporter_otlp_headers: SecretStr | None = Field(
        default=None, description="Headers for the collector, 'key=value,key2=value2' (e.g. an API key)."
    )
    otel_exporter_otlp_traces_headers: SecretStr | None = Field(
        default=None, description="Headers for the traces endpoint only (override OTEL_EXPORTER_OTLP_HEADERS)."
    )
    otel_service_name: str = Field(default="thinking-hats", description="service.name of the traces.")

    @field_validator("*", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object, info: ValidationInfo) -> object:
        # Client configs and copied .env files carry `LLM_PROVIDER=` or `THINKING_DEADLINE=`: a blank variable
        # means "not set", so its default (not a provider named '', a data directory at '.' or a number error).
        if isinstance(value, str) and not value.strip() and info.field_name:
            return cls.model_fields[info.field_name].get_default(call_default_factory=True)
        return value

    @field_validator("llm_provider")
    @classmethod
    def _normalise_provider(cls, value: str | None) -> str | None:
        return value.strip().lower() if value else value

    @field_validator("thinking_store")
    @classmethod
    def _known_store(cls, value: str) -> str:
        value = value.strip() or "sqlite"
        if value.lower() in ("sqlite", "memory"):
            return value.lower()
        if value.startswith(("postgresql://", "postgres://")):
            return value
        raise ValueError("THINKING_STORE must be sqlite, memory or a postgresql://user:password@host:port/database URL")

    @field_validator("thinking_tools")
    @classmethod
    def _known_tools(cls, value: str) -> str:
        names = [n.strip() for n in value.split(",") if n.strip()]
        unknown = sorted(set(names) - set(TOOL_NAMES))
        if unknown or not names:
            raise ValueError(f"THINKING_TOOLS names unknown tools {unknown}; choose from {', '.join(TOOL_NAMES)}")
        return ",".join(names)

    @property
    def traces_endpoint(self) -> str | None:
        """Where spans go (None: tracing off), as the OTLP exporter specification resolves the two variables."""
        if self.otel_exporter_otlp_traces_endpoint:
            return self.otel_exporter_otlp_traces_endpoint
        if self.otel_exporter_otlp_endpoint:
            return self.otel_exporter_otlp_endpoint.rstrip("/") + "/v1/traces"
        return None

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(n for n in TOOL_NAMES if n in self.thinking_tools.split(","))

    def data_dir(self) -> Path:
        if self.thinking_data_dir is not None:
            return self.thinking_data_dir.expanduser()
        import platformdirs  # respects XDG_DATA_HOME on Linux

        return Path(platformdirs.user_data_dir("thinking-hats", appauthor=False))

    def database_path(self) -> Path | None:
        """The SQLite file (None: in memory, or not SQLite at all)."""
        if self.thinking_store in ("memory", "") or self.postgres_url() is not None:
            return None
        return self.data_dir() / "sessions.sqlite3"

    def postgres_url(self) -> str | None:
        return self.thinking_store if self.thinking_store.startswith(("postgresql://", "postgres://")) else None

    def secrets(self) -> list[str]:
        """Every secret value configured, so outputs can be scrubbed of them."""
        from .ops.redaction import passwords_in  # every form a URL carries a secret in, malformed ones included

        found = [v.get_secret_value() for v in self.__dict__.values() if isinstance(v, SecretStr)]
        for url in self.urls().values():
            found += passwords_in(url)
        return [s for s in found if len(s) >= 4]

    def urls(self) -> dict[str, str]:
        """Every URL setting that is set, by field name: what may carry a password or key in its text."""
        names = ("thinking_store", "llm_base_url", "otel_exporter_otlp_endpoint", "otel_exporter_otlp_traces_endpoint")
        return {name: value for name in names if isinstance(value := getattr(self, name), str) and "://" in value}

    # --- operating a team service ---
    def principal_session_cap(self) -> int:
        cap = self.thinking_max_sessions_per_principal
        return self.thinking_max_sessions if cap is None else cap

    def store_shown(self) -> str:
        """THINKING_STORE as it may be shown (doctor, messages): any password masked."""
        from .ops.redaction import redact_url

        return redact_url(self.thinking_store)


def load_settings(**overrides: object) -> Settings:
    return Settings(**overrides)  # type: ignore[arg-type]


def _environment(env_file: Path | None, file_first: bool = False) -> dict[str, str]:
    """Variables by lower-cased name: the file's, overridden by the process environment's (or the other way round)."""
    found: dict[str, str] = {}
    if env_file is not None and env_file.is_file():
        from dotenv import dotenv_values  # only when there is a file to read

        found = {k.lower(): v for k, v in dotenv_values(env_file, encoding="utf-8").items() if v is not None}
    environment = {k.lower(): v for k, v in os.environ.items()}
    return environment | found if file_first else found | environment
