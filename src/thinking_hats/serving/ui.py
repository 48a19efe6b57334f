"""The web view: a principal's sessions, each drawn as a chain, live while its client thinks; usage for operators.

Read-only pages under /ui/, rendered on the server with Jinja2 (autoescape: every client-written string is text)
and served with a Content-Security-Policy that allows only this package's own script and styles. Imported only
when THINKING_UI is on (or by `thinking-hats ui`): a server with the view off never loads this module or Jinja2.

Who a request is comes from the same principals as the MCP endpoint. A browser cannot send the bearer token on a
navigation, so the token is pasted once into the sign-in form and exchanged for a cookie: `name.expiry.mac`,
HttpOnly, SameSite=Strict, Secure when the request came over TLS, with the MAC keyed by a key derived from the
principal's token. A token removed from the tokens file (SIGHUP) or replaced therefore ends its cookies too, on
every worker and replica, without any session table. The pages only read; the one form that changes anything
(sign-in and sign-out) is a same-site POST whose Origin must be this host.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import logging
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jinja2

from ..errors import ThinkingError
from ..ops.limits import Limits
from ..store import LOCAL, Entry, Session, Store
from ..tools.chain import chain_of, status_of, svg
from .gate import Principals

log = logging.getLogger("thinking_hats")
HERE = Path(__file__).parent
COOKIE = "thinking_hats_ui"
COOKIE_SECONDS = 12 * 3600
PAGE_SIZE = 50
POLL_S = 0.25  # how often an open page's event stream asks the store for news: within a second, cheaply
STREAM_S = 300.0  # then the stream ends and the browser reconnects: no stream outlives a shutdown for long
MAX_FORM = 4096
STATIC = {
    "ui.js": "text/javascript; charset=utf-8",
    "ui.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self';"
        b" form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would send "Origin: null" on the sign-in POST
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[bytes, bytes]
    secure: bool

    @classmethod
    def of(cls, scope: dict[str, Any]) -> Request:
        headers = {k.lower(): v for k, v in scope.get("headers") or []}
        forwarded = headers.get(b"x-forwarded-proto", b"").split(b",")[0].strip().lower()
        query = dict(urllib.parse.parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        secure = scope.get("scheme") == "https" or forwarded == b"https"
        return cls(scope.get("method", "GET"), scope.get("path", "/"), query, headers, secure)

    def cookie(self, name: str) -> str | None:
        for part in self.headers.get(b"cookie", b"").decode("latin-1").split(";"):
            key, _, value = part.strip().partition("=")
            if key == name:
                return value
        return None

    def same_origin(self) -> bool:
        """A POST from a page of this host: its Origin (every browser sends one on a POST) names this Host."""
        origin = self.headers.get(b"origin", b"").decode("latin-1")
        host = self.headers.get(b"host", b"").decode("latin-1")
        site = self.headers.get(b"sec-fetch-site", b"same-origin")
        parsed = urllib.parse.urlsplit(origin)
        return bool(host) and parsed.netloc == host and parsed.scheme in ("http", "https") and site == b"same-origin"


def cookie_key(token: bytes) -> bytes:
    """The key that signs a principal's cookies: derived from its token, so it changes or goes with the token."""
    return hmac.new(hashlib.sha256(token).digest(), b"thinking-hats web view cookie v1", "sha256").digest()


def sign_cookie(principal: str, token: bytes, expires: int) -> str:
    name = base64.urlsafe_b64encode(principal.encode()).decode().rstrip("=")
    mac = hmac.new(cookie_key(token), f"{principal}\0{expires}".encode(), "sha256").hexdigest()
    return f"{name}.{expires}.{mac}"


def cookie_principal(value: str, principals: Principals, now: float) -> str | None:
    """The principal a cookie was issued to, if its token is still in force and it has not expired."""
    try:
        name, expires_text, mac = value.split(".")
        principal = base64.urlsafe_b64decode(name + "=" * (-len(name) % 4)).decode()
        expires = int(expires_text)
    except (ValueError, UnicodeDecodeError):
        return None
    if expires < now:
        return None
    token = principals.keys.get(principal)
    if token is not None and hmac.compare_digest(sign_cookie(principal, token, expires).split(".")[2], mac):
        return principal
    return None


class WebView:
    """The ASGI app under /ui/. It owns nothing but its templates: the store is the server's (or, for
    `thinking-hats ui`, the command's), the principals are the gate's in force (replaced on SIGHUP)."""

    def __init__(
        self,
        store: Callable[[], Store],
        principals: Callable[[], Principals],
        limits: Callable[[], Limits | None] = lambda: None,
        local: str = LOCAL,
    ) -> None:
        self.store = store
        self.local = local  # who every request is when no token is configured (`thinking-hats ui`: --principal)
        self.principals = principals
        self.limits = limits
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.filters["when"] = _when
        self.templates.filters["number"] = lambda n: f"{int(n or 0):,}"
        self.templates.filters["quote"] = lambda s: urllib.parse.quote(str(s), safe="")
        self.closing = False  # the server is shutting down: event streams end (their browsers reconnect elsewhere)

    def close(self) -> None:
        self.closing = True

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":  # `thinking-hats ui` runs it alone; under the gate, the gate's lifespan
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
            await send({"type": "lifespan.shutdown.complete"})
            return
        request = Request.of(scope)
        path = request.path
        try:
            if path == "/ui":
                await _redirect(send, "/ui/")
            elif path.startswith("/ui/static/"):
                await self._static(send, path.removeprefix("/ui/static/"))
            elif path == "/ui/login":
                await self._login(request, receive, send)
            elif path == "/ui/logout" and request.method == "POST":
                await self._logout(request, send)
            elif request.method != "GET":
                await self._page(send, 405, "error.html", None, message="This view only reads.")
            else:
                await self._authenticated(request, receive, send)
        except ThinkingError as exc:  # the store failed, or is not open yet
            log.warning("web view: %s", exc)
            await self._page(send, 503, "error.html", None, message="The session store is not answering: try again.")

    async def _authenticated(self, request: Request, receive: Receive, send: Send) -> None:
        principal = self.who(request)
        if principal is None:
            if request.path.endswith("/events"):
                await _plain(send, 401, "sign in again")
            else:
                await _redirect(send, "/ui/login")
            return
        path = request.path
        if path == "/ui/":
            await self._list(request, send, principal)
        elif path == "/ui/usage":
            await self._usage(send, principal)
        elif path.startswith("/ui/s/") and path.endswith("/events"):
            await self._events(request, receive, send, principal, urllib.parse.unquote(path[6:-7]))
        elif path.startswith("/ui/s/"):
            await self._session(send, principal, urllib.parse.unquote(path[6:]))
        else:
            await self._not_found(send, principal)

    def who(self, request: Request) -> str | None:
        principals = self.principals()
        if principals.open:
            return self.local
        value = request.cookie(COOKIE)
        return cookie_principal(value, principals, time.time()) if value else None

    def operator(self, principal: str) -> bool:
        principals = self.principals()
        return principals.open or principal in principals.operators

    # --- sign-in ---
    async def _login(self, request: Request, receive: Receive, send: Send) -> None:
        principals = self.principals()
        if principals.open:
            await _redirect(send, "/ui/")
            return
        if request.method == "GET":
            await self._page(send, 200, "login.html", None, problem=None)
            return
        if request.method != "POST" or not request.same_origin():
            await self._page(send, 403, "error.html", None, message="Sign in from this site's own sign-in page.")
            return
        body = await _body(receive, MAX_FORM)
        token = dict(urllib.parse.parse_qsl(body.decode("utf-8", "replace"))).get("token", "").strip()
        principal = principals.who(b"Bearer " + token.encode()) if token else None
        if principal is None:
            problem = "That token is not one this server accepts: paste the token your MCP client sends."
            await self._page(send, 401, "login.html", None, problem=problem)
            return
        expires = int(time.time()) + COOKIE_SECONDS
        value = sign_cookie(principal, token.encode(), expires)
        flags = f"; Path=/ui; Max-Age={COOKIE_SECONDS}; HttpOnly; SameSite=Strict{'; Secure' if request.secure else ''}"
        await _redirect(send, "/ui/", [(b"set-cookie", f"{COOKIE}={value}{flags}".encode())])

    async def _logout(self, request: Request, send: Send) -> None:
        if not request.same_origin():
            await self._page(send, 403, "error.html", None, message="Sign out from this site's own pages.")
            return
        gone = f"{COOKIE}=; Path=/ui; Max-Age=0; HttpOnly; SameSite=Strict" + ("; Secure" if request.secure else "")
        await _redirect(send, "/ui/login", [(b"set-cookie", gone.encode())])

    # --- pages ---
    async def _list(self, request: Request, send: Send, principal: str) -> None:
        before = None
        cursor = request.query.get("before", "")
        at, _, last_id = cursor.partition(":")
        try:
            before = (float(at), last_id) if cursor else None
        except ValueError:
            before = None
        rows = await self.store().page(principal, PAGE_SIZE + 1, before)
        more = len(rows) > PAGE_SIZE
        rows = rows[:PAGE_SIZE]
        sessions = [_summary(session, count, first) for session, count, first in rows]
        following = f"{rows[-1][0].updated!r}:{rows[-1][0].id}" if more else None
        await self._page(send, 200, "list.html", principal, sessions=sessions, following=following, first=not cursor)

    async def _session(self, send: Send, principal: str, session_id: str) -> None:
        found = await self.store().session(principal, session_id)
        if found is None:
            await self._not_found(send, principal)
            return
        session, entries = found
        thoughts = [_thought(entry) for entry in entries]
        last = entries[-1].seq if entries else 0
        await self._page(
            send,
            200,
            "session.html",
            principal,
            session=_summary(session, len(entries), None),
            chain=svg(chain_of(entries)),
            thoughts=thoughts,
            last=last,
            template=self.templates.get_template("thought.html"),
        )

    async def _usage(self, send: Send, principal: str) -> None:
        if not self.operator(principal):
            await self._not_found(send, principal)
            return
        since = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 29 * 86400))
        days = await self.store().usage(since=since)
        limits = self.limits()
        names = sorted({d.principal for d in days} | set(self.principals().keys))
        table = []
        for name in names:
            mine = [d for d in days if d.principal == name]
            limit = limits.of(name) if limits is not None else None
            table.append(
                {
                    "name": name,
                    "tokens": sum(d.input_tokens + d.output_tokens for d in mine),
                    "cached": sum(d.cached_tokens for d in mine),
                    "calls": sum(d.calls for d in mine),
                    "thoughts": sum(d.thoughts for d in mine),
                    "refusals": sum(d.refusals for d in mine),
                    "tokens_per_day": limit.tokens_per_day if limit else None,
                    "calls_per_minute": limit.calls_per_minute if limit else None,
                }
            )
        chart = _usage_chart(days)
        await self._page(send, 200, "usage.html", principal, table=table, days=days, chart=chart, since=since)

    async def _not_found(self, send: Send, principal: str | None) -> None:
        # The same page whether the session does not exist or is another principal's: it reveals nothing.
        await self._page(send, 404, "error.html", principal, message="Not found.")

    async def _page(self, send: Send, status: int, name: str, principal: str | None, **values: Any) -> None:
        operator = principal is not None and self.operator(principal)
        html = self.templates.get_template(name).render(
            principal=principal, operator=operator, can_sign_out=not self.principals().open, **values
        )
        await _respond(send, status, html.encode(), "text/html; charset=utf-8")

    async def _static(self, send: Send, name: str) -> None:
        kind = STATIC.get(name)
        if kind is None:
            await _plain(send, 404, "not found")
            return
        await _respond(send, 200, (HERE / "static" / name).read_bytes(), kind)

    # --- live ---
    async def _events(self, request: Request, receive: Receive, send: Send, principal: str, session_id: str) -> None:
        """Server-sent events for an open session page: each new or replaced thought (its card, and the chain
        redrawn) and the progress of the thought in flight. The stream polls the store, the one source of truth,
        so it sees what any worker or replica wrote. It ends when the client leaves, after STREAM_S (the browser
        reconnects, resuming from the Last-Event-ID it was sent), or when its cookie's token is revoked."""
        resume = request.headers.get(b"last-event-id", b"").decode("latin-1") or request.query.get("after", "0")
        seen = int(resume) if resume.isdigit() else 0
        found = await self.store().since(principal, session_id, seen)
        if found is None:
            await _plain(send, 404, "not found")
            return
        # X-Accel-Buffering: nginx in front passes each event on at once instead of buffering the stream.
        headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"x-accel-buffering", b"no"),
            *SECURITY_HEADERS,
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"retry: 1000\n\n", "more_body": True})
        left = asyncio.Event()
        watcher = asyncio.ensure_future(_watch(receive, left))
        template = self.templates.get_template("thought.html")
        shown: dict[int, float] = {e.seq: e.created for e in found[1] if e.seq <= seen}  # already on the page
        progress_at = 0.0
        until = time.monotonic() + STREAM_S
        try:
            while not left.is_set() and not self.closing and time.monotonic() < until:
                if found is None or self.who(request) != principal:
                    await _event(send, "end", {})
                    break
                session, entries, progress = found
                news = [e for e in entries if shown.get(e.seq) != e.created]
                if news:
                    for entry in news:
                        shown[entry.seq] = entry.created
                    whole = await self.store().session(principal, session_id)
                    every = whole[1] if whole is not None else list(entries)
                    seen = max(e.seq for e in news)
                    payload = {
                        "thoughts": [{"seq": e.seq, "html": template.render(t=_thought(e))} for e in news],
                        "chain": svg(chain_of(every)),
                        "count": len(every),
                    }
                    await _event(send, "thoughts", payload, seen)
                if progress is not None and progress["updated"] != progress_at:
                    progress_at = progress["updated"]
                    active = progress_at > session.updated  # written after the session's last commit: in flight
                    await _event(send, "progress", {"active": active, **_progress(progress)})
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(left.wait(), POLL_S)
                found = await self.store().since(principal, session_id, seen)
            if not left.is_set():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            watcher.cancel()


async def _watch(receive: Receive, left: asyncio.Event) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    left.set()


def _summary(session: Session, count: int, first: str | None) -> dict[str, Any]:
    usage = session.meta.get("usage") or {}
    return {
        "id": session.id,
        "tool": session.tool,
        "first": (first or "")[:160],
        "count": count,
        "updated": session.updated,
        "created": session.created,
        "strategies": session.meta.get("strategies") or [],
        "calls": usage.get("llmCalls", 0),
        "input": usage.get("inputTokens", 0),
        "output": usage.get("outputTokens", 0),
        "cached": usage.get("cachedInputTokens", 0),
    }


def _thought(entry: Entry) -> SimpleNamespace:
    """What the thought template shows of an entry. Namespaces, not dicts: Jinja tries an attribute before an
    item, and a miss on each of a dict's ~30 lookups per thought cost a third of a 1,000-thought page."""
    d = entry.data
    reply = entry.reply.get("reply")
    reply = reply if isinstance(reply, dict) else {}
    analysis = reply.get("analysis") or {}
    usage = reply.get("usage") or {}
    strategy, status = status_of(entry)
    hats = [_run(h) for h in analysis.get("hats") or [] if isinstance(h, dict)]
    complexity = analysis.get("complexity") or {}
    return SimpleNamespace(
        **{
            "seq": entry.seq,
            "number": entry.number,
            "total": d.get("total_thoughts") or d.get("estimated_total"),
            "branch": entry.branch_id,
            "branch_from": d.get("branch_from_thought") or d.get("branch_from"),
            "revises": d.get("revises_thought") or d.get("revises_step"),
            "created": entry.created,
            "text": str(d.get("thought", "")),
            "fields": [(k, d[k]) for k in ("purpose", "context", "outcome", "rationale", "confidence") if k in d],
            "strategy": strategy,
            "status": status,
            "score": complexity.get("score"),
            "factors": [_factor(f) for f in complexity.get("factors") or [] if isinstance(f, dict)],
            "hats": [h for h in hats if h.hat != "synthesis"],
            "synthesis_run": next((h for h in hats if h.hat == "synthesis"), None),
            "synthesis": analysis.get("synthesis"),
            "problems": analysis.get("problems") or [],
            "notice": reply.get("notice"),
            "calls": usage.get("llmCalls", 0),
            "input": usage.get("inputTokens", 0),
            "output": usage.get("outputTokens", 0),
            "cached": usage.get("cachedInputTokens", 0),
            "ms": sum(int(h.ms or 0) for h in hats),
        }
    )


def _run(run: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(
        hat=run.get("hat"),
        status=run.get("status"),
        ms=run.get("ms") or 0,
        tokens=run.get("tokens") or 0,
        output=run.get("output"),
        error=run.get("error"),
    )


def _factor(factor: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(name=factor.get("name"), points=factor.get("points"), detail=factor.get("detail"))


def _progress(progress: dict[str, Any]) -> dict[str, Any]:
    steps = progress.get("steps") or []
    return {
        "number": progress.get("number"),
        "branch": progress.get("branch"),
        "finished": progress.get("done", 0),
        "total": progress.get("total", 0),
        "steps": [str(s) for s in steps][-8:],
    }


def _usage_chart(days: Sequence[Any]) -> str:
    """Tokens per day, one bar per day stacked by principal, as an inline SVG (the page's classes colour it)."""
    import html

    by_day: dict[str, dict[str, int]] = {}
    for d in days:
        by_day.setdefault(d.day, {})[d.principal] = d.input_tokens + d.output_tokens
    if not by_day:
        return ""
    principals = sorted({p for row in by_day.values() for p in row})
    top = max(sum(row.values()) for row in by_day.values()) or 1
    width, height, bar = max(24 * len(by_day), 110 * len(principals)) + 60, 160, 18
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="usage-chart" width="{width}" height="{height + 40}"'
        f' role="img" aria-label="tokens per day by principal">'
    ]
    for i, (day, row) in enumerate(sorted(by_day.items())):
        x, y = 50 + i * 24, height
        for p in principals:
            value = row.get(p, 0)
            h = round(value / top * (height - 10))
            if h:
                y -= h
                out.append(
                    f'<rect class="p{principals.index(p) % 6}" x="{x}" y="{y}" width="{bar}" height="{h}">'
                    f"<title>{html.escape(p)} · {html.escape(day)}: {value:,} tokens</title></rect>"
                )
        out.append(f'<text class="day" x="{x}" y="{height + 14}">{html.escape(day[5:])}</text>')
    out.append(f'<text class="axis" x="0" y="12">{top:,}</text><text class="axis" x="0" y="{height}">0</text>')
    for i, p in enumerate(principals):
        out.append(
            f'<rect class="p{i % 6}" x="{50 + i * 110}" y="{height + 24}" width="10" height="10"/>'
            f'<text class="legend" x="{64 + i * 110}" y="{height + 33}">{html.escape(p)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


async def _body(receive: Receive, limit: int) -> bytes:
    body = b""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b""
        body += bytes(message.get("body", b""))
        if len(body) > limit:
            return b""
        if not message.get("more_body", False):
            return body


async def _respond(send: Send, status: int, body: bytes, kind: str, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *extra]})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, to: str, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    await _respond(send, 303, b"", "text/plain; charset=utf-8", [(b"location", to.encode()), *extra])


async def _plain(send: Send, status: int, text: str) -> None:
    await _respond(send, status, text.encode(), "text/plain; charset=utf-8")


async def _event(send: Send, name: str, data: dict[str, Any], seq: int | None = None) -> None:
    ident = "" if seq is None else f"id: {seq}\n"
    body = f"event: {name}\n{ident}data: {json.dumps(data)}\n\n".encode()
    await send({"type": "http.response.body", "body": body, "more_body": True})
