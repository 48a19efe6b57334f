"""What a large tokens file costs: 50,000 principals against one.

1. Reading THINKING_HTTP_TOKENS_FILE (`Principals.from_settings`): the median of several reads, in process.
2. One token check (`Principals.who`), a known token and an unknown one: the median per check over many.
3. A real server (`serve --transport http`, one process, SQLite): the time from launch to the announced address,
   the time from SIGHUP to "tokens reloaded" in its log, and the slowest `/healthz` answer while it reloads
   (polled back to back from SIGHUP until the reload is logged). Goal: start-up and reload each within 1 s more
   than with one principal, `/healthz` answered throughout.

    .venv/bin/python benchmarks/principals.py [--smoke]   # table on stdout, JSON in benchmarks/principals_results.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx2

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from thinking_hats.config import Settings  # noqa: E402
from thinking_hats.serving.gate import Principals  # noqa: E402

ANNOUNCEMENT = re.compile(r"streamable HTTP on (http://\S+/mcp)")


def tokens_file(path: Path, count: int) -> list[str]:
    tokens = [secrets.token_hex(24) for _ in range(count)]
    path.write_text("".join(f"user-{n} {token}{' operator' if n == 0 else ''}\n" for n, token in enumerate(tokens)))
    return tokens


def in_process(path: Path, tokens: list[str], reads: int, checks: int) -> dict[str, float]:
    settings = Settings(thinking_http_tokens_file=path)
    times = []
    for _ in range(reads):
        started = time.perf_counter()
        principals = Principals.from_settings(settings, loopback=False)
        times.append(time.perf_counter() - started)
    known = f"Bearer {tokens[len(tokens) // 2]}".encode()
    unknown = f"Bearer {secrets.token_hex(24)}".encode()
    per_check = {}
    for label, header in (("known", known), ("unknown", unknown)):
        started = time.perf_counter()
        for _ in range(checks):
            principals.who(header)
        per_check[label] = (time.perf_counter() - started) / checks
    return {
        "read_s": statistics.median(times),
        "check_known_us": per_check["known"] * 1e6,
        "check_unknown_us": per_check["unknown"] * 1e6,
    }


def served(path: Path, work: Path) -> dict[str, float]:
    """Launch-to-address, SIGHUP-to-reloaded and the slowest /healthz meanwhile, for one server process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("THINKING_", "LLM_", "OTEL_"))}
    env |= {"THINKING_DATA_DIR": str(work / "data"), "THINKING_HTTP_TOKENS_FILE": str(path)}
    command = [sys.executable, "-m", "thinking_hats", "serve", "--transport", "http", "--port", "0"]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    lines: list[str] = []
    announced = threading.Event()
    url: list[str] = []

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if (match := ANNOUNCEMENT.search(line)) and not announced.is_set():
                url.append(match.group(1))
                announced.set()
        announced.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        if not announced.wait(120) or not url:
            raise RuntimeError("the server did not start: " + "".join(lines))
        start_up = time.perf_counter() - started
        health = url[0].removesuffix("/mcp") + "/healthz"
        with httpx2.Client(timeout=30) as http:
            http.get(health)
            slowest = 0.0
            hung_up = time.perf_counter()
            process.send_signal(signal.SIGHUP)
            while not any("tokens reloaded" in line for line in lines):
                asked = time.perf_counter()
                http.get(health)
                slowest = max(slowest, time.perf_counter() - asked)
                if time.perf_counter() - hung_up > 120:
                    raise RuntimeError("no reload logged: " + "".join(lines))
            reload = time.perf_counter() - hung_up
        return {"start_up_s": start_up, "reload_s": reload, "healthz_slowest_during_reload_s": slowest}
    finally:
        process.terminate()
        process.wait(60)
        reader.join(30)


def run(smoke: bool) -> dict[str, Any]:
    counts = (1, 1_000) if smoke else (1, 50_000)
    rounds = 1 if smoke else 3
    found: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "rounds": rounds,
        "by_principals": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for count in counts:
            path = work / f"tokens-{count}"
            tokens = tokens_file(path, count)
            measured = in_process(path, tokens, reads=3 if smoke else 7, checks=1_000 if smoke else 100_000)
            serving = [served(path, work) for _ in range(rounds)]
            for key in serving[0]:
                measured[key] = statistics.median(r[key] for r in serving)
            found["by_principals"][str(count)] = {k: round(v, 4) for k, v in measured.items()}
    return found


def rows(found: dict[str, Any]) -> list[list[str]]:
    table = [["principals", "read file", "check (known / unknown)", "start-up", "SIGHUP -> reloaded",
              "slowest /healthz during reload"]]  # fmt: skip
    for count, m in found["by_principals"].items():
        table.append([
            f"{int(count):,}", f"{m['read_s'] * 1000:.1f} ms",
            f"{m['check_known_us']:.1f} / {m['check_unknown_us']:.1f} µs", f"{m['start_up_s']:.2f} s",
            f"{m['reload_s'] * 1000:.0f} ms", f"{m['healthz_slowest_during_reload_s'] * 1000:.0f} ms",
        ])  # fmt: skip
    return table


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="1,000 principals, one round: a check that it runs")
    parser.add_argument("--output", type=Path, default=HERE / "principals_results.json", help="where to write the JSON")
    args = parser.parse_args()
    result = run(args.smoke)
    if not args.smoke:
        args.output.write_text(json.dumps(result, indent=2) + "\n")
    for row in rows(result):
        print("| " + " | ".join(row) + " |")
