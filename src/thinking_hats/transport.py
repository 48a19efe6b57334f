"""Running the server: stdio for MCP clients, streamable HTTP for everything else."""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import os
import re
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .config import Settings
from .store import LOCAL

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


@dataclass(frozen=True)
class Principals:
    """The principals HTTP clients authenticate as: bearer token -> name. Empty: the one local principal."""

    by_token: dict[bytes, str]

    @classmethod
    def from_settings(cls, settings: Settings) -> Principals:
        by_token: dict[bytes, str] = {}
        if settings.thinking_http_token is not None:
            by_token[settings.thinking_http_token.get_secret_value().encode()] = "default"
        path = settings.thinking_http_tokens_file
        if path is not None:
            try:
                lines = path.expanduser().read_text(encoding="utf-8").splitlines()
            except OSError as exc:
                raise ConfigurationError(
                    f"cannot read THINKING_HTTP_TOKENS_FILE {path}: {exc.strerror}: give a readable file"
                ) from None
            for number, line in enumerate(lines, 1):
                text = line.strip()
                if not text or text.startswith("#"):
                    continue
                parts = text.split()
                where = f"THINKING_HTTP_TOKENS_FILE {path}, line {number}"
                if len(parts) != 2 or not _NAME.match(parts[0]):
                    raise ConfigurationError(
                        f"{where}: expected 'name token' (a name of letters, digits, '.', '_' or '-', then the "
                        "token, separated by a space)"
                    )
                name, token = parts
                if len(token) < 16:
                    raise ConfigurationError(f"{where}: the token of '{name}' is shorter than 16 characters")
                if token.encode() in by_token or name in by_token.values():
                    raise ConfigurationError(f"{where}: '{name}' or its token is listed twice")
                by_token[token.encode()] = name
        return cls(by_token)

    def who(self, authorization: bytes) -> str | None:
        """The principal of an `Authorization` header, or None. Every token is compared, in constant time."""
        if not self.by_token:
            return LOCAL
        given = authorization[7:] if authorization[:7].lower() == b"bearer " else b""
        found = None
        for token, name in self.by_token.items():
            if hmac.compare_digest(given, token):
                found = name
        return found


class Gate:
    """ASGI middleware in front of the MCP app: health checks, authentication, and legacy (stateful) sessions.

    It decides who a request is (the principal, from the bearer token) and which connection it belongs to, and
    puts both on the ASGI scope; no client header can choose either. A legacy session id is handed out signed
    (HMAC keyed by the principal's token, or by a secret of this server for the local principal), so a client can
    only present an id issued to its own principal. The process that opened a legacy session serves it; any other
    worker or replica (the session's process restarted, or a load balancer sent the request elsewhere) answers it
    statelessly: the thinking state is in the store, so the client does not notice. Legacy sessions are bounded per
    principal: the least recently used is closed to make room, so a flood of `initialize` requests cannot lock
    anyone else out.
    """

    def __init__(
        self, app: Any, fallback: Any, principals: Principals, settings: Settings, health: Any, secret: bytes
    ) -> None:
        self.app = app
        self.fallback = fallback  # the same server, stateless: for legacy sessions this process did not open
        self.principals = principals
        self.keys = {name: token for token, name in principals.by_token.items()} | {LOCAL: secret}
        self.limit = settings.thinking_http_session_limit
        self.idle = settings.thinking_http_idle_timeout
        self.health = health
        self._sessions: dict[str, OrderedDict[str, float]] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            async with self.fallback.router.lifespan_context(self.fallback):
                await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("path") == "/healthz":
            await self._healthz(send)
            return
        headers = dict(scope.get("headers") or [])
        principal = self.principals.who(headers.get(b"authorization", b""))
        if principal is None:
            await _json(send, 401, {"error": UNAUTHORIZED}, [(b"www-authenticate", b'Bearer realm="thinking-hats"')])
            return
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        from .server import CONNECTION_KEY, PRINCIPAL_KEY

        scope = dict(scope)
        scope[PRINCIPAL_KEY] = principal
        # The SDK binds each legacy session to the user that opened it and answers 404 to any other.
        scope["user"] = AuthenticatedUser(AccessToken(token="-", client_id=principal, scopes=[]))
        receive = _deadline(receive, self.idle, scope.get("method", ""))
        version = headers.get(b"mcp-protocol-version", b"").decode("latin-1") or None
        presented = headers.get(b"mcp-session-id", b"").decode("latin-1") or None
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self.app(scope, receive, send)  # the stateless revision: no connection at all
            return
        if presented is not None:
            session = self._verify(principal, presented)
            if session is None:
                await _json(send, 404, {"jsonrpc": "2.0", "id": None,
                                        "error": {"code": -32600, "message": "Session not found"}})  # fmt: skip
                return
            scope[CONNECTION_KEY] = f"http:{session}"
            table = self._sessions.get(principal)
            if table is not None and session in table:
                table[session] = time.monotonic()
                table.move_to_end(session)
                scope["headers"] = _with_session(scope["headers"], session)
                await self.app(scope, receive, self._signing(send, principal))
            else:
                scope["headers"] = _with_session(scope["headers"], None)
                await self.fallback(scope, receive, send)
            return
        opened: list[str] = []
        await self.app(scope, receive, self._signing(send, principal, opened))
        if opened:
            await self._admit(principal, opened[0], scope)

    def _sign(self, principal: str, session: str) -> str:
        digest = hmac.new(self.keys[principal], f"{principal}\0{session}".encode(), "sha256").hexdigest()
        return f"{session}.{digest[:32]}"

    def _verify(self, principal: str, presented: str) -> str | None:
        session, _, _ = presented.rpartition(".")
        return session if session and hmac.compare_digest(self._sign(principal, session), presented) else None

    def _signing(self, send: Any, principal: str, opened: list[str] | None = None) -> Any:
        """`send`, with the session id of the response replaced by its signed form."""

        async def signed(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = []
                for name, value in message.get("headers") or []:
                    if name.lower() == b"mcp-session-id":
                        session = value.decode("latin-1")
                        if opened is not None:
                            opened.append(session)
                        value = self._sign(principal, session).encode("latin-1")
                    headers.append((name, value))
                message = message | {"headers": headers}
            await send(message)

        return signed

    async def _admit(self, principal: str, session: str, scope: dict[str, Any]) -> None:
        table = self._sessions.setdefault(principal, OrderedDict())
        table[session] = time.monotonic()
        stale = time.monotonic() - self.idle
        while table and (len(table) > self.limit or next(iter(table.values())) < stale):
            oldest, _ = table.popitem(last=False)
            await self._close(oldest, scope)

    async def _close(self, session: str, scope: dict[str, Any]) -> None:
        """End a legacy session through the protocol's own DELETE, as its client could."""
        keep = (b"host", b"origin", b"authorization", b"mcp-protocol-version")
        headers = [(k, v) for k, v in scope.get("headers") or [] if k.lower() in keep]
        closing = scope | {"method": "DELETE", "headers": [*headers, (b"mcp-session-id", session.encode())]}

        async def nothing() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: dict[str, Any]) -> None:
            return None

        await self.app(closing, nothing, discard)

    async def _healthz(self, send: Any) -> None:
        try:
            # A probe wants an answer within its own timeout, not the store pool's 10 s.
            report = await asyncio.wait_for(self.health(), _HEALTH_SECONDS)
            status, body = 200, {"status": "ok", "store": report}
        except TimeoutError:
            error = f"the session store did not answer within {_HEALTH_SECONDS} s: check it (THINKING_STORE)"
            status, body = 503, {"status": "unavailable", "error": error}
        except Exception as exc:  # a load balancer needs a status, whatever broke
            status, body = 503, {"status": "unavailable", "error": str(exc)}
        await _json(send, status, body)


UNAUTHORIZED = (
    "unauthorized: send the header 'Authorization: Bearer <token>' "
    "(THINKING_HTTP_TOKEN, or a token from THINKING_HTTP_TOKENS_FILE)"
)
_HEALTH_SECONDS = 3
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def _with_session(headers: list[tuple[bytes, bytes]], session: str | None) -> list[tuple[bytes, bytes]]:
    kept = [(k, v) for k, v in headers if k.lower() != b"mcp-session-id"]
    return kept if session is None else [*kept, (b"mcp-session-id", session.encode("latin-1"))]


def _deadline(receive: Any, seconds: float, method: str) -> Any:
    """A request body that has not all arrived within `seconds` ends the request (a half-sent request holds nothing).

    Once a POST's body is in, `receive` only reports the client leaving, which may take as long as the reply does:
    that wait is not bounded, or every thought slower than `seconds` would be cut off as a disconnect. A GET (the
    legacy notification stream) has no body to wait for and is ended after `seconds`; its client reopens it.
    """
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    complete = False

    async def bounded() -> Any:
        nonlocal complete
        if complete:
            return await receive()
        try:
            message = await asyncio.wait_for(receive(), max(until - loop.time(), 0))
        except TimeoutError:
            return {"type": "http.disconnect"}
        complete = method == "POST" and message["type"] == "http.request" and not message.get("more_body", False)
        return message

    return bounded


async def _json(send: Any, status: int, body: object, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def http_app(settings: Settings, host: str, secret: bytes | None = None) -> Any:
    """The ASGI app for `serve --transport http`, with the host and token rules applied."""
    from mcp.server.transport_security import TransportSecuritySettings

    from .server import build_server

    principals = Principals.from_settings(settings)
    loopback = is_loopback(host)
    if not loopback and not principals.by_token:
        raise ConfigurationError(
            f"refusing to serve HTTP on {host} without a token: set THINKING_HTTP_TOKEN or THINKING_HTTP_TOKENS_FILE "
            "(clients then send 'Authorization: Bearer <token>'), or bind 127.0.0.1."
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
    common: dict[str, Any] = {
        "host": host,
        "transport_security": security,
        "max_request_body_size": settings.thinking_http_max_body,
    }
    fallback = server.streamable_http_app(stateless_http=True, **common)
    app = server.streamable_http_app(
        session_idle_timeout=settings.thinking_http_idle_timeout,
        max_sessions=None,  # bounded per principal by the Gate instead, so one principal cannot fill it
        **common,
    )
    return Gate(app, fallback, principals, settings, server.health, secret or os.urandom(32))


def check_store(settings: Settings) -> None:
    """Fail at start-up, with the fix, rather than on the first thought."""
    import asyncio

    from .store import open_store

    async def probe() -> None:
        await (await open_store(settings.postgres_url(), settings.database_path())).close()

    asyncio.run(probe())


def serve_http(settings: Settings, host: str, port: int, workers: int = 1) -> None:
    """Serve until SIGTERM or Ctrl-C; `--port 0` picks a free port. The address is announced on stderr once bound.

    With `workers` > 1, that many processes serve the one port over the one store: everything a request needs is
    in the store, so any worker can answer any request. Each worker listens on a socket of its own bound to the
    port (SO_REUSEPORT), and the kernel spreads new connections evenly over them. (On one shared socket, whichever
    worker woke first accepted every connection waiting: a burst of keep-alive clients, or a load balancer's pool,
    often all landed in one worker.)
    """
    import sys

    http_app(settings, host)  # refuse a bad configuration here, once, with the fix
    check_store(settings)
    # With workers, this socket only holds the port (it is not listening, so the kernel routes nothing to it).
    sock = _listen(host, port, shared=workers > 1)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if sock.family == socket.AF_INET6 else host
    plural = f" ({workers} workers)" if workers > 1 else ""

    def announce() -> None:
        print(f"thinking-hats: streamable HTTP on http://{shown}:{bound}/mcp{plural}", file=sys.stderr, flush=True)

    # Signs the local principal's legacy session ids; shared by the workers so each can verify the others'.
    secret = os.urandom(32)
    if workers == 1:
        announce()
        _serve(settings, host, sock, secret)
    else:
        _supervise(settings, host, sock, workers, secret, announce)


def _listen(host: str, port: int, shared: bool = False) -> socket.socket:
    """A listening socket; `shared`: one of several bound to the port (SO_REUSEPORT), not listening yet."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if shared:
        if not hasattr(socket, "SO_REUSEPORT"):
            sock.close()
            raise ConfigurationError("--workers needs SO_REUSEPORT (Linux, BSD, macOS): run one process per port")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    # Accepted sockets inherit this; without it a keep-alive reply waits ~40 ms on the client's delayed ACK.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigurationError(f"cannot listen on {host}:{port} ({exc.strerror}): choose another --port") from None
    # Listening before the announcement: a client that connects at once waits in the backlog, never refused.
    if not shared:
        sock.listen(2048)
    return sock


def _serve(settings: Settings, host: str, sock: socket.socket, secret: bytes) -> None:
    """One process serving the socket. On SIGTERM uvicorn stops accepting and lets requests in flight finish;
    a thought is bounded by THINKING_DEADLINE, so after that (plus a margin) what is left is cancelled."""
    import uvicorn

    config = uvicorn.Config(
        http_app(settings, host, secret),
        log_level=settings.thinking_log_level.lower(),
        access_log=False,
        timeout_graceful_shutdown=int(settings.thinking_deadline) + 5,
        timeout_keep_alive=5,
        http=_h11_with_header_timeout(settings.thinking_http_idle_timeout),
    )
    uvicorn.Server(config).run(sockets=[sock])


def _h11_with_header_timeout(seconds: float) -> type:
    """uvicorn's h11 protocol, closing a connection whose next request's headers have not arrived in `seconds`
    (counted from the connection's start, then from the end of each reply).

    uvicorn times out idle keep-alive connections but stops that clock at the first byte of the next request, and
    never times out a first request, so without this a client trickling bytes holds a socket and its buffers
    forever. (The body has its own deadline in the Gate.)
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Protocol(H11Protocol):
        _overdue: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._wait_for_headers()

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None and not self.cycle.response_complete and self._overdue is not None:
                self._overdue.cancel()  # a request's headers are in
                self._overdue = None

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.cycle.response_complete:
                self._wait_for_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._overdue is not None:
                self._overdue.cancel()
            super().connection_lost(exc)

        def _wait_for_headers(self) -> None:
            if self._overdue is not None:
                self._overdue.cancel()
            self._overdue = self.loop.call_later(seconds, self._headers_overdue)

        def _headers_overdue(self) -> None:
            self._overdue = None
            if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
                self.transport.close()

    return Protocol


def _worker(host: str, port: int, secret: bytes, listening: Any) -> None:
    """A worker process (spawned): its own Settings from the same environment, its own event loop and store, its
    own listening socket on the port (`listening` is set once it listens)."""
    from .config import Settings
    from .logs import setup_logging

    settings = Settings()
    setup_logging(settings)
    sock = _listen(host, port, shared=True)
    sock.listen(2048)
    listening.set()
    _serve(settings, host, sock, secret)


def _supervise(
    settings: Settings, host: str, sock: socket.socket, workers: int, secret: bytes, announce: Callable[[], None]
) -> None:
    """Start the workers, announce the address once they listen, restart one that dies, and on SIGTERM/SIGINT pass
    the signal on and wait for them. `sock` holds the port; each worker listens on a socket of its own."""
    import logging
    import multiprocessing
    import multiprocessing.connection
    import signal

    log = logging.getLogger("thinking_hats")
    spawn = multiprocessing.get_context("spawn")
    port = sock.getsockname()[1]
    stopping = False

    def start(index: int) -> tuple[Any, Any]:
        listening = spawn.Event()
        name = f"thinking-hats-worker-{index}"
        process = spawn.Process(target=_worker, args=(host, port, secret, listening), name=name)
        process.start()
        return process, listening

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for process in processes:
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)

    started = [start(i) for i in range(workers)]
    processes = [process for process, _ in started]
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # Announced once every worker listens (or died: the loop below replaces it): a client that connects at once
    # then waits in a worker's backlog instead of being refused.
    for process, listening in started:
        while not stopping and process.is_alive() and not listening.wait(0.1):
            pass
    announce()
    while not stopping:
        multiprocessing.connection.wait([p.sentinel for p in processes], timeout=1.0)
        for index, process in enumerate(processes):
            if not process.is_alive() and not stopping:
                log.warning("worker %d exited with %s; starting another", index, process.exitcode)
                processes[index], _ = start(index)
    grace = settings.thinking_deadline + 10
    for process in processes:
        process.join(grace)
        if process.is_alive():
            process.kill()
            process.join()
    sock.close()


def serve_stdio(settings: Settings) -> None:
    """Serve MCP on stdin/stdout until stdin closes; one Ctrl-C (SIGINT) ends the process at once, quietly.

    The SDK reads stdin in a worker thread that no cancellation can interrupt: a server cancelled by Ctrl-C would
    stay up, idle, until the client sent another line, and the next presses would print a traceback. So the
    server runs in a daemon thread and the main thread, where Python delivers SIGINT, waits for it and exits at
    once when interrupted. Exiting mid-call is safe: a thought is committed together with its reply or not at all,
    as after kill -9.
    """
    import sys
    import threading

    from .server import build_server

    check_store(settings)
    server = build_server(settings)
    done = threading.Event()
    failure: list[BaseException] = []

    def serve() -> None:
        try:
            server.run()
        except BaseException as exc:  # handed to the main thread, which reports it as before
            failure.append(exc)
        finally:
            done.set()

    try:
        threading.Thread(target=serve, name="thinking-hats-stdio", daemon=True).start()
        done.wait()
    except KeyboardInterrupt:
        sys.stderr.flush()
        os._exit(130)
    if failure:
        raise failure[0]
