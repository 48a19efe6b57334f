"""Running the server: stdio for MCP clients, streamable HTTP for everything else."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import ConfigurationError
from .gate import Gate, Principals

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def http_app(settings: Settings, host: str, secret: bytes | None = None, metrics_dir: Path | None = None) -> Any:
    """The ASGI app for `serve --transport http`, with the host and token rules applied; `metrics_dir`: the run's
    directory for multiprocess metrics (under --workers)."""
    from mcp.server.transport_security import TransportSecuritySettings

    from ..server import build_server

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
    server = build_server(settings, http=True)
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
    gate = Gate(app, fallback, principals, settings, server.health, secret or os.urandom(32))
    if not settings.thinking_metrics:
        return gate
    from .. import metrics
    from .exposition import MetricsEndpoint

    recorder = metrics.PrometheusMetrics(metrics_dir)
    metrics.install(recorder)
    return MetricsEndpoint(gate, recorder, settings.thinking_metrics_public)


def check_store(settings: Settings) -> None:
    """Fail at start-up, with the fix, rather than on the first thought."""
    import asyncio

    from ..store import open_store

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

    from ..limits import Limits

    Limits.from_settings(settings)  # a bad limits file is refused here too, with the fix
    _checked_app(settings, host)  # refuse a bad configuration here, once, with the fix
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


def _checked_app(settings: Settings, host: str) -> None:
    """Build the app once to refuse a bad configuration, without installing its metrics in this process."""
    http_app(settings.model_copy(update={"thinking_metrics": False}), host)


def _serve(settings: Settings, host: str, sock: socket.socket, secret: bytes, metrics_dir: Path | None = None) -> None:
    """One process serving the socket. On SIGTERM uvicorn stops accepting and lets requests in flight finish;
    a thought is bounded by THINKING_DEADLINE, so after that (plus a margin) what is left is cancelled."""
    import uvicorn

    config = uvicorn.Config(
        http_app(settings, host, secret, metrics_dir),
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


def _worker(host: str, port: int, secret: bytes, listening: Any, metrics_dir: Path) -> None:
    """A worker process (spawned): its own Settings from the same environment, its own event loop and store, its
    own listening socket on the port (`listening` is set once it listens)."""
    from ..config import Settings
    from ..logs import setup_logging

    settings = Settings()
    setup_logging(settings)
    sock = _listen(host, port, shared=True)
    sock.listen(2048)
    listening.set()
    _serve(settings, host, sock, secret, metrics_dir)


def _supervise(
    settings: Settings, host: str, sock: socket.socket, workers: int, secret: bytes, announce: Callable[[], None]
) -> None:
    """Start the workers, announce the address once they listen, restart one that dies, and on SIGTERM/SIGINT pass
    the signal on and wait for them. `sock` holds the port; each worker listens on a socket of its own."""
    import logging
    import multiprocessing
    import multiprocessing.connection
    import shutil
    import signal
    import tempfile

    log = logging.getLogger("thinking_hats")
    spawn = multiprocessing.get_context("spawn")
    port = sock.getsockname()[1]
    stopping = False
    # The workers' metrics files, summed by whichever worker answers /metrics; this run's only, removed at exit.
    metrics_dir = Path(tempfile.mkdtemp(prefix="thinking-hats-metrics-"))

    def start(index: int) -> tuple[Any, Any]:
        listening = spawn.Event()
        name = f"thinking-hats-worker-{index}"
        process = spawn.Process(target=_worker, args=(host, port, secret, listening, metrics_dir), name=name)
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
    shutil.rmtree(metrics_dir, ignore_errors=True)


def serve_stdio(settings: Settings) -> None:
    """Serve MCP on stdin/stdout until stdin closes; one Ctrl-C (SIGINT) ends the process at once, quietly.

    Where the SDK's own transport serves stdin (a terminal or a file; pipes are read on the loop, see `pipes`), it
    reads in a worker thread that no cancellation can interrupt: a server cancelled by Ctrl-C would stay up, idle,
    until the client sent another line, and the next presses would print a traceback. So the
    server runs in a daemon thread and the main thread, where Python delivers SIGINT, waits for it and exits at
    once when interrupted. Exiting mid-call is safe: a thought is committed together with its reply or not at all,
    as after kill -9.
    """
    import sys
    import threading

    from ..server import build_server

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
