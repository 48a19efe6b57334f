"""`GET /metrics`: the Prometheus exposition, in front of the gate, behind the same bearer tokens unless opened.

An ASGI wrapper of its own (not a route of the MCP app): a scrape never reaches the MCP stack, and the gate's
rules for MCP requests stay as they are.
"""

from __future__ import annotations

from typing import Any

from ..metrics import Metrics
from .gate import UNAUTHORIZED, _json


class MetricsEndpoint:
    """Answers `GET /metrics` from `metrics`; passes everything else to `app` (the gate)."""

    def __init__(self, app: Any, metrics: Metrics, public: bool) -> None:
        self.app = app
        self.metrics = metrics
        self.public = public

    @property
    def failure(self) -> str | None:
        """Why the gate's lifespan could not start (the worker reports it to its supervisor)."""
        failure: str | None = self.app.failure
        return failure

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") != "/metrics":
            await self.app(scope, receive, send)
            return
        if scope.get("method") not in ("GET", "HEAD"):
            await _json(send, 405, {"error": "GET /metrics"}, [(b"allow", b"GET, HEAD")])
            return
        if not self.public:
            sent = dict(scope.get("headers") or [])
            if self.app.principals.who(sent.get(b"authorization", b"")) is None:
                challenge = [(b"www-authenticate", b'Bearer realm="thinking-hats"')]
                await _json(send, 401, {"error": UNAUTHORIZED}, challenge)
                return
        body, content_type = self.metrics.exposition()
        headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body if scope.get("method") == "GET" else b""})
