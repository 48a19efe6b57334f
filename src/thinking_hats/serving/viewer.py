"""`thinking-hats ui`: the web view on 127.0.0.1 over this machine's store, for the local principal.

No sign-in (loopback, no tokens: the one local principal, as stdio and `think` are) and no MCP endpoint: the same
pages the HTTP transport serves under /ui/, over the store `think` and stdio clients write to.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import urllib.parse
import webbrowser
from collections.abc import Callable
from typing import Any

from ..config import Settings
from ..store import LOCAL, Store, open_store_for
from .gate import Principals


def address(port: int, session_id: str | None = None) -> str:
    page = f"s/{urllib.parse.quote(session_id, safe='')}" if session_id else ""
    return f"http://127.0.0.1:{port}/ui/{page}"


def can_open_browser(settings: Settings) -> bool:
    """A browser is opened only where one can show: a graphical session, or macOS and Windows (always one)."""
    return bool(settings.display) or sys.platform in ("darwin", "win32")


def serve_ui(
    settings: Settings,
    port: int = 0,
    session_id: str | None = None,
    principal: str = LOCAL,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until Ctrl-C or SIGTERM. The address (of `session_id`'s page, when given) goes to stdout, and to a
    browser when there is a display; `ready` (tests) is called with it once the port listens."""
    import uvicorn

    from .ui import WebView

    holder: dict[str, Store] = {}

    def store() -> Store:
        return holder["store"]

    view = WebView(store, lambda: Principals({}, {}, open=True), local=principal)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await receive()
            try:
                holder["store"] = await open_store_for(settings)
            except Exception as exc:
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
            await receive()
            await holder["store"].close()
            await send({"type": "lifespan.shutdown.complete"})
            return
        await view(scope, receive, send)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    url = address(sock.getsockname()[1], session_id)

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                print(f"thinking-hats ui: {url}  (Ctrl-C to stop)", flush=True)
                if ready is not None:
                    ready(url)
                elif can_open_browser(settings):
                    with contextlib.suppress(webbrowser.Error):
                        await asyncio.to_thread(webbrowser.open, url)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            view.close()  # open pages' event streams end now
            await super().shutdown(sockets)

    config = uvicorn.Config(
        app, log_level=settings.thinking_log_level.lower(), access_log=False, lifespan="on", timeout_graceful_shutdown=2
    )
    Server(config).run(sockets=[sock])
