"""Running the server: stdio for MCP clients, streamable HTTP for everything else."""

from __future__ import annotations

import hmac
import ipaddress
import json
from typing import Any

from .config import Settings

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


class ConfigurationError(Exception):
    """Start-up refused: the message says what to set."""


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BearerAuth:
    """ASGI guard: every HTTP request must carry `Authorization: Bearer <THINKING_HTTP_TOKEN>`."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                body = json.dumps(
                    {"error": "unauthorized: send the header 'Authorization: Bearer <THINKING_HTTP_TOKEN>'"}
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="thinking-hats"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(settings: Settings, host: str) -> Any:
    """The ASGI app for `serve --transport http`, with the host and token rules applied."""
    from mcp.server.transport_security import TransportSecuritySettings

    from .server import build_server

    token = settings.thinking_http_token.get_secret_value() if settings.thinking_http_token else None
    loopback = is_loopback(host)
    if not loopback and not token:
        raise ConfigurationError(
            f"refusing to serve HTTP on {host} without a token: set THINKING_HTTP_TOKEN (clients then send "
            "'Authorization: Bearer <token>'), or bind 127.0.0.1."
        )
    security = None
    if not loopback:
        names = [h.strip() for h in settings.thinking_http_allowed_hosts.split(",") if h.strip()]
        names += [host, *LOOPBACK_NAMES[:2], "[::1]"]
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[n for h in names for n in (h, f"{h}:*")],
            allowed_origins=[o for h in names for o in (f"http://{h}", f"http://{h}:*", f"https://{h}:*")],
        )
    server = build_server(settings)
    app = server.streamable_http_app(
        host=host,
        transport_security=security,
        max_request_body_size=settings.thinking_http_max_body,
    )
    return BearerAuth(app, token) if token else app


def check_store(settings: Settings) -> None:
    """Fail at start-up, with the fix, rather than on the first thought."""
    from .store import Store

    Store(settings.database_path()).close()


def serve_http(settings: Settings, host: str, port: int) -> None:
    """Serve until interrupted; `--port 0` picks a free port. The address is announced on stderr once bound."""
    import socket
    import sys

    import uvicorn

    app = http_app(settings, host)
    check_store(settings)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit this; without it a keep-alive reply waits ~40 ms on the client's delayed ACK.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigurationError(f"cannot listen on {host}:{port} ({exc.strerror}): choose another --port") from None
    # Listening before the announcement: a client that connects at once waits in the backlog, never refused.
    sock.listen(2048)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(f"thinking-hats: streamable HTTP on http://{shown}:{bound}/mcp", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level=settings.thinking_log_level.lower(), access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


def serve_stdio(settings: Settings) -> None:
    from .server import build_server

    check_store(settings)
    build_server(settings).run()
