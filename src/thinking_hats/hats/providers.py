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
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx2  # already loaded by mcp; the SDKs and agno are what stay lazy
from pydantic import SecretStr

from ..config import Settings

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
    # The variable the key was read from (OPENAI_API_KEY, or LLM_API_KEY when only that is set), so messages
    # name the one the user actually set; None when no key is set.
    key_source: str | None = None

    @property
    def name(self) -> str:
        return self.vendor.name

    @property
    def key_variable(self) -> str:
        """The variable to check after a 401: the one the key came from, else the vendor's own."""
        return self.key_source or self.vendor.key_variable or "LLM_API_KEY"

    @property
    def shown_url(self) -> str:
        """The endpoint as messages, doctor and traces show it: a password or key in it masked."""
        from ..ops.redaction import redact_url

        return redact_url(self.base_url)

    def describe(self) -> dict[str, str]:
        return {
            "provider": f"{self.vendor.name} ({self.vendor.wire} wire format)",
            "endpoint": self.shown_url,
            "hat model": self.model,
            "synthesis model": self.synthesis_model,
            "key": f"{self.key_variable} set (hidden)" if self.key_given else "none set (this provider needs none)",
        }

    def fix_for(self, status: int | None) -> str:
        """What the user should change after a failure with this HTTP status (None: no response at all)."""
        key = self.key_variable
        if status in (401, 403):
            return f"check {key}"
        if status == 404:
            return f"check LLM_MODEL ({self.model}) and LLM_BASE_URL ({self.shown_url})"
        if status == 429:
            return "rate limited: wait, or lower THINKING_STRATEGY to use fewer calls"
        if status is None:
            return f"is {self.shown_url} reachable? check LLM_BASE_URL"
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
    key, key_source = _key(settings, vendor)
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
        from ..ops.redaction import redact_url

        raise ProviderConfigError(
            f"LLM_BASE_URL={redact_url(base_url)!r} is not an http(s) URL: set it to e.g. https://host/v1"
        )
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
        key_source=key_source,
    )


def _key(settings: Settings, vendor: Vendor) -> tuple[str | None, str | None]:
    """(the key, the variable it came from): the vendor's own variable first, then LLM_API_KEY."""
    for source in (vendor.key_setting, "llm_api_key"):
        if source is None:
            continue
        value = getattr(settings, source)
        if isinstance(value, SecretStr) and value.get_secret_value():
            return value.get_secret_value(), source.upper()
    return None, None


# --- what the wire said ---------------------------------------------------------------------------------------
# agno turns provider errors into a text in `RunOutput.content`, losing the status and headers; the transport
# below notes them for the call that is running, so retries and messages rest on the HTTP facts.


@dataclass
class Exchange:
    """The last HTTP exchange of one model call (one per task, through a context variable)."""

    role: str | None = None  # whose call: each role has a connection pool of its own
    status: int | None = None
    retry_after: float | None = None
    transport_error: str | None = None
    requests: int = 0
    refused: int = 0  # of `requests`: answered with an HTTP error, which providers do not bill
    oversize: int | None = None  # the byte cap a response body went past (it was not read further)


current_exchange: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar("exchange", default=None)
# The slot (0 .. THINKING_CONCURRENT_THOUGHTS - 1) of the thought whose calls run in this task; None outside one.
current_lane: contextvars.ContextVar[int | None] = contextvars.ContextVar("lane", default=None)


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


def response_byte_cap(max_output_tokens: int) -> int:
    """The most bytes read of one model response.

    A completion within THINKING_MAX_OUTPUT_TOKENS is a few KB of JSON; even a token of escaped non-Latin text
    (`\\uXXXX` per character) stays well under 64 bytes, and 256 KiB covers the envelope and any reasoning
    field. A larger body means the server ignored the output cap, and reading it would only cost memory and
    time for text the reply then cuts (a 10 MB completion became a 30 MB reply and 60 MB in the store).
    """
    return 256 * 1024 + 64 * max_output_tokens


class ResponseTooLarge(httpx2.ReadError):
    """A response body went past the byte cap; a ReadError so the SDKs fail the call like any broken read."""


class _CappedStream(httpx2.AsyncByteStream):
    """A response body that stops (and says so on the Exchange) past `limit` bytes."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int, declared: str | None, exchange: Exchange | None):
        self.inner, self.limit, self.declared, self.exchange = inner, limit, declared, exchange

    def _refuse(self) -> ResponseTooLarge:
        if self.exchange is not None:
            self.exchange.oversize = self.limit
        return ResponseTooLarge(f"response body larger than {self.limit} bytes")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.declared is not None and self.declared.isdigit() and int(self.declared) > self.limit:
            raise self._refuse()  # said so up front: not one byte is read
        read = 0
        async for chunk in self.inner:
            read += len(chunk)
            if read > self.limit:
                raise self._refuse()
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class _RecordingTransport(httpx2.AsyncBaseTransport):
    """Notes each response's status and Retry-After (or the transport error) on the running call's Exchange.

    Connections are pooled per lane and role. A lane is one of the THINKING_CONCURRENT_THOUGHTS slots a running
    thought holds (`current_lane`, set by the augmenter), and a thought has at most one call per role in flight,
    so each (role, lane) pool keeps one connection, alive between calls: a burst of thoughts reuses the
    connections of the last one. Calls outside a lane (doctor, the orchestrator used on its own) share a pool per
    role of `connections`. Small pools are also cheap ones: httpcore checks every connection of a pool for
    expiry (a `select` on each idle socket) whenever a request starts or ends, and with one pool of 60
    connections that scan was an eighth of the server's CPU in a burst of 20 triple thoughts.

    With `max_response_bytes`, a body is read only up to that many bytes; past it the read fails with
    `ResponseTooLarge` and the Exchange notes the cap, so the call fails with a message instead of a huge reply.
    """

    def __init__(self, max_response_bytes: int | None = None, connections: int = 10, tls: bool = True) -> None:
        self.max_response_bytes = max_response_bytes
        self.connections = connections
        self.pools: dict[tuple[str | None, int | None], httpx2.AsyncHTTPTransport] = {}
        # One TLS context for every pool, built here (in the server's warm-up thread): loading the CA bundle costs
        # ~47 ms of CPU. A plain-HTTP endpoint (a local server) needs none, and gets one without the bundle.
        self._tls = httpx2.create_ssl_context(verify=tls)

    def _pool(self, role: str | None, lane: int | None) -> httpx2.AsyncHTTPTransport:
        pool = self.pools.get((role, lane))
        if pool is None:
            size = self.connections if lane is None else 1
            pool = self.pools[role, lane] = httpx2.AsyncHTTPTransport(
                verify=self._tls,
                # Every connection the pool may open is kept alive: with fewer kept than opened, each burst of
                # calls closes the surplus after it and opens them again on the next (against a real endpoint a
                # TCP and a TLS handshake each).
                limits=httpx2.Limits(max_connections=size, max_keepalive_connections=size),
                # Headers and body go out in separate writes; with Nagle on, the body waits for a delayed ACK (~40 ms).
                socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
            )
        return pool

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        exchange = current_exchange.get()
        if exchange is not None:
            exchange.requests += 1
            exchange.oversize = None
        limit = self.max_response_bytes
        if limit is not None:
            # The cap counts bytes on the wire: a compressed body could decode to far more than it allows.
            # Replies are a few KB, so doing without compression costs next to nothing.
            request.headers["accept-encoding"] = "identity"
        pool = self._pool(exchange.role if exchange is not None else None, current_lane.get())
        try:
            response = await pool.handle_async_request(request)
        except httpx2.TransportError as exc:
            if exchange is not None:
                exchange.status, exchange.transport_error = None, type(exc).__name__
            raise
        if exchange is not None:
            exchange.status, exchange.transport_error = response.status_code, None
            exchange.refused += response.status_code >= 400
            exchange.retry_after = parse_retry_after(response.headers.get("retry-after"))
        if limit is not None and isinstance(response.stream, httpx2.AsyncByteStream):
            declared = response.headers.get("content-length")
            # A declared length within the cap needs no counting: HTTP/1.1 reads exactly that many bytes.
            if declared is None or not declared.isdigit() or int(declared) > limit:
                response.stream = _CappedStream(response.stream, limit, declared, exchange)
        return response

    async def aclose(self) -> None:
        for pool in self.pools.values():
            await pool.aclose()


def http_client(
    provider: ResolvedProvider, max_response_bytes: int | None = None, connections: int = 10
) -> httpx2.AsyncClient:
    """The one HTTP client a provider's calls share for the process lifetime (one TLS context, pooled sockets:
    `connections` per role at most, all kept alive between calls)."""
    timeout = httpx2.Timeout(provider.timeout, connect=min(10.0, provider.timeout))
    tls = not provider.base_url.startswith("http://")
    return httpx2.AsyncClient(transport=_RecordingTransport(max_response_bytes, connections, tls), timeout=timeout)


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


@dataclass(frozen=True)
class Tokens:
    """What one model call cost, the same on every wire format."""

    input: int = 0  # the whole prompt, cached or not
    output: int = 0
    cached_input: int = 0  # of `input`: read from the provider's prompt cache
    cache_creation: int = 0  # of `input`: written to the provider's prompt cache


def token_counts(wire: Wire, metrics: Any) -> Tokens:
    """Tokens from agno's run metrics, which keep each vendor's own meaning of "input"."""

    def count(name: str) -> int:
        return int(getattr(metrics, name, 0) or 0)

    read, written = count("cache_read_tokens"), count("cache_write_tokens")
    # Anthropic's input_tokens leaves out cache_read_input_tokens and cache_creation_input_tokens (llama.cpp's
    # Anthropic endpoint reported 22 of a 187-token prompt as input, the rest as cached). OpenAI's prompt_tokens
    # already includes prompt_tokens_details.cached_tokens: adding it there would count it twice.
    whole = count("input_tokens") + (read + written if wire == "anthropic" else 0)
    return Tokens(input=whole, output=count("output_tokens"), cached_input=read, cache_creation=written)


async def check_reachability(provider: ResolvedProvider) -> tuple[bool, str]:
    """Whether the endpoint answers and takes the key, without paying for a completion; the detail names the
    URLs asked with any password or key in LLM_BASE_URL masked."""
    from ..ops.redaction import passwords_in, scrub

    reachable, detail = await _reachability(provider)
    return reachable, scrub(detail, passwords_in(provider.base_url))


async def _reachability(provider: ResolvedProvider) -> tuple[bool, str]:
    """Whether the endpoint answers and takes the key, without paying for a completion.

    First the models list. A server without one (404/405: some gateways, some local servers) gets a chat
    request with an empty body instead: it is authenticated and then refused as invalid (400/422) before any
    model runs, so it costs no tokens; whether LLM_MODEL exists is then left unchecked, and said so.
    """
    http = http_client(provider)
    secret = provider.api_key.get_secret_value()
    headers = {"Authorization": f"Bearer {secret}"}
    if provider.vendor.wire == "anthropic":
        headers |= {"x-api-key": secret, "anthropic-version": "2023-06-01"}
        models, chat = f"{provider.base_url}/v1/models", f"{provider.base_url}/v1/messages"
    else:
        models, chat = f"{provider.base_url}/models", f"{provider.base_url}/chat/completions"
    try:
        started = time.perf_counter()
        try:
            # Only the status matters: the body (hundreds of KB at some gateways) is never read.
            async with http.stream("GET", models, headers=headers, timeout=10.0) as response:
                status = response.status_code
        except Exception as exc:  # any transport failure is the answer, not a crash
            return False, f"no response from {provider.base_url} ({type(exc).__name__}): {provider.fix_for(None)}"
        ms = (time.perf_counter() - started) * 1000
        if status < 400:
            return True, f"{status} from {models} in {ms:.0f} ms"
        if status not in (404, 405):
            return False, f"{status} from {models}: {_reach_fix(provider, status)}"

        try:
            async with http.stream("POST", chat, headers=headers, json={}, timeout=10.0) as response:
                probe = response.status_code
        except Exception as exc:
            return False, (
                f"{models} has no models list ({status}) and {chat} did not answer ({type(exc).__name__}): "
                f"{provider.fix_for(None)}"
            )
        if probe in (401, 403):
            return False, f"{probe} from {chat}: {_reach_fix(provider, probe)}"
        if probe in (404, 405):
            return False, (
                f"neither {models} nor {chat} exists ({status}, {probe}): check LLM_BASE_URL ({provider.base_url})"
            )
        if probe >= 500:
            return False, f"{probe} from {chat}: {_reach_fix(provider, probe)}"
        return True, (
            f"no models list at {models} ({status}); {chat} answered an empty request with {probe}, so the "
            f"endpoint and key work; LLM_MODEL ({provider.model}) was not checked"
        )
    finally:
        await http.aclose()


def _reach_fix(provider: ResolvedProvider, status: int) -> str:
    # Neither request names a model, so, unlike a failed completion, no failure here is the model's fault.
    if status in (401, 403):
        return f"the key was refused: check {provider.key_variable}"
    if status == 429:
        return "rate limited: wait and try again"
    if status >= 500:
        return "the provider is failing; try again later"
    return f"check LLM_BASE_URL ({provider.shown_url})"
