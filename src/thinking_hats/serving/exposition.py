"""`GET /metrics`: the Prometheus exposition, in front of the gate, for operators only unless opened.

The exposition names every principal and what it spent, so a tenant's token is refused (403): an operator's
(`name token operator` in the tokens file, THINKING_HTTP_TOKEN's when it is the only token, the local principal
of an open loopback server) or the scrape token THINKING_METRICS_TOKEN reads it, or anyone with
THINKING_METRICS_PUBLIC.

An ASGI wrapper of its own (not a route of the MCP app): a scrape never reaches the MCP stack, and the gate's
rules for MCP requests stay as they are.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from ..ops.metrics import Metrics
from .gate import UNAUTHORIZED, _json


class MetricsEndpoint:
    """Answers `GET /metrics` from `metrics`; passes everything else to `app` (the gate)."""

    def __init__(self, app: Any, metrics: Metrics, public: bool, token: str | None = None) -> None:
        self.app = app
        self.metrics = metrics
        self.public = public
        self._scrape = None if token is None else hashlib.sha256(token.encode()).digest()

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
            authorization = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not self._scraper(authorization):
                principals = self.app.principals
                principal = principals.who(authorization)
                if principal is None:
                    challenge = [(b"www-authenticate", b'Bearer realm="thinking-hats"')]
                    await _json(send, 401, {"error": UNAUTHORIZED}, challenge)
                    return
                if not principals.operator(principal):
                    await _json(send, 403, {"error": FORBIDDEN})
                    return
        body, content_type = self.metrics.exposition()
        headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body if scope.get("method") == "GET" else b""})

    def _scraper(self, authorization: bytes) -> bool:
        if self._scrape is None or authorization[:7].lower() != b"bearer ":
            return False
        return hmac.compare_digest(hashlib.sha256(authorization[7:]).digest(), self._scrape)


FORBIDDEN = (
    "/metrics is for operators: it names every principal and what it spent. Use a token marked 'operator' in "
    "THINKING_HTTP_TOKENS_FILE ('name token operator'), or the scrape token THINKING_METRICS_TOKEN"
)
