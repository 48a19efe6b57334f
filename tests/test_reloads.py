"""SIGHUP re-reads the tokens and limits files in every worker, whenever it lands: during a worker's start, during
the supervisor's, and after a broken file was refused; and no restart, whatever its cause, turns into a storm."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from http_peer import INITIALIZE, MCP_HEADERS, HttpServer, _drain, http_server, stop
from stdio_peer import server_env

ALICE = "alice-token-0a1b2c3d4e5f"
BOB = "bob-token-9f8e7d6c5b4a"


def wait_for(condition: Callable[[], Any], seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.02)  # polling other processes (their log, /proc): there is no event to wait on
    pytest.fail(f"{what} within {seconds} s")


def status_of(url: str, token: str) -> int:
    # A new connection each time: the kernel spreads them over the workers (SO_REUSEPORT).
    with httpx2.Client(timeout=30) as http:
        return http.post(url, json=INITIALIZE, headers=MCP_HEADERS | {"authorization": f"Bearer {token}"}).status_code


def logged(server: HttpServer, text: str) -> int:
    return sum(text in line for line in list(server.stderr))


def two_workers(server: HttpServer, gone: frozenset[int] = frozenset()) -> set[int]:
    def running() -> set[int] | None:
        found = server.workers()
        return found if len(found) == 2 and not found & gone else None

    workers: set[int] = wait_for(running, 60, "two workers running")
    return workers


def catches_sighup(pid: int) -> bool:
    """Whether the process has a handler for SIGHUP (from /proc: SigCgt, a hex mask with bit 0 for signal 1)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & 1 << (signal.SIGHUP - 1))
    return False


def opening_a_pipe(pid: int) -> bool:
    """Whether a thread of the process waits in open() for a named pipe's writer (from /proc: its wchan)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if (task / "wchan").read_text() == "wait_for_partner":
                return True
        except OSError:
            continue  # a thread that just ended
    return False


def write_when_read(fifo: Path, content: str, seconds: float = 60) -> None:
    """Write `content` into a named pipe once a reader has it open (it has then read the whole file)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO or time.monotonic() > deadline:
                raise
            time.sleep(0.005)  # no reader yet: the replacement worker is still importing
    try:
        os.set_blocking(fd, True)
        os.write(fd, content.encode())
    finally:
        os.close(fd)


@pytest.mark.slow
def test_a_worker_restarted_just_before_a_sighup_drops_the_revoked_token_too(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice {ALICE}\nbob {BOB}\n")
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(tokens))
    with http_server(env, "--workers", "2") as server:
        victim = min(two_workers(server))
        # The replacement reads the tokens from a named pipe, so the test knows the moment it has read them:
        # bob is revoked and SIGHUP sent right then, before its SIGHUP handler can be in place.
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        os.replace(fifo, tokens)
        os.kill(victim, signal.SIGKILL)
        write_when_read(tokens, f"alice {ALICE}\nbob {BOB}\n")
        revoked = tmp_path / "revoked"
        revoked.write_text(f"alice {ALICE}\n# bob revoked\n")
        os.replace(revoked, tokens)
        server.process.send_signal(signal.SIGHUP)
        # One reload in the surviving worker, one in the replacement once its handler is in place.
        wait_for(lambda: logged(server, "tokens reloaded: 1 principal") >= 2, 60, "both workers reloading")
        two_workers(server, frozenset({victim}))
        bob = [status_of(server.url, BOB) for _ in range(20)]
        alice = [status_of(server.url, ALICE) for _ in range(4)]

    assert bob == [401] * 20, "".join(server.stderr)
    assert alice == [200] * 4


@pytest.mark.slow
def test_sighups_all_through_start_up_kill_no_process_and_the_last_file_is_in_force(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice {ALICE}\nbob {BOB}\n")
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(tokens))
    command = [sys.executable, "-m", "thinking_hats", "serve", "--transport", "http", "--port", "0", "--workers", "2"]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    server = HttpServer(process)
    ready = threading.Event()
    reader = threading.Thread(target=_drain, args=(server, ready), daemon=True)
    reader.start()
    sent = 0
    try:
        # From the moment the command catches SIGHUP (its first lines), a SIGHUP every 10 ms until both workers
        # have served one: through the supervisor's checks, each worker's spawn, imports, store and lifespan.
        wait_for(lambda: process.poll() is not None or catches_sighup(process.pid), 60, "SIGHUP caught")
        revoked_at = 20
        deadline = time.monotonic() + 90
        while process.poll() is None and logged(server, "tokens reloaded") < 2 and time.monotonic() < deadline:
            process.send_signal(signal.SIGHUP)
            sent += 1
            if sent == revoked_at:
                tokens.write_text(f"alice {ALICE}\n# bob revoked\n")
            time.sleep(0.01)  # the pace of the signals, not a wait for an outcome
        assert ready.wait(60) and server.url, "".join(server.stderr)
        two_workers(server)
        bob = [status_of(server.url, BOB) for _ in range(12)]
        alice = [status_of(server.url, ALICE) for _ in range(4)]
        alive = process.poll() is None
    finally:
        stop(process)
        reader.join(timeout=30)
        assert process.stderr is not None
        process.stderr.close()

    log = "".join(server.stderr)
    assert alive and sent > 20, log
    assert "exited with" not in log and "could not start" not in log and "Traceback" not in log, log
    assert bob == [401] * 12 and alice == [200] * 4, log


@pytest.mark.slow
def test_after_a_sighup_refused_a_broken_tokens_file_a_dead_worker_is_restarted_with_backoff(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice {ALICE}\nbob {BOB}\n")
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(tokens))
    with http_server(env, "--workers", "2") as server:
        victim = min(two_workers(server))
        tokens.write_text(f"alice {ALICE}\nbob short\n")
        server.process.send_signal(signal.SIGHUP)
        wait_for(lambda: logged(server, "tokens not reloaded") >= 2, 60, "both workers keeping their tokens")
        os.kill(victim, signal.SIGKILL)
        wait_for(lambda: logged(server, "could not start (try 4)"), 60, "four tries of the replacement")
        served = status_of(server.url, ALICE)  # the other worker serves meanwhile
        tokens.write_text(f"alice {ALICE}\n")
        server.process.send_signal(signal.SIGHUP)  # the fix: the waiting worker starts at once
        two_workers(server, frozenset({victim}))
        wait_for(lambda: logged(server, "tokens reloaded") >= 1, 60, "the fixed file read")
        wait_for(lambda: all(status_of(server.url, ALICE) == 200 for _ in range(8)), 60, "both workers serving")
        bob = [status_of(server.url, BOB) for _ in range(8)]

    tries = [line for line in server.stderr if "could not start" in line]
    delays = [float(line.rsplit("again in ", 1)[1].split(" s")[0]) for line in tries]
    assert delays[:4] == [0.25, 0.5, 1.0, 2.0], tries  # backing off, not 28 restarts in 20 s
    assert all("THINKING_HTTP_TOKENS_FILE" in line and "line 2" in line for line in tries), tries
    assert "Traceback" not in "".join(server.stderr) and BOB not in "".join(server.stderr)
    assert served == 200 and bob == [401] * 8


@pytest.mark.slow
def test_while_a_reload_reads_the_tokens_file_requests_and_healthz_are_still_answered(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice {ALICE}\nbob {BOB}\n")
    env = server_env(tmp_path / "data", THINKING_HTTP_TOKENS_FILE=str(tokens))
    with http_server(env) as server, httpx2.Client(timeout=10) as http:
        # A reload that cannot finish yet: the tokens file is now a named pipe nobody writes to.
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        os.replace(fifo, tokens)
        server.process.send_signal(signal.SIGHUP)
        wait_for(lambda: opening_a_pipe(server.process.pid), 60, "the reload waiting for the file")
        try:
            health: int | None = http.get(server.url.removesuffix("/mcp") + "/healthz").status_code
        except httpx2.TimeoutException:
            health = None
        alice = status_of(server.url, ALICE)
        write_when_read(tokens, f"alice {ALICE}\n")
        wait_for(lambda: logged(server, "tokens reloaded"), 60, "the reload finishing")
        bob = status_of(server.url, BOB)

    assert health == 200 and alice == 200  # the event loop was not held by the reload
    assert bob == 401
