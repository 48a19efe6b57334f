"""A stub model server on 127.0.0.1: OpenAI chat completions and Anthropic messages, with a set latency.

It answers like the real APIs (plain JSON, or server-sent events when the request says `"stream": true`), so the
official SDKs, agno and the server under test all run unmodified. It counts requests per role (which hat, or the
synthesis, asked: read from the system prompt), their peak concurrency and prompt sizes, and injects faults per
role: a status code (with or without Retry-After), a delay beyond any timeout, a malformed body, an empty answer.

    async with StubLLM(latency=0.2) as stub:      # in the caller's event loop
        stub.fault("critical", status=500, times=2)
        ... LLM_BASE_URL=stub.base_url ...
        stub.stats()["by_role"]

    with StubLLM.in_thread(latency=0.2) as stub:  # its own loop in a thread, for synchronous callers

    python benchmarks/stub_llm.py --port 8999 --latency 0.2   # standalone; prints its base URL

Other processes steer it over HTTP: POST /_control/fault (JSON: role, status, retry_after, delay, malformed,
empty, times), POST /_control/reset, GET /_control/stats.
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
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

ROLE_WORDS = {
    "factual": "factual",
    "emotional": "emotional",
    "critical": "critical",
    "optimistic": "optimistic",
    "creative": "creative",
    "synthesizer": "synthesis",
}


def role_of(system: str) -> str:
    """The role named first in a system prompt ("You are the **critical** hat ..." -> critical)."""
    lowered = system.lower()
    found = [(lowered.find(word), role) for word, role in ROLE_WORDS.items() if word in lowered]
    return min(found)[1] if found else "unknown"


@dataclass
class Fault:
    status: int | None = None  # answer with this HTTP status and the vendor's error body
    retry_after: str | None = None  # ... and this Retry-After header
    delay: float = 0.0  # extra seconds before answering (beyond a timeout, say)
    malformed: bool = False  # 200 with a body that is not JSON
    empty: bool = False  # 200 with an empty completion
    times: int | None = None  # only the next N requests of the role; None: until cleared


@dataclass
class Seen:
    role: str
    path: str
    prompt_tokens: int
    completion_tokens: int = 0
    status: int = 200
    start: float = field(default_factory=time.monotonic)
    end: float = 0.0


class StubLLM:
    def __init__(self, latency: float = 0.2, host: str = "127.0.0.1", port: int = 0) -> None:
        self.latency = latency
        self.role_latency: dict[str, float] = {}
        self.host, self.port = host, port
        self.faults: dict[str, Fault] = {}
        self.reset()
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._ids = itertools.count(1)
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._openai, methods=["POST"]),
                Route("/chat/completions", self._openai, methods=["POST"]),
                Route("/v1/messages", self._anthropic, methods=["POST"]),
                Route("/messages", self._anthropic, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/models", self._models, methods=["GET"]),
                Route("/_control/fault", self._control_fault, methods=["POST"]),
                Route("/_control/reset", self._control_reset, methods=["POST"]),
                Route("/_control/stats", self._control_stats, methods=["GET"]),
            ]
        )

    # --- the caller's side ---------------------------------------------------------------------------------------
    @property
    def root(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """For OpenAI-style clients (LLM_BASE_URL); Anthropic clients take `root`."""
        return f"{self.root}/v1"

    def fault(self, role: str, **kwargs: Any) -> None:
        """Inject a fault for `role` ("*" for every role); see `Fault`."""
        self.faults[role] = Fault(**kwargs)

    def reset(self) -> None:
        """Forget counters, history and faults."""
        self.faults = {}
        self.seen: list[Seen] = []
        self.in_flight: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.peak_total = 0

    def stats(self) -> dict[str, Any]:
        by_role = Counter(s.role for s in self.seen)
        tokens = Counter[str]()
        for s in self.seen:
            tokens[s.role] += s.prompt_tokens
        return {
            "requests": len(self.seen),
            "by_role": dict(by_role),
            "peak_concurrency": self.peak_total,
            "peak_by_role": dict(self.peak),
            "prompt_tokens_by_role": dict(tokens),
            "recent": [asdict(s) for s in self.seen[-500:]],
        }

    async def start(self) -> StubLLM:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # accepted sockets inherit it
        sock.bind((self.host, self.port))
        sock.listen(1024)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=30)
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        return self

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
            self._server = self._task = None

    async def __aenter__(self) -> StubLLM:
        return await self.start()

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    @classmethod
    @contextmanager
    def in_thread(cls, latency: float = 0.2) -> Iterator[StubLLM]:
        """The stub on its own event loop in a daemon thread, for synchronous code."""
        stub = cls(latency=latency)
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(stub.start())
            ready.set()
            loop.run_until_complete(stub._task or asyncio.sleep(0))

        thread = threading.Thread(target=run, name="stub-llm", daemon=True)
        thread.start()
        ready.wait(timeout=30)
        try:
            yield stub
        finally:
            if stub._server is not None:
                stub._server.should_exit = True
            thread.join(timeout=30)
            loop.close()

    # --- the wire ------------------------------------------------------------------------------------------------
    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "stub-model", "object": "model", "owned_by": "stub"}]})

    async def _openai(self, request: Request) -> Response:
        body = await request.json()
        messages = body.get("messages", [])
        system = "".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
        return await self._answer(request, body, system, messages, "openai")

    async def _anthropic(self, request: Request) -> Response:
        body = await request.json()
        system = body.get("system") or ""
        system = _text(system) if isinstance(system, list) else str(system)
        return await self._answer(request, body, system, body.get("messages", []), "anthropic")

    async def _answer(
        self, request: Request, body: dict[str, Any], system: str, messages: list[dict[str, Any]], wire: str
    ) -> Response:
        role = role_of(system)
        user = "".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
        seen = Seen(role=role, path=request.url.path, prompt_tokens=max(1, (len(system) + len(user)) // 4))
        self.seen.append(seen)
        fault = self._take_fault(role)
        self.in_flight[role] += 1
        self.peak[role] = max(self.peak[role], self.in_flight[role])
        self.peak_total = max(self.peak_total, sum(self.in_flight.values()))
        try:
            await asyncio.sleep(self.role_latency.get(role, self.latency) + (fault.delay if fault else 0))
        finally:
            self.in_flight[role] -= 1
            seen.end = time.monotonic()
        if fault is not None and fault.status is not None:
            seen.status = fault.status
            headers = {"retry-after": fault.retry_after} if fault.retry_after is not None else {}
            return JSONResponse(_error(wire, fault.status), status_code=fault.status, headers=headers)
        if fault is not None and fault.malformed:
            return Response('{"id": "broken", "choices": [ {"message": ', media_type="application/json")
        text = "" if fault is not None and fault.empty else f"[{role}] analysis of: {user.strip()[-60:]}"
        seen.completion_tokens = len(text) // 4 + 1 if text else 0
        model = str(body.get("model", "stub-model"))
        if body.get("stream"):
            events = _openai_stream(model, text, seen) if wire == "openai" else _anthropic_stream(model, text, seen)
            return StreamingResponse(events, media_type="text/event-stream")
        payload = _openai_body if wire == "openai" else _anthropic_body
        return JSONResponse(payload(model, text, seen, next(self._ids)))

    def _take_fault(self, role: str) -> Fault | None:
        for key in (role, "*"):
            fault = self.faults.get(key)
            if fault is None:
                continue
            if fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    del self.faults[key]
            return fault
        return None

    # --- control over HTTP ---------------------------------------------------------------------------------------
    async def _control_fault(self, request: Request) -> Response:
        spec = await request.json()
        self.fault(spec.pop("role", "*"), **spec)
        return JSONResponse({"ok": True})

    async def _control_reset(self, request: Request) -> Response:
        self.reset()
        return JSONResponse({"ok": True})

    async def _control_stats(self, request: Request) -> Response:
        return JSONResponse(self.stats())


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _error(wire: str, status: int) -> dict[str, Any]:
    message = f"stub fault: HTTP {status}"
    if wire == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": message}}
    return {"error": {"message": message, "type": "server_error", "code": None}}


def _openai_body(model: str, text: str, seen: Seen, n: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-stub-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": seen.prompt_tokens,
            "completion_tokens": seen.completion_tokens,
            "total_tokens": seen.prompt_tokens + seen.completion_tokens,
        },
    }


def _anthropic_body(model: str, text: str, seen: Seen, n: int) -> dict[str, Any]:
    return {
        "id": f"msg_stub_{n}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": seen.prompt_tokens, "output_tokens": seen.completion_tokens},
    }


def _sse(data: dict[str, Any], event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"


async def _openai_stream(model: str, text: str, seen: Seen) -> AsyncIterator[str]:
    base = {
        "id": "chatcmpl-stub-stream",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    yield _sse(base | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})
    for i in range(0, len(text), 16):
        yield _sse(base | {"choices": [{"index": 0, "delta": {"content": text[i : i + 16]}, "finish_reason": None}]})
    yield _sse(base | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    usage = {
        "prompt_tokens": seen.prompt_tokens,
        "completion_tokens": seen.completion_tokens,
        "total_tokens": seen.prompt_tokens + seen.completion_tokens,
    }
    yield _sse(base | {"choices": [], "usage": usage})
    yield "data: [DONE]\n\n"


async def _anthropic_stream(model: str, text: str, seen: Seen) -> AsyncIterator[str]:
    message = {
        "id": "msg_stub_stream",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": seen.prompt_tokens, "output_tokens": 0},
    }
    yield _sse({"type": "message_start", "message": message}, "message_start")
    yield _sse(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        "content_block_start",
    )
    for i in range(0, len(text), 16):
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text[i : i + 16]}}
        yield _sse(delta, "content_block_delta")
    yield _sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
    yield _sse(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": seen.completion_tokens},
        },
        "message_delta",
    )
    yield _sse({"type": "message_stop"}, "message_stop")


async def _serve_forever(port: int, latency: float) -> None:
    async with StubLLM(latency=latency, port=port) as stub:
        print(stub.base_url, flush=True)
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description="A stub OpenAI/Anthropic model server on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request")
    args = parser.parse_args()
    with suppress(KeyboardInterrupt):
        asyncio.run(_serve_forever(args.port, args.latency))


if __name__ == "__main__":
    main()
