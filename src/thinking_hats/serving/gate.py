"""Who an HTTP request is, and which connection it belongs to: the ASGI gate in front of the MCP app.

Principals come from bearer tokens (`THINKING_HTTP_TOKEN`, `THINKING_HTTP_TOKENS_FILE`) or are the one local
principal; the gate also answers health checks, signs and bounds legacy (stateful) sessions, times out
half-sent requests, runs the app's lifespan (a store that cannot be opened fails the start) and re-reads the
tokens (and has the server re-read its limits file) on SIGHUP.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import ConfigurationError, StoreBusy, StoreUnavailable
from ..store import LOCAL
from ..terminal import counted

log = logging.getLogger("thinking_hats")
MIN_TOKEN = 16
DEFAULT = "default"  # THINKING_HTTP_TOKEN's principal
OPERATOR = "operator"
_RESERVED = {
    LOCAL: f"'{LOCAL}' is reserved for the machine's own principal (stdio, `thinking-hats think`)",
    DEFAULT: f"'{DEFAULT}' is reserved for THINKING_HTTP_TOKEN's principal, whose sessions it would share",
}


@dataclass(frozen=True)
class Principals:
    """The principals HTTP clients authenticate as, and which of them are operators. `open`: no token is
    configured at all, so every request (on loopback only) is the one local principal. A tokens file that lists
    nobody is not that: it refuses everyone.

    A token is found by its SHA-256 in a dict, then confirmed with one constant-time comparison: a check costs
    the same with 50,000 principals as with one, and says nothing about how close a wrong token came."""

    by_hash: dict[bytes, str]  # SHA-256 of a token -> its principal's name
    keys: dict[str, bytes]  # name -> token: signs that principal's legacy session ids
    operators: frozenset[str] = (
        frozenset()
    )  # may read /metrics and every principal's usage in the web view (the word `operator` after a token in the file)
    open: bool = False

    @classmethod
    def from_settings(cls, settings: Settings, loopback: bool = True) -> Principals:
        keys: dict[str, bytes] = {}
        operators: set[str] = set()
        path = settings.thinking_http_tokens_file
        if settings.thinking_http_token is not None:
            token = settings.thinking_http_token.get_secret_value()
            if not loopback and len(token) < MIN_TOKEN:
                raise ConfigurationError(
                    f"THINKING_HTTP_TOKEN is shorter than {MIN_TOKEN} characters, too weak to serve beyond "
                    "loopback: use a long random token (e.g. `openssl rand -hex 24`)."
                )
            keys[DEFAULT] = token.encode()
            if path is None:  # the one token of a one-team service: its holder runs it
                operators.add(DEFAULT)
        if path is not None:
            listed, marked = _read_tokens(path, set(keys.values()))
            keys |= listed
            operators |= marked
        by_hash = {_digest(token): name for name, token in keys.items()}
        return cls(by_hash, keys, frozenset(operators), open=settings.thinking_http_token is None and path is None)

    @property
    def names(self) -> frozenset[str]:
        """Every principal a client can be (`local` alone when the server is open)."""
        return frozenset({LOCAL} if self.open else self.keys)

    def who(self, authorization: bytes) -> str | None:
        """The principal of an `Authorization` header, or None."""
        if self.open:
            return LOCAL
        given = authorization[7:] if authorization[:7].lower() == b"bearer " else b""
        digest = _digest(given)
        name = self.by_hash.get(digest)
        if name is None or not hmac.compare_digest(_digest(self.keys[name]), digest):
            return None
        return name

    def operator(self, principal: str | None) -> bool:
        """Whether this principal may read what every principal did (/metrics)."""
        return principal is not None and (self.open or principal in self.operators)


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


def _read_tokens(path: Path, taken: set[bytes]) -> tuple[dict[str, bytes], set[str]]:
    """THINKING_HTTP_TOKENS_FILE: `name token` lines, `name token operator` for an operator. Every mistake that
    would weaken authentication is refused with its line: an unreadable or non-UTF-8 file, a short token, a
    duplicate, the reserved names `local` (the machine's own principal, which reads what `thinking-hats think`
    wrote) and `default` (THINKING_HTTP_TOKEN's principal, whose sessions it would share), and a file that lists
    nobody. Linear in the file's length: 50,000 principals read in well under a second."""
    where = f"THINKING_HTTP_TOKENS_FILE {path}"
    try:
        lines = path.expanduser().read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"cannot read {where}: {exc.strerror}: give a readable file") from None
    except UnicodeDecodeError as exc:
        raise ConfigurationError(
            f"{where} is not UTF-8 text (byte {exc.start}): save it as UTF-8, one 'name token' per line"
        ) from None
    keys: dict[str, bytes] = {}
    tokens = set(taken)
    operators: set[str] = set()
    named = _NAME.match
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        parts = text.split()
        at = f"{where}, line {number}"
        if len(parts) not in (2, 3) or not named(parts[0]):
            raise ConfigurationError(
                f"{at}: expected 'name token' or 'name token operator' (a name of letters, digits, '.', '_' or "
                "'-', then the token, separated by spaces)"
            )
        name, token = parts[0], parts[1]
        if len(parts) == 3:
            if parts[2] != OPERATOR:
                raise ConfigurationError(
                    f"{at}: the third word after '{name}' and its token may only be '{OPERATOR}' (this principal "
                    "may read /metrics): remove it, or write 'operator'"
                )
            operators.add(name)
        if name in _RESERVED:
            raise ConfigurationError(f"{at}: {_RESERVED[name]}: give this user another name")
        if len(token) < MIN_TOKEN:
            raise ConfigurationError(f"{at}: the token of '{name}' is shorter than {MIN_TOKEN} characters")
        encoded = token.encode()
        if encoded in tokens or name in keys:
            raise ConfigurationError(f"{at}: '{name}' or its token is listed twice")
        tokens.add(encoded)
        keys[name] = encoded
    if not keys:
        raise ConfigurationError(
            f"{where} lists no principals, so no client could authenticate: add a 'name token' line (to refuse "
            "everyone, stop the server instead)"
        )
    return keys, operators


class Gate:
    """ASGI middleware in front of the MCP app: health checks, authentication, and legacy (stateful) sessions.

    It decides who a request is (the principal, from the bearer token) and which connection it belongs to, and
    puts both on the ASGI scope; no client header can choose either. A legacy session id is handed out signed
    (HMAC keyed by the principal's token, or by a secret of this server for the local principal), so a client can
    only present an id issued to its own principal. The process that opened a legacy session serves it; any other
    worker or replica (the session's process restarted, or a load balancer sent the request elsewhere) answers it
    statelessly: the thinking state is in the store, so the client does not notice. Legacy sessions are bounded per
    principal: the least recently used is closed to make room, so a flood of `initialize` requests cannot lock
    anyone else out; one the SDK closed as idle is answered statelessly too.

    It owns the tokens in force (replaced whole on SIGHUP, never dropped) and the process's lifespan.
    """

    def __init__(
        self,
        app: Any,
        fallback: Any,
        principals: Principals,
        settings: Settings,
        health: Any,
        secret: bytes,
        live: Callable[[str], bool] = lambda session: True,
        loopback: bool = True,
        reload: Callable[[Collection[str]], None] = lambda principals: None,
        generation: Callable[[], int] = lambda: 0,
        read_at: int = 0,
    ) -> None:
        self.app = app
        self.fallback = fallback  # the same server, stateless: for legacy sessions this process did not open
        self.settings = settings
        self.loopback = loopback
        self.secret = secret
        self._use(principals)
        self.limit = settings.thinking_http_session_limit
        self.idle = settings.thinking_http_idle_timeout
        self.health = health
        self.live = live  # whether the SDK still holds a legacy session (it closes idle ones by itself)
        self.failure: str | None = None  # why the lifespan could not start (reported by the worker's supervisor)
        self.reload_server = reload  # what the server re-reads on SIGHUP besides the tokens (the limits file)
        # SIGHUPs so far (the supervisor's count under --workers), and the count when the files were last read.
        self.generation = generation
        self.read_at = read_at
        self._pending = False
        self._reloading: asyncio.Task[None] | None = None
        self._sessions: dict[str, OrderedDict[str, float]] = {}
        self.ui: Any = None  # the web view's ASGI app under /ui (THINKING_UI), set by the transport

    def _use(self, principals: Principals) -> None:
        self.principals = principals  # one assignment: a request sees the old table or the new, whole

    def reload(self) -> None:
        """Re-read the tokens and the server's limits file (SIGHUP): a revoked token is refused from the next
        request on. A file that cannot be used keeps what is in force (logged as an error with the fix): a typo
        never opens the server. Blocking (50,000 principals take ~0.1 s): the SIGHUP handler runs it in a thread."""
        self.read_at = self.generation()
        try:
            principals = Principals.from_settings(self.settings, self.loopback)
        except ConfigurationError as exc:
            log.error("tokens not reloaded, the previous ones stay in force: %s", exc)
        else:
            self._use(principals)
            log.warning("tokens reloaded: %s", counted(len(principals.keys), "principal"))
        self.reload_server(self.principals.names | {LOCAL})

    def hangup(self) -> None:
        """SIGHUP (on the event loop): reload off the loop, so requests keep being answered meanwhile. SIGHUPs
        that arrive during a reload are served by one more reload after it, never lost, never run at once."""
        self._pending = True
        if self._reloading is None or self._reloading.done():
            self._reloading = asyncio.ensure_future(self._reloads())

    async def _reloads(self) -> None:
        while self._pending:
            self._pending = False
            try:
                await asyncio.to_thread(self.reload)
            except Exception:  # a reload that breaks must not leave the next SIGHUP unanswered
                log.exception("reloading the tokens and limits failed; the previous ones stay in force")

    def _key(self, principal: str) -> bytes:
        """What signs this principal's legacy session ids: its token, or this server's secret for `local` (and
        for a principal whose token was revoked mid-request, whose ids then verify nowhere)."""
        return self.principals.keys.get(principal, self.secret) if principal != LOCAL else self.secret

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("path") == "/healthz":
            await self._healthz(send)
            return
        if self.ui is not None and (scope.get("path") == "/ui" or scope.get("path", "").startswith("/ui/")):
            await self.ui(scope, receive, send)  # it signs its requests in with the same principals
            return
        headers = dict(scope.get("headers") or [])
        principal = self.principals.who(headers.get(b"authorization", b""))
        if principal is None:
            await _json(send, 401, {"error": UNAUTHORIZED}, [(b"www-authenticate", b'Bearer realm="thinking-hats"')])
            return
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        from ..server import CONNECTION_KEY, PRINCIPAL_KEY

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
            if table is not None and session in table and not self.live(session):
                del table[session]  # the SDK closed it, idle: the client is answered statelessly, as elsewhere
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
        digest = hmac.new(self._key(principal), f"{principal}\0{session}".encode(), "sha256").hexdigest()
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

    async def _lifespan(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The ASGI lifespan of both apps (they share the one store). A store that cannot be opened fails the
        start-up with its cause in one line (no traceback: the supervisor retries, and logs it once per try),
        and uvicorn, with lifespan "on", then exits instead of serving without a store. SIGHUP re-reads the
        tokens and the limits."""
        import signal

        await receive()  # lifespan.startup
        async with contextlib.AsyncExitStack() as stack:
            try:
                await stack.enter_async_context(self.fallback.router.lifespan_context(self.fallback))
                await stack.enter_async_context(self.app.router.lifespan_context(self.app))
            except Exception as exc:
                self.failure = str(exc) or type(exc).__name__
                await send({"type": "lifespan.startup.failed", "message": ""})
                return
            loop = asyncio.get_running_loop()
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
                loop.add_signal_handler(signal.SIGHUP, self.hangup)
                stack.callback(_ignore_hangups, loop)
                # The files were read before this handler was in place: a SIGHUP meanwhile is served now.
                if self.generation() != self.read_at:
                    self.hangup()
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
        await send({"type": "lifespan.shutdown.complete"})

    async def _healthz(self, send: Any) -> None:
        # Which dependency is down, in a word: never exception text (this answer is unauthenticated).
        try:
            # A probe wants an answer within its own timeout, not the store pool's 10 s.
            report = await asyncio.wait_for(self.health(), _HEALTH_SECONDS)
            status, body = 200, {"status": "ok", "store": report}
        except TimeoutError:
            status, body = 503, {"status": "unavailable", "store": "not answering"}
        except StoreUnavailable:
            status, body = 503, {"status": "unavailable", "store": "unreachable"}
        except StoreBusy:
            status, body = 503, {"status": "unavailable", "store": "busy"}
        except Exception as exc:  # a load balancer needs a status, whatever broke
            log.warning("health check failed: %s", exc)
            status, body = 503, {"status": "unavailable", "store": "failing"}
        await _json(send, status, body)


UNAUTHORIZED = (
    "unauthorized: send the header 'Authorization: Bearer <token>' "
    "(THINKING_HTTP_TOKEN, or a token from THINKING_HTTP_TOKENS_FILE)"
)
_HEALTH_SECONDS = 2.5  # the answer, store check included, within the 3 s a probe is promised
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def _ignore_hangups(loop: asyncio.AbstractEventLoop) -> None:
    """After the lifespan: a SIGHUP while the process shuts down is ignored, not fatal (removing the loop's
    handler would restore the default, which ends the process)."""
    import signal

    loop.remove_signal_handler(signal.SIGHUP)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


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
