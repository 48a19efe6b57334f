"""A stub model server on 127.0.0.1: OpenAI chat completions and Anthropic messages, with a set latency.

It answers like the real APIs (plain JSON, or server-sent events when the request says `"stream": true`), so the
official SDKs, agno and the server under test all run unmodified. It counts requests per role (which hat, or the
synthesis, asked: read from the system prompt), their peak concurrency and prompt sizes, and injects faults per
role: a status code (with or without Retry-After), a delay beyond any timeout, a malformed body, an empty answer.

    async with StubLLM(latency=0.2) as stub:      # in the caller's event loop
        stub.fault("critical", status=500, times=2, retry_after=1)
        ... LLM_BASE_URL=stub.base_url ...        # Anthropic clients take stub.root (no /v1)
        stub.stats()["by_role"]

    with StubLLM.in_thread(latency=0.2) as stub:  # its own loop in a thread, for synchronous callers

    python benchmarks/stub_llm.py --port 8999 --latency 0.2   # standalone; prints its base URL

Other processes steer it over HTTP: POST /_control/fault (JSON: role, status, retry_after, delay, malformed,
empty, times), POST /_control/latency (JSON: latency, role), POST /_control/reset, GET /_control/stats.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

Wire = Literal["openai", "anthropic"]
# The words a system prompt names its role by; "synthesizer" counts as the synthesis step.
ROLE_WORDS = {word: word for word in ("factual", "emotional", "critical", "optimistic", "creative")}
ROLE_WORDS["synthesizer"] = "synthesis"
# The error "type" each vendor puts in its error body, so SDKs and our error messages see realistic payloads.
OPENAI_ERRORS = dict.fromkeys((400, 401, 404), "invalid_request_error") | {429: "requests"}
ANTHROPIC_ERRORS = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error"}
ANTHROPIC_ERRORS |= {404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}


def role_of(system: str) -> str:
    """The role named first in a system prompt ("You are the **critical** hat ..." -> critical).

    Earliest occurrence wins because a synthesizer prompt mentions the hats it merges after naming itself."""
    lowered = system.lower()
    found = [(lowered.find(word), role) for word, role in ROLE_WORDS.items() if word in lowered]
    return min(found)[1] if found else "unknown"


@dataclass
class Fault:
    """What goes wrong for a role's requests; fields combine (a delay, then a status, say)."""

    status: int | None = None  # answer with this HTTP status and the vendor's error body
    retry_after: str | float | None = None  # ... and this Retry-After header
    delay: float = 0.0  # extra seconds before answering (beyond a client's timeout, say)
    malformed: bool = False  # 200 with a body that is not JSON (or an SSE event that is not)
    empty: bool = False  # 200 with an empty completion
    times: int | None = None  # only the next N requests of the role, then normal again; None: until reset


@dataclass
class Seen:
    """One recorded request: what benchmarks read back (prompt growth, retry spacing, overlap)."""

    role: str
    path: str
    prompt_tokens: int
    stream: bool = False
    completion_tokens: int = 0
    # Of prompt_tokens: read from / written to a prompt cache. Each vendor reports them its own way: OpenAI
    # inside prompt_tokens, Anthropic beside input_tokens (which then counts only the rest).
    cached_tokens: int = 0
    cache_creation_tokens: int = 0
    status: int = 200
    start: float = field(default_factory=time.monotonic)
    end: float = 0.0


class StubLLM:
    """The stub server; one instance serves both wire formats on one port."""

    def __init__(
        self,
        latency: float = 0.2,
        *,
        role_latency: dict[str, float] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.latency = latency
        self.role_latency: dict[str, float] = dict(role_latency or {})
        self.host, self.port = host, port
        self.reset()
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._ids = itertools.count(1)
        post, get = ["POST"], ["GET"]
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._openai, methods=post),
                Route("/chat/completions", self._openai, methods=post),
                Route("/v1/messages", self._anthropic, methods=post),
                Route("/messages", self._anthropic, methods=post),
                Route("/v1/models", self._models, methods=get),
                Route("/models", self._models, methods=get),
                Route("/_control/fault", self._control_fault, methods=post),
                Route("/_control/latency", self._control_latency, methods=post),
                Route("/_control/reset", self._control_reset, methods=post),
                Route("/_control/stats", self._control_stats, methods=get),
            ]
        )

    # --- the caller's side ---------------------------------------------------------------------------------------
    @property
    def root(self) -> str:
        """For Anthropic clients, which append /v1 themselves."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """For OpenAI-style clients (LLM_BASE_URL)."""
        return f"{self.root}/v1"

    def fault(
        self,
        role: str,
        *,
        status: int | None = None,
        retry_after: str | float | None = None,
        delay: float = 0.0,
        malformed: bool = False,
        empty: bool = False,
        times: int | None = None,
    ) -> None:
        """Inject a fault for `role` ("*" for every role without its own); see `Fault`."""
        self.faults[role] = Fault(status, retry_after, delay, malformed, empty, times)

    def hold(self, *counts: int) -> None:
        """Hold the next `counts[0]` requests until all of them have arrived and answer them together, then the
        next `counts[1]` ... : bursts that are certainly that many calls in flight at once (a thought's hats, then
        the syntheses), however the client's tasks happen to be scheduled."""
        self._holds = [(count, asyncio.Event()) for count in counts if count > 0]

    def reset(self) -> None:
        """Forget counters, history and faults (latency stays), so each benchmark round starts clean."""
        self.faults: dict[str, Fault] = {}
        self.seen: list[Seen] = []
        self.in_flight: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.peak_total = 0
        self.connections = 0  # TCP connections accepted
        self._holds: list[tuple[int, asyncio.Event]] = []

    def stats(self) -> dict[str, Any]:
        """Counters as plain JSON-able data; works from another thread as it only copies (atomically) and reads."""
        seen, tokens = list(self.seen), Counter[str]()
        for s in seen:
            tokens[s.role] += s.prompt_tokens
        return {
            "requests": len(seen),
            "by_role": dict(Counter(s.role for s in seen)),
            "in_flight": sum(dict(self.in_flight).values()),
            "peak_concurrency": self.peak_total,
            "connections": self.connections,
            "peak_by_role": dict(self.peak),
            "prompt_tokens_by_role": dict(tokens),
            "recent": [asdict(s) for s in seen[-500:]],
        }

    async def start(self) -> StubLLM:
        """Bind now (so `port` is known before returning) and serve in a task of the running loop."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # accepted sockets inherit it: no 40 ms ACK waits
        try:
            sock.bind((self.host, self.port))
            sock.listen(1024)
        except OSError:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_config=None,  # leave the host process's logging alone
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_keep_alive=60,  # SDK clients keep connections in a pool
            timeout_graceful_shutdown=2,
        )
        config.load()
        stub, protocol = self, config.http_protocol_class

        class Counted(protocol):  # type: ignore[valid-type,misc]
            """The configured HTTP protocol, counting the connections it is made for (one instance each)."""

            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                stub.connections += 1
                super().connection_made(transport)

        config.http_protocol_class = Counted
        self._closing = asyncio.Event()
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        return self

    async def stop(self) -> None:
        """Wake delayed requests (so a 30 s delay fault does not hold shutdown) and stop serving."""
        if self._server is not None and self._task is not None:
            if self._closing is not None:
                self._closing.set()
            self._server.should_exit = True
            await self._task
            self._server = self._task = None

    async def __aenter__(self) -> StubLLM:
        return await self.start()

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    @classmethod
    @contextmanager
    def in_thread(cls, latency: float = 0.2, **kwargs: Any) -> Iterator[StubLLM]:
        """The stub on its own event loop in a daemon thread, for synchronous code or another loop's benchmarks."""
        stub = cls(latency, **kwargs)
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="stub-llm", daemon=True)
        thread.start()

        def run(coro: Coroutine[Any, Any, Any]) -> Any:
            return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=30)

        try:
            run(stub.start())
            yield stub
        finally:
            run(stub.stop())
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=30)
            loop.close()

    # --- the wire ------------------------------------------------------------------------------------------------
    async def _models(self, request: Request) -> Response:
        model = {"id": "stub-model", "object": "model", "created": 0, "owned_by": "stub"}
        return JSONResponse({"object": "list", "data": [model]})

    async def _openai(self, request: Request) -> Response:
        body = await _body(request)
        if body is None:
            return JSONResponse(error_body("openai", 400, "request body is not a JSON object"), status_code=400)
        messages = body.get("messages") or []
        system = "".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
        return await self._answer(request, body, system, messages, "openai")

    async def _anthropic(self, request: Request) -> Response:
        body = await _body(request)
        if body is None:
            return JSONResponse(error_body("anthropic", 400, "request body is not a JSON object"), status_code=400)
        system = _text(body.get("system"))
        messages = body.get("messages") or []
        return await self._answer(request, body, system, [{"content": system}, *messages], "anthropic")

    async def _answer(
        self, request: Request, body: dict[str, Any], system: str, messages: list[dict[str, Any]], wire: Wire
    ) -> Response:
        """Count, wait out the latency (plus any fault delay), then answer, fail or garble as the role's fault says."""
        role, stream = role_of(system), bool(body.get("stream"))
        users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
        chars = sum(len(_text(m.get("content"))) for m in messages)
        seen = Seen(role=role, path=request.url.path, prompt_tokens=chars // 4, stream=stream)
        self.seen.append(seen)
        fault = self._take_fault(role)
        self.in_flight[role] += 1
        self.peak[role] = max(self.peak[role], self.in_flight[role])
        self.peak_total = max(self.peak_total, sum(self.in_flight.values()))
        try:
            if self._holds:
                left, released = self._holds[0]
                if left == 1:
                    self._holds.pop(0)
                    released.set()
                else:
                    self._holds[0] = (left - 1, released)
                await released.wait()
            await self._pause(self.role_latency.get(role, self.latency) + (fault.delay if fault else 0.0))
        finally:
            self.in_flight[role] -= 1
            seen.end = time.monotonic()
        n = next(self._ids)
        ids = {"x-request-id": f"req_stub_{n}", "request-id": f"req_stub_{n}"}
        if fault is not None and fault.status is not None:
            seen.status = fault.status
            headers = ids | ({"retry-after": str(fault.retry_after)} if fault.retry_after is not None else {})
            return JSONResponse(error_body(wire, fault.status), status_code=fault.status, headers=headers)
        if fault is not None and fault.malformed:
            if stream:
                return Response('data: {"id": "broken", "choices": [\n\n', media_type="text/event-stream")
            return Response('{"id": "broken", "choices": [ {"message": ', media_type="application/json", headers=ids)
        text = "" if fault is not None and fault.empty else f"[{role}] analysis of: {(users or [''])[-1][:60]}"
        seen.completion_tokens = len(text) // 4 + 1
        model = str(body.get("model") or "stub-model")
        if stream:
            usage = wire == "anthropic" or bool((body.get("stream_options") or {}).get("include_usage"))
            events = (
                _openai_stream(model, text, seen, n, usage)
                if wire == "openai"
                else _anthropic_stream(model, text, seen, n)
            )
            return StreamingResponse(
                events, media_type="text/event-stream", headers=ids | {"cache-control": "no-cache"}
            )
        payload = openai_body if wire == "openai" else anthropic_body
        return JSONResponse(payload(model, text, seen, n), headers=ids)

    async def _pause(self, seconds: float) -> None:
        """Sleep, but wake when the stub stops: pending delayed answers must not hold up shutdown."""
        if seconds <= 0 or self._closing is None:
            return
        with suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), timeout=seconds)

    def _take_fault(self, role: str) -> Fault | None:
        for key in (role, "*"):
            fault = self.faults.get(key)
            if fault is None:
                continue
            if fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    self.faults.pop(key, None)
                if fault.times < 0:  # times=0: never applied
                    continue
            return fault
        return None

    # --- control over HTTP, for a stub in another process ------------------------------------------------------
    async def _control_fault(self, request: Request) -> Response:
        spec = await _body(request)
        if spec is None:
            return JSONResponse({"ok": False, "error": "expected a JSON object"}, status_code=400)
        try:
            self.fault(str(spec.pop("role", "*")), **spec)
        except TypeError as exc:  # an unknown or missing field
            return JSONResponse({"ok": False, "error": str(exc)}, status_code=400)
        return JSONResponse({"ok": True})

    async def _control_latency(self, request: Request) -> Response:
        spec = await _body(request)
        if spec is None or not isinstance(spec.get("latency"), int | float):
            return JSONResponse({"ok": False, "error": 'expected {"latency": seconds, "role": optional}'}, 400)
        if spec.get("role"):
            self.role_latency[str(spec["role"])] = float(spec["latency"])
        else:
            self.latency = float(spec["latency"])
        return JSONResponse({"ok": True})

    async def _control_reset(self, request: Request) -> Response:
        self.reset()
        return JSONResponse({"ok": True})

    async def _control_stats(self, request: Request) -> Response:
        return JSONResponse(self.stats())


async def _body(request: Request) -> dict[str, Any] | None:
    """The JSON object of a request, or None: a bad body gets a 400, not a stub traceback."""
    try:
        body = await request.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _text(content: Any) -> str:
    """Text of a message content: a string, or a list of blocks ({"type": "text", "text": ...})."""
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def error_body(wire: Wire, status: int, message: str | None = None) -> dict[str, Any]:
    message = message or f"stub fault: HTTP {status}"
    if wire == "anthropic":
        kind = ANTHROPIC_ERRORS.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind, code = (
        OPENAI_ERRORS.get(status, "server_error"),
        {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status),
    )
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _openai_usage(seen: Seen) -> dict[str, Any]:
    total = seen.prompt_tokens + seen.completion_tokens
    details: dict[str, int] = {"cached_tokens": seen.cached_tokens, "audio_tokens": 0}
    if seen.cache_creation_tokens:  # OpenAI never sends it; gateways such as OpenRouter do
        details["cache_write_tokens"] = seen.cache_creation_tokens
    return {
        "prompt_tokens": seen.prompt_tokens,
        "completion_tokens": seen.completion_tokens,
        "total_tokens": total,
        "prompt_tokens_details": details,
    }


def _anthropic_usage(seen: Seen, output_tokens: int) -> dict[str, int]:
    cached = seen.cached_tokens + seen.cache_creation_tokens
    return {
        "input_tokens": seen.prompt_tokens - cached,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": seen.cached_tokens,
        "cache_creation_input_tokens": seen.cache_creation_tokens,
    }


def openai_body(model: str, text: str, seen: Seen, n: int = 1) -> dict[str, Any]:
    """A chat completion as OpenAI returns it (the tests' fake provider answers with it too)."""
    message = {"role": "assistant", "content": text, "refusal": None}
    return {
        "id": f"chatcmpl-stub-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
        "usage": _openai_usage(seen),
        "system_fingerprint": None,
    }


def anthropic_body(model: str, text: str, seen: Seen, n: int = 1) -> dict[str, Any]:
    """A message as Anthropic returns it."""
    return {
        "id": f"msg_stub_{n}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": _anthropic_usage(seen, seen.completion_tokens),
    }


def _sse(data: dict[str, Any], event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"


def _pieces(text: str) -> list[str]:
    return [text[i : i + 16] for i in range(0, len(text), 16)]


async def _openai_stream(model: str, text: str, seen: Seen, n: int, usage: bool) -> AsyncIterator[str]:
    """Chunks as the real API sends them; the usage-only last chunk only when stream_options.include_usage."""
    base = {"id": f"chatcmpl-stub-{n}", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    base |= {"system_fingerprint": None} | ({"usage": None} if usage else {})

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return _sse(base | {"choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": ""})
    for piece in _pieces(text):
        yield chunk({"content": piece})
    yield chunk({}, "stop")
    if usage:
        yield _sse(base | {"choices": [], "usage": _openai_usage(seen)})
    yield "data: [DONE]\n\n"


async def _anthropic_stream(model: str, text: str, seen: Seen, n: int) -> AsyncIterator[str]:
    """The event sequence of the Messages API: message_start ... message_stop."""
    message = anthropic_body(model, "", seen, n) | {"content": [], "stop_reason": None}
    message["usage"] = _anthropic_usage(seen, 1)
    yield _sse({"type": "message_start", "message": message}, "message_start")
    block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    yield _sse(block, "content_block_start")
    yield _sse({"type": "ping"}, "ping")
    for piece in _pieces(text):
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
        yield _sse(delta, "content_block_delta")
    yield _sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
    end = {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}}
    yield _sse(end | {"usage": {"output_tokens": seen.completion_tokens}}, "message_delta")
    yield _sse({"type": "message_stop"}, "message_stop")


async def _serve_forever(host: str, port: int, latency: float) -> None:
    async with StubLLM(latency=latency, host=host, port=port) as stub:
        print(stub.base_url, flush=True)
        if stub._task is not None:
            await stub._task  # ends on SIGINT/SIGTERM, which uvicorn handles


def main() -> None:
    parser = argparse.ArgumentParser(description="A stub OpenAI/Anthropic model server (see the module docstring).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request")
    args = parser.parse_args()
    with suppress(KeyboardInterrupt):
        asyncio.run(_serve_forever(args.host, args.port, args.latency))


if __name__ == "__main__":
    main()
