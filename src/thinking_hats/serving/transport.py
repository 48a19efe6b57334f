"""Running the server: stdio for MCP clients, streamable HTTP for everything else."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import ConfigurationError, StoreUnavailable
from . import hangups
from .gate import Gate, Principals

STARTUP_FAILED = 3  # a worker's exit status when its store could not be opened (uvicorn's own code for it)
# A worker that fails to start is started again after 0.25 s, then 0.5, 1, 2, 4, 8 and every 15 s while it keeps
# failing (each start costs ~2 s of CPU to import), and a worker that started once is replaced at once.
# Meanwhile the supervisor checks the store itself every second: when it comes back, the waiting workers start
# at once, so the service serves again within a worker's start-up time, whatever the backoff had reached.
_BACKOFF_FIRST_S, _BACKOFF_CAP_S = 0.25, 15.0
_PROBE_EVERY_S = 1.0
_STABLE_S = 10.0  # a worker that served this long and then died is replaced at once; sooner, with backoff

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def http_app(
    settings: Settings,
    host: str,
    secret: bytes | None = None,
    processes: int = 1,
    metrics_dir: Path | None = None,
    generation: Callable[[], int] = hangups.seen,
) -> Any:
    """The ASGI app for `serve --transport http`, with the host and token rules applied; `processes`: how many
    serve (--workers); `metrics_dir`: the run's directory for multiprocess metrics (under --workers);
    `generation`: how many SIGHUPs so far (noted before the files are read: see `hangups`)."""
    from mcp.server.transport_security import TransportSecuritySettings

    from ..server import build_server
    from ..store import LOCAL

    read_at = generation()
    loopback = is_loopback(host)
    principals = Principals.from_settings(settings, loopback)
    if not loopback and not principals.keys:
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
            # https://name is what a browser sends behind a TLS proxy on the default port.
            allowed_origins=[
                o for h in names for o in (f"http://{h}", f"http://{h}:*", f"https://{h}", f"https://{h}:*")
            ],
        )
    server = build_server(settings, http=True, processes=processes, principals=principals.names | {LOCAL})
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
    # The SDK closes an idle legacy session on its own clock; the Gate asks it whether one is still open (the
    # SDK offers no public way to ask), so a client coming back after the idle timeout is served statelessly.
    instances = server._lowlevel_server.session_manager._server_instances
    gate = Gate(app, fallback, principals, settings, server.health, secret or os.urandom(32),
                live=instances.__contains__, loopback=loopback, reload=server.reload,
                generation=generation, read_at=read_at)  # fmt: skip
    if settings.thinking_ui:  # imported only when on: the view costs a server with it off nothing
        from .ui import WebView

        gate.ui = WebView(server.core.store, lambda: gate.principals, server.core.limits)
    if not settings.thinking_metrics:
        return gate
    from ..ops import metrics
    from .exposition import MetricsEndpoint

    recorder = metrics.PrometheusMetrics(metrics_dir)
    metrics.install(recorder)
    scrape = settings.thinking_metrics_token
    return MetricsEndpoint(
        gate, recorder, settings.thinking_metrics_public, None if scrape is None else scrape.get_secret_value()
    )


def check_store(settings: Settings) -> None:
    """Fail at start-up, with the fix, rather than on the first thought."""
    import asyncio

    from ..store import open_store_for

    async def probe() -> None:
        await (await open_store_for(settings)).close()

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

    from ..ops.limits import Limits
    from ..store import LOCAL

    hangups.count()  # from here on a SIGHUP is never fatal (the command counts them from its start: see cli)
    # Signs the local principal's legacy session ids; shared by the workers so each can verify the others'.
    secret = os.urandom(32)
    # Refuse a bad configuration here, once, with the fix. One process serves the app built here (the tokens file
    # is read once); a supervisor builds it without metrics, to check it, and each worker builds its own.
    app = http_app(settings, host, secret) if workers == 1 else _checked_app(settings, host)
    gate = app if isinstance(app, Gate) else app.app  # under the metrics endpoint, if any
    # A bad limits file (or one naming nobody the tokens allow) is refused here too, with the fix.
    Limits.from_settings(settings, gate.principals.names | {LOCAL})
    try:
        check_store(settings)
    except StoreUnavailable as exc:
        if workers == 1:
            raise  # a process manager (systemd's Restart=) tries again
        # The supervisor's workers retry, with backoff, until the store is there: nothing else to fix.
        logging.getLogger("thinking_hats").warning("%s The workers will keep trying.", exc)
    # With workers, this socket only holds the port (it is not listening, so the kernel routes nothing to it).
    sock = _listen(host, port, shared=workers > 1)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if sock.family == socket.AF_INET6 else host
    plural = f" ({workers} workers)" if workers > 1 else ""

    def announce() -> None:
        print(f"thinking-hats: streamable HTTP on http://{shown}:{bound}/mcp{plural}", file=sys.stderr, flush=True)

    if workers == 1:
        failure = _serve(settings, host, sock, secret, serving=announce, app=app)
        if failure is not None:
            raise ConfigurationError(f"cannot serve: {failure}")
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


def _checked_app(settings: Settings, host: str) -> Any:
    """Build the app once to refuse a bad configuration, without installing its metrics in this process."""
    return http_app(settings.model_copy(update={"thinking_metrics": False}), host)


def _serve(
    settings: Settings,
    host: str,
    sock: socket.socket,
    secret: bytes,
    processes: int = 1,
    serving: Callable[[], None] = lambda: None,
    metrics_dir: Path | None = None,
    generation: Callable[[], int] = hangups.seen,
    app: Any = None,
) -> str | None:
    """One process serving the socket. On SIGTERM uvicorn stops accepting and lets requests in flight finish;
    a thought is bounded by THINKING_DEADLINE, so after that (plus a margin) what is left is cancelled.

    The lifespan is "on": a process whose store cannot be opened does not serve (returns why, without
    listening; `serving` is called once it listens). A socket that is not yet listening gets no connections."""
    import uvicorn

    if app is None:  # `app`: one built already, with this secret (a single process builds it once)
        app = http_app(settings, host, secret, processes, metrics_dir, generation)
    config = uvicorn.Config(
        app,
        log_level=settings.thinking_log_level.lower(),
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=int(settings.thinking_deadline) + 5,
        timeout_keep_alive=5,
        http=_h11_with_header_timeout(settings.thinking_http_idle_timeout),
    )
    # "Application startup failed. Exiting." says nothing the cause does not: the cause is reported instead.
    logging.getLogger("uvicorn.error").addFilter(lambda record: "startup failed" not in record.getMessage())

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            try:
                await super().startup(sockets)
            except SystemExit:  # uvicorn's way out of a failed lifespan: returned to our caller instead
                self.should_exit = True
                return
            if self.started:
                serving()

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            view = getattr(getattr(app, "app", app), "ui", None)  # the gate, inside MetricsEndpoint or not
            if view is not None:
                view.close()  # open pages' event streams end now, not at the graceful timeout
            await super().shutdown(sockets)

    server = Server(config)
    server.run(sockets=[sock])
    if not server.started:
        return app.failure or "the application did not start"
    return None


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


def _worker(
    host: str,
    port: int,
    secret: bytes,
    listening: Any,
    workers: int,
    failures: Any,
    index: int,
    metrics_dir: Path,
    generation: Any,
) -> None:
    """A worker process (spawned): its own Settings from the same environment, its own event loop and store, its
    own socket on the port, listening once its store is open (`listening` is set then). A worker whose store
    cannot be opened, or whose configuration is refused (a tokens file broken since the service started), puts
    the cause in `failures` and exits with STARTUP_FAILED: its supervisor starts it again, with backoff.

    It starts with SIGHUP blocked (the supervisor's mask, kept through exec), so a SIGHUP in its first moments
    cannot end it; here it is ignored, then unblocked, and the app's handler notes `generation` (the
    supervisor's count of SIGHUPs) before reading the files and compares once it is in place."""
    import signal
    import sys

    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # until the app's handler re-reads the tokens and limits
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP})
    from ..config import Settings
    from ..ops.logs import setup_logging

    settings = Settings()
    setup_logging(settings)
    sock = _listen(host, port, shared=True)
    try:
        failure = _serve(settings, host, sock, secret, workers, listening.set, metrics_dir, lambda: generation.value)
    except ConfigurationError as exc:
        failure = str(exc)
    if failure is not None:
        failures.put((index, failure))
        sys.exit(STARTUP_FAILED)


def _supervise(
    settings: Settings, host: str, sock: socket.socket, workers: int, secret: bytes, announce: Callable[[], None]
) -> None:
    """Start the workers, announce the address once each listens or has failed once, restart one that dies, and
    on SIGTERM/SIGINT pass the signal on and wait for them; SIGHUP is passed on (the workers re-read the tokens
    and the limits file).
    `sock` holds the port; each worker listens on a socket of its own.

    A worker that dies after it served for a while is replaced at once. One that could not start (its store is
    down or locked, or its configuration is refused: a tokens file broken since the service started), or that
    died soon after it started, is started again with exponential backoff, capped, with one WARNING line per try
    naming the cause: so the service serves again within seconds of the store coming back, or of the SIGHUP
    after the file is fixed (a SIGHUP starts waiting workers at once), without a restart storm meanwhile.

    SIGHUPs are counted in shared memory (`generation`) before they are passed on, and SIGHUP is blocked while a
    worker is spawned: a worker whose handler was not yet in place reads the files again once it is."""
    import multiprocessing
    import multiprocessing.connection
    import shutil
    import signal
    import tempfile
    import time

    log = logging.getLogger("thinking_hats")
    spawn = multiprocessing.get_context("spawn")
    port = sock.getsockname()[1]
    stopping = False
    # The workers' metrics files, summed by whichever worker answers /metrics; this run's only, removed at exit.
    metrics_dir = Path(tempfile.mkdtemp(prefix="thinking-hats-metrics-"))
    failures = spawn.SimpleQueue()
    causes: dict[int, str] = {}
    generation = spawn.RawValue("Q", hangups.seen())
    started_at = [0.0] * workers
    hung_up = False
    processes: list[Any] = []

    def start(index: int) -> tuple[Any, Any]:
        listening = spawn.Event()
        name = f"thinking-hats-worker-{index}"
        arguments = (host, port, secret, listening, workers, failures, index, metrics_dir, generation)
        process = spawn.Process(target=_worker, args=arguments, name=name)
        # The child keeps this mask through exec: a SIGHUP before its handler waits instead of ending it.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP})
        started_at[index] = time.monotonic()
        return process, listening

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for process in processes:
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)

    def hangup(signum: int, frame: object) -> None:
        nonlocal hung_up
        generation.value += 1  # first: a worker that misses the signal sees the count move
        hung_up = True
        log.warning("SIGHUP: the workers re-read THINKING_HTTP_TOKENS_FILE and THINKING_PRINCIPAL_LIMITS_FILE")
        for process in processes:
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGHUP)

    signal.signal(signal.SIGHUP, hangup)
    started = [start(i) for i in range(workers)]
    processes = [process for process, _ in started]
    ready = [listening for _, listening in started]
    attempts = [0] * workers  # failed starts in a row
    deaths = [0] * workers  # deaths in a row, each within _STABLE_S of its start
    due: list[float | None] = [None] * workers  # when a worker waiting out its backoff starts again
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # Announced once every worker listens (or failed: the loop below starts it again): a client that connects at
    # once then waits in a worker's backlog instead of being refused.
    for process, listening in started:
        while not stopping and process.is_alive() and not listening.wait(0.1):
            pass
    announce()
    probed_at, store_was_down = 0.0, False
    while not stopping:
        now = time.monotonic()
        if any(d is not None for d in due) and now - probed_at >= _PROBE_EVERY_S:
            probed_at = now
            up = _store_answers(settings)
            if up and store_was_down:  # it came back: no worker waits out the rest of its backoff
                due = [None if d is None else now for d in due]
            store_was_down = not up
        if hung_up:  # the operator may have fixed what kept a worker from starting: no waiting out the backoff
            hung_up = False
            due = [None if d is None else now for d in due]
        waits = [d - now for d in due if d is not None]
        running = [p.sentinel for i, p in enumerate(processes) if due[i] is None]
        multiprocessing.connection.wait(running, timeout=max(0.0, min([_PROBE_EVERY_S, *waits])))
        while not failures.empty():
            index, cause = failures.get()
            causes[index] = cause
        now = time.monotonic()
        for index, process in enumerate(processes):
            if stopping:
                break
            waiting = due[index]
            if waiting is not None:
                if now >= waiting:
                    due[index] = None
                    processes[index], ready[index] = start(index)
                continue
            lived = now - started_at[index]
            if process.is_alive():
                if ready[index].is_set():
                    attempts[index] = 0
                    if lived >= _STABLE_S:
                        deaths[index] = 0
                continue
            if ready[index].is_set():
                deaths[index] = 1 if lived >= _STABLE_S else deaths[index] + 1
                if deaths[index] == 1:
                    log.warning("worker %d exited with %s; starting another", index, process.exitcode)
                    processes[index], ready[index] = start(index)
                    continue
                delay = _backoff(deaths[index] - 1)
                log.warning(
                    "worker %d exited with %s %.1f s after it started (%d in a row). Starting it again in %g s.",
                    index, process.exitcode, lived, deaths[index], delay,
                )  # fmt: skip
            else:
                attempts[index] += 1
                delay = _backoff(attempts[index])
                cause = causes.pop(index, None)
                if cause is None or process.exitcode != STARTUP_FAILED:
                    cause = f"it exited with {process.exitcode}."
                elif not cause.endswith("."):
                    cause += "."
                log.warning(
                    "worker %d could not start (try %d): %s Starting it again in %g s.",
                    index, attempts[index], cause, delay,
                )  # fmt: skip
            due[index] = now + delay
    grace = settings.thinking_deadline + 10
    for process in processes:
        process.join(grace)
        if process.is_alive():
            process.kill()
            process.join()
    sock.close()
    shutil.rmtree(metrics_dir, ignore_errors=True)


def _backoff(tries: int) -> float:
    """How long to wait before the next start after `tries` failures in a row: 0.25 s, doubling, capped."""
    return float(min(_BACKOFF_FIRST_S * 2 ** (tries - 1), _BACKOFF_CAP_S))


def _store_answers(settings: Settings) -> bool:
    """Whether the store opens now (the supervisor's check while workers wait to start again)."""
    from ..errors import StoreError

    try:
        check_store(settings)
    except StoreError:
        return False
    return True


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
