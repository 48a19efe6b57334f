"""stdin and stdout as asyncio pipes, for the SDK's stdio transport: no worker thread per line.

The SDK's stdio transport reads each line, writes each reply and flushes it through a worker thread (three thread
hand-offs per call, about a third of a record-only call's latency and a tenth of its CPU). It also accepts streams
of ours: these read and write the pipes on the event loop itself. While serving, fd 0 reads the null device and
fd 1 writes to stderr, as the SDK arranges, so a library's stray print cannot corrupt the protocol; both come back
on exit.

Only for pipes and sockets (what MCP clients spawn servers with) on POSIX. A terminal, a regular file or Windows
gets the SDK's own transport: non-blocking mode on a terminal would outlive the process in the user's shell.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

_LINE_LIMIT = 1 << 30  # the SDK reads lines of any length; a message is bounded by the client, not here


class Lines:
    """stdin, line by line, as the SDK's transport iterates it."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class Output:
    """stdout, as the SDK's transport writes it: `write` queues the bytes, `flush` waits while the pipe is full."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def stdio_pipes() -> AsyncIterator[tuple[Lines, Output] | None]:
    """stdin and stdout on the running loop, or None where the SDK's threaded transport must serve them."""
    if sys.platform == "win32" or not (_is_pipe(0) and _is_pipe(1)):
        yield None
        return
    import fcntl

    loop = asyncio.get_running_loop()
    sys.stdout.flush()
    saved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3) for fd in (0, 1)]
    wire = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3) for fd in (0, 1)]
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    transports: list[asyncio.BaseTransport] = []
    try:
        reader = asyncio.StreamReader(limit=_LINE_LIMIT)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire[0], "rb", buffering=0)
        )
        transports.append(read_transport)
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire[1], "wb", buffering=0)
        )
        transports.append(write_transport)
        write_transport.set_write_buffer_limits(high=0)  # a flush returns once the reply is in the pipe
        yield Lines(reader), Output(asyncio.StreamWriter(write_transport, protocol, None, loop))
    finally:
        for transport in transports:
            transport.close()
        for fd, copy in zip((0, 1), saved, strict=True):
            with suppress(OSError):
                os.set_blocking(copy, True)  # the pipe transports made the shared file description non-blocking
                os.dup2(copy, fd)
            os.close(copy)
