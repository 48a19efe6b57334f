"""A model provider faked at the HTTP layer, so the SDK, agno and our code all run on the real wire format.

`FakeLLM` answers OpenAI chat completions or Anthropic messages from a function (by default, a short analysis
naming the role that asked), keeps a `history` of every request, and takes queued answers per role (`enqueue`):
a text, a status code, a raw `httpx.Response`, an exception, or a `Hold` that parks the request until released.
Requests are intercepted with respx on httpcore2 (pytest-httpx2); anything not routed here fails the test.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import pytest
import pytest_httpx2._plugin  # noqa: F401  (registers respx's "httpcore2" mocker)
import respx
from benchmarks import stub_llm
from respx.models import AllMockedAssertionError

from thinking_hats.config import Settings

Wire = Literal["openai", "anthropic"]
ROLE_WORDS = {w: w for w in ("factual", "emotional", "critical", "optimistic", "creative")} | {
    "synthesizer": "synthesis"
}


def role_of(system: str) -> str:
    """The role whose name comes first in a system prompt ("You are the **critical** hat ..." -> critical)."""
    lowered = system.lower()
    found = [(lowered.find(word), role) for word, role in ROLE_WORDS.items() if word in lowered]
    return min(found)[1] if found else "unknown"


@dataclass
class Seen:
    """One request the fake received."""

    role: str
    url: str
    body: dict[str, Any]
    headers: dict[str, str]
    system: str
    user: str
    at: float = field(default_factory=time.monotonic)

    @property
    def prompt_chars(self) -> int:
        return len(self.system) + len(self.user)


@dataclass
class Hold:
    """Parks matching requests until `release()`; notes arrivals and cancellations (for concurrency tests)."""

    arrived: int = 0
    cancelled: int = 0
    expected: int = 1
    all_arrived: asyncio.Event = field(default_factory=asyncio.Event)
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def release(self) -> None:
        self.released.set()


Answer = str | int | httpx.Response | Exception | Hold


class FakeLLM:
    def __init__(self, router: respx.Router, wire: Wire, base_url: str, settings: dict[str, Any]) -> None:
        self.wire = wire
        self.base_url = base_url
        self.history: list[Seen] = []
        self.in_flight = 0
        self.peak = 0
        self._queues: dict[str, deque[Answer]] = defaultdict(deque)
        self._settings = settings
        # Of each prompt's tokens, how many the fake reports as read from / written to a prompt cache (in each
        # vendor's own way: OpenAI counts them inside prompt_tokens, Anthropic beside input_tokens).
        self.cached_tokens = 0
        self.cache_creation_tokens = 0
        # Default answer: a short analysis that says which role wrote it and about what.
        self.answer: Callable[[Seen], str] = lambda seen: f"[{seen.role}] analysis of: {seen.user[-60:]}"
        path = "/v1/messages" if wire == "anthropic" else "/chat/completions"
        router.post(f"{base_url}{path}").mock(side_effect=self._handle)
        router.get(f"{base_url}{'/v1/models' if wire == 'anthropic' else '/models'}").mock(
            return_value=httpx.Response(200, json={"object": "list", "data": [{"id": "fake", "object": "model"}]})
        )

    # --- the test's side ---
    def settings(self, **overrides: Any) -> Settings:
        values = self._settings | {"thinking_retry_wait": 0.01} | overrides
        return Settings(**values)

    def enqueue(self, role: str, *answers: Answer) -> None:
        """The next requests of `role` ("*" for any role) get these answers, in order, then the default."""
        self._queues[role].extend(answers)

    def roles(self) -> list[str]:
        return [seen.role for seen in self.history]

    def calls(self, role: str | None = None) -> list[Seen]:
        return [seen for seen in self.history if role is None or seen.role == role]

    # --- the wire side ---
    async def _handle(self, request: httpx.Request) -> httpx.Response:
        seen = self._parse(request)
        self.history.append(seen)
        queue = self._queues[seen.role] or self._queues["*"]
        answer: Answer = queue.popleft() if queue else self.answer(seen)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            if isinstance(answer, Hold):
                answer.arrived += 1
                if answer.arrived >= answer.expected:
                    answer.all_arrived.set()
                try:
                    await answer.released.wait()
                except asyncio.CancelledError:
                    answer.cancelled += 1
                    raise
                answer = self.answer(seen)
        finally:
            self.in_flight -= 1
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, httpx.Response):
            return answer
        if isinstance(answer, int):
            return self.error(answer)
        return self.reply(seen, answer)

    def _parse(self, request: httpx.Request) -> Seen:
        body = json.loads(request.content)
        messages = body.get("messages", [])
        if self.wire == "anthropic":
            system = body.get("system") or ""
            if isinstance(system, list):
                system = "".join(block.get("text", "") for block in system)
        else:
            system = "".join(str(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
        user = "".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
        return Seen(role_of(system), str(request.url), body, dict(request.headers), system, user)

    def reply(self, seen: Seen, text: str) -> httpx.Response:
        """A success in this fake's wire format (the same bodies the stub model server sends)."""
        prompt_tokens = max(1, seen.prompt_chars // 4)
        cached = min(self.cached_tokens, prompt_tokens)
        counted = stub_llm.Seen(
            role=seen.role,
            path="",
            prompt_tokens=prompt_tokens,
            completion_tokens=max(1, len(text) // 4),
            cached_tokens=cached,
            cache_creation_tokens=min(self.cache_creation_tokens, prompt_tokens - cached),
        )
        body = stub_llm.anthropic_body if self.wire == "anthropic" else stub_llm.openai_body
        return httpx.Response(200, json=body(str(seen.body.get("model", "fake")), text, counted))

    def error(
        self, status: int, retry_after: str | None = None, message: str = "fake provider error"
    ) -> httpx.Response:
        headers = {"retry-after": retry_after} if retry_after is not None else {}
        return httpx.Response(status, json=stub_llm.error_body(self.wire, status, message), headers=headers)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content or "")


PROVIDERS: dict[str, tuple[Wire, str, dict[str, Any]]] = {
    "openai": ("openai", "https://api.openai.com/v1", {"llm_provider": "openai", "openai_api_key": "sk-fake-openai"}),
    "anthropic": (
        "anthropic",
        "https://api.anthropic.com",
        {"llm_provider": "anthropic", "anthropic_api_key": "sk-ant-fake"},
    ),
    # An OpenAI-compatible vendor behind a custom base URL, as a self-hosted gateway would be.
    "compatible": (
        "openai",
        "https://llm.gateway.test/v1",
        {"llm_provider": "openai-compatible", "llm_base_url": "https://llm.gateway.test/v1", "llm_model": "house-7b"},
    ),
}


@contextmanager
def offline_router() -> Iterator[respx.Router]:
    """Intercepts the SDKs' HTTP; a request no fake routes fails on exit, even if the code under test coped."""
    unexpected: list[str] = []
    with respx.mock(using="httpcore2", assert_all_mocked=True, assert_all_called=False) as router:
        resolve = router.aresolve

        async def aresolve(request: httpx.Request) -> Any:
            try:
                return await resolve(request)
            except AllMockedAssertionError:
                unexpected.append(f"{request.method} {request.url}")
                raise

        router.aresolve = aresolve  # type: ignore[method-assign]
        yield router
    assert not unexpected, f"unexpected outbound requests: {unexpected}"


@pytest.fixture
def llm_router() -> Iterator[respx.Router]:
    with offline_router() as router:
        yield router


@pytest.fixture
def make_llm(llm_router: respx.Router) -> Callable[[str], FakeLLM]:
    def make(name: str) -> FakeLLM:
        wire, base_url, settings = PROVIDERS[name]
        return FakeLLM(llm_router, wire, base_url, settings)

    return make


@pytest.fixture(params=sorted(PROVIDERS))
def any_llm(request: pytest.FixtureRequest, make_llm: Callable[[str], FakeLLM]) -> FakeLLM:
    """Each wire format in turn: OpenAI, Anthropic, an OpenAI-compatible vendor at a custom URL."""
    return make_llm(request.param)


@pytest.fixture
def openai_llm(make_llm: Callable[[str], FakeLLM]) -> FakeLLM:
    return make_llm("openai")


@pytest.fixture
def configured(openai_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    """The environment of a user who chose OpenAI (the CLI reads it), served by the fake."""
    monkeypatch.setenv("LLM_PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-openai")
    return openai_llm
