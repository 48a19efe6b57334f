"""`thinking-hats` under cProfile, switched on and off by signals: what benchmarks/run.py breaks CPU down with.

    BENCH_PROFILE_OUT=/tmp/x.prof python benchmarks/profiled_server.py    # serves stdio, configured as usual

The server's event loop runs in the main thread here (`thinking-hats` itself runs it in a thread, so that
Ctrl-C stays with the main thread), because signal handlers run in the main thread and cProfile profiles the
thread that enables it. SIGUSR1 starts profiling the event loop (MCP, the tools, agno, the SDKs, HTTP and SQLite
all run there) by the wall clock (cProfile's own, cheap to read: a CPU clock costs a system call per event and
would inflate every function by its call count), so the benchmark leaves out the time the loop waits in
epoll, which is where waiting for the model or the client is spent; SIGUSR2 stops
and writes the stats to $BENCH_PROFILE_OUT (under a temporary name first, so a reader never sees half a file).
"""

from __future__ import annotations

import cProfile
import os
import signal
from types import FrameType

from thinking_hats.config import Settings
from thinking_hats.ops.logs import setup_logging
from thinking_hats.server import build_server

PROFILE = cProfile.Profile()


def start(_signal: int, _frame: FrameType | None) -> None:
    PROFILE.enable()


def stop(_signal: int, _frame: FrameType | None) -> None:
    PROFILE.disable()
    out = os.environ["BENCH_PROFILE_OUT"]
    PROFILE.dump_stats(out + ".part")
    os.replace(out + ".part", out)


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    settings = Settings()
    setup_logging(settings)
    build_server(settings).run()
