"""Model providers: a table of vendors, resolved from `Settings` into one configured provider.

A provider is a row (wire format, key variable, endpoint, default models), not a class. Three wire formats cover
all eight vendors: OpenAI's chat completions (agno `OpenAIChat`), the same format as spoken by compatible servers
(agno `OpenAILike`: DeepSeek, Groq, OpenRouter, GitHub Models, Ollama, anything else), and Anthropic's messages
(agno `Claude`). This module imports no SDK at import time: `doctor` and start-up only need the table.
"""

from __future__ import annotations

import contextvars
import email.utils
import importlib
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx2  # already loaded by mcp; the SDKs and agno are what stay lazy
from pydantic import SecretStr

from .config import Settings

Wire = Literal["openai", "openai-like", "anthropic"]


@dataclass(frozen=True)
class Vendor:
    name: str
    wire: Wire
    key_setting: str | None  # the Settings field holding the key; its variable is the upper-cased name
    base_url: str | None  # None: LLM_BASE_URL is required
    model: str | None  # None: LLM_MODEL is required
    synthesis_model: str | None
    key_required: bool = True
    label: str = ""

    @property
    def key_variable(self) -> str | None:
        return self.key_setting.upper() if self.key_setting else None


VENDORS: dict[str, Vendor] = {
    v.name: v
    for v in (
        Vendor(
            "openai", "openai", "openai_api_key", "https://api.openai.com/v1", "gpt-5.4-mini", "gpt-5.4", label="OpenAI"
        ),
        Vendor(
            "anthropic",
            "anthropic",
            "anthropic_api_key",
            "https://api.anthropic.com",
            "claude-haiku-5-5",
            "claude-sonnet-5-5",
            label="Anthropic",
        ),
        Vendor(
            "deepseek",
            "openai-like",
            "deepseek_api_key",
            "https://api.deepseek.com/v1",
            "deepseek-chat",
            "deepseek-chat",
            label="DeepSeek",
        ),
        Vendor(
            "groq",
            "openai-like",
            "groq_api_key",
            "https://api.groq.com/openai/v1",
            "llama-3.1-8b-instant",
            "llama-3.3-70b-versatile",
            label="Groq",
        ),
        Vendor(
            "openrouter",
            "openai-like",
            "openrouter_api_key",
            "https://openrouter.ai/api/v1",
            "openai/gpt-4.1-mini",
            "openai/gpt-4.1",
            label="OpenRouter",
        ),
        Vendor(
            "github",
            "openai-like",
            "github_token",
            "https://models.github.ai/inference",
            "openai/gpt-4.1-mini",
            "openai/gpt-4.1",
            label="GitHub Models",
        ),
        Vendor(
            "ollama",
            "openai-like",
            None,
            "http://localhost:11434/v1",
            "llama3.2",
            "llama3.2",
            key_required=False,
            label="Ollama",
        ),
        Vendor(
            "openai-compatible",
            "openai-like",
            "llm_api_key",
            None,
            None,
            None,
            key_required=False,
            label="OpenAI-compatible server",
        ),
    )
}


class ProviderConfigError(ValueError):
    """A provider is selected but cannot work as configured; the message names the variable to set."""


@dataclass(frozen=True)
class ResolvedProvider:
    vendor: Vendor
    base_url: str
    model: str
    synthesis_model: str
    api_key: SecretStr = field(repr=False)
    timeout: float = 25.0
    key_given: bool = True  # False: a local server that needs none, and the SDKs get a placeholder

    @property
    def name(self) -> str:
        return self.vendor.name

    def describe(self) -> dict[str, str]:
        key = self.vendor.key_variable
        return {
            "provider": f"{self.vendor.name} ({self.vendor.wire} wire format)",
            "endpoint": self.base_url,
            "hat model": self.model,
            "synthesis model": self.synthesis_model,
            "key": f"{key} set (hidden)" if key and self.key_given else "none set (this provider needs none)",
        }

    def fix_for(self, status: int | None) -> str:
        """What the user should change after a failure with this HTTP status (None: no response at all)."""
        key = self.vendor.key_variable or "LLM_API_KEY"
        if status in (401, 403):
            return f"check {key}"
        if status == 404:
            return f"check LLM_MODEL ({self.model}) and LLM_BASE_URL ({self.base_url})"
        if status == 429:
            return "rate limited: wait, or lower THINKING_STRATEGY to use fewer calls"
        if status is None:
            return f"is {self.base_url} reachable? check LLM_BASE_URL"
        if status >= 500:
            return "the provider is failing; try again later"
        return "check LLM_MODEL and THINKING_MAX_OUTPUT_TOKENS"


def resolve_provider(settings: Settings) -> ResolvedProvider | None:
    """The configured provider, None when LLM_PROVIDER is unset, ProviderConfigError when it cannot work."""
    name = settings.llm_provider
    if name is None:
        return None
    vendor = VENDORS.get(name)
    if vendor is None:
        raise ProviderConfigError(f"LLM_PROVIDER={name!r} is not a provider; set it to one of {', '.join(VENDORS)}")
    key = _key(settings, vendor)
    if vendor.key_required and not key:
        raise ProviderConfigError(
            f"LLM_PROVIDER={name} needs {vendor.key_variable}: set it to your {vendor.label} key "
            f"(or LLM_API_KEY), or unset LLM_PROVIDER for record-only mode"
        )
    base_url = settings.llm_base_url or vendor.base_url
    if base_url is None:
        raise ProviderConfigError(
            f"LLM_PROVIDER={name} needs LLM_BASE_URL: set it to the server's endpoint, e.g. http://127.0.0.1:8000/v1"
        )
    if not base_url.startswith(("http://", "https://")):
        raise ProviderConfigError(f"LLM_BASE_URL={base_url!r} is not an http(s) URL: set it to e.g. https://host/v1")
    legacy = name.replace("-", "_")
    model = settings.llm_model or getattr(settings, f"{legacy}_standard_model_id", None) or vendor.model
    synthesis = (
        settings.llm_synthesis_model
        or getattr(settings, f"{legacy}_enhanced_model_id", None)
        or settings.llm_model
        or vendor.synthesis_model
    )
    if model is None or synthesis is None:
        raise ProviderConfigError(f"LLM_PROVIDER={name} needs LLM_MODEL: set it to the model name the server serves")
    return ResolvedProvider(
        vendor=vendor,
        base_url=base_url.rstrip("/"),
        model=model,
        synthesis_model=synthesis,
        # Local servers accept any key but the SDKs refuse to start without one.
        api_key=SecretStr(key or "not-needed"),
        timeout=settings.thinking_hat_timeout,
        key_given=key is not None,
    )


def _key(settings: Settings, vendor: Vendor) -> str | None:
    for source in (vendor.key_setting, "llm_api_key"):
        if source is None:
            continue
        value = getattr(settings, source)
        if isinstance(value, SecretStr) and value.get_secret_value():
            return value.get_secret_value()
    return None


# --- what the wire said ---------------------------------------------------------------------------------------
# agno turns provider errors into a text in `RunOutput.content`, losing the status and headers; the transport
# below notes them for the call that is running, so retries and messages rest on the HTTP facts.


@dataclass
class Exchange:
    """The last HTTP exchange of one model call (one per task, through a context variable)."""

    status: int | None = None
    retry_after: float | None = None
    transport_error: str | None = None
    requests: int = 0


current_exchange: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar("exchange", default=None)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class _RecordingTransport(httpx2.AsyncBaseTransport):
    """Notes each response's status and Retry-After (or the transport error) on the running call's Exchange."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport(
            limits=httpx2.Limits(max_connections=200, max_keepalive_connections=50),
            # Headers and body go out in separate writes; with Nagle on, the body waits for a delayed ACK (~40 ms).
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        exchange = current_exchange.get()
        if exchange is not None:
            exchange.requests += 1
        try:
            response = await self.inner.handle_async_request(request)
        except httpx2.TransportError as exc:
            if exchange is not None:
                exchange.status, exchange.transport_error = None, type(exc).__name__
            raise
        if exchange is not None:
            exchange.status, exchange.transport_error = response.status_code, None
            exchange.retry_after = parse_retry_after(response.headers.get("retry-after"))
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def http_client(provider: ResolvedProvider) -> httpx2.AsyncClient:
    """The one HTTP client a provider's calls share for the process lifetime (one TLS context, pooled sockets)."""
    timeout = httpx2.Timeout(provider.timeout, connect=min(10.0, provider.timeout))
    return httpx2.AsyncClient(transport=_RecordingTransport(), timeout=timeout)


def sdk_client(provider: ResolvedProvider, http: httpx2.AsyncClient) -> Any:
    """The vendor SDK's async client over the shared HTTP client; SDK retries off (tenacity owns them)."""
    key = provider.api_key.get_secret_value()
    if provider.vendor.wire == "anthropic":
        from anthropic import AsyncAnthropic

        return AsyncAnthropic(api_key=key, base_url=provider.base_url, max_retries=0, http_client=http)
    from openai import AsyncOpenAI

    return AsyncOpenAI(api_key=key, base_url=provider.base_url, max_retries=0, http_client=http)


# wire format -> (agno module, model class, the name of its output-token cap)
AGNO_MODELS: dict[Wire, tuple[str, str, str]] = {
    "openai": ("agno.models.openai", "OpenAIChat", "max_completion_tokens"),
    "openai-like": ("agno.models.openai.like", "OpenAILike", "max_tokens"),
    "anthropic": ("agno.models.anthropic", "Claude", "max_tokens"),
}


def agno_model(provider: ResolvedProvider, model_id: str, client: Any, max_tokens: int) -> Any:
    """An agno model bound to the shared SDK client, so no agent builds a client (or TLS context) of its own."""
    module, name, cap = AGNO_MODELS[provider.vendor.wire]
    params: dict[str, Any] = {
        "id": model_id,
        "api_key": provider.api_key.get_secret_value(),
        cap: max_tokens,
        "retries": 0,  # tenacity owns retries
        "retry_with_guidance": False,  # no hidden extra calls
    }
    if provider.vendor.wire != "anthropic":  # agno's Claude takes these only through its client
        params |= {"base_url": provider.base_url, "max_retries": 0}
    model = getattr(importlib.import_module(module), name)(**params)
    model.async_client = client
    return model


async def check_reachability(provider: ResolvedProvider) -> tuple[bool, str]:
    """One minimal request (list the models) to tell whether the endpoint and key work."""
    http = http_client(provider)
    try:
        headers = {"Authorization": f"Bearer {provider.api_key.get_secret_value()}"}
        if provider.vendor.wire == "anthropic":
            headers |= {"x-api-key": provider.api_key.get_secret_value(), "anthropic-version": "2023-06-01"}
            url = f"{provider.base_url}/v1/models"
        else:
            url = f"{provider.base_url}/models"
        started = time.perf_counter()
        try:
            response = await http.get(url, headers=headers, timeout=10.0)
        except Exception as exc:  # any transport failure is the answer, not a crash
            return False, f"no response from {provider.base_url} ({type(exc).__name__}): {provider.fix_for(None)}"
        ms = (time.perf_counter() - started) * 1000
        if response.status_code < 400:
            return True, f"{response.status_code} from {url} in {ms:.0f} ms"
        return False, f"{response.status_code} from {provider.name}: {provider.fix_for(response.status_code)}"
    finally:
        await http.aclose()
