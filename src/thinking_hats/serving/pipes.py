"""stdin and stdout as asyncio pipes, for the SDK's stdio transport: no worker thread per line.

The SDK's stdio transport reads each line, writes each reply and flushes it through a worker thread (three thread
hand-offs per call, about a third of a record-only call's latency and a tenth of its CPU). It also accepts streams
of ours: these read and write the pipes on the event loop itself. While serving, fd 0 reads the null device and
fd 1 writes to stderr, as the SDK arranges, so a library's stray print cannot corrupt the protocol; both come back
on exit.

Only for pipes and sockets (what MCP clients spawn servers with) on POSIX. A terminal, a regular file or Windows
gets the SDK's own transport: non-blocking mode on a terminal would outlive the process in the user's shell.

On either transport, `answered_before_eof` keeps the server reading until every request read before the end of
input is answered: the SDK ends its serving loop at end of input and cancels what is in flight, so a client that
writes its requests and closes stdin (`cat requests.jsonl | thinking-hats`) lost the replies still being worked on.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse, RequestId

_LINE_LIMIT = 1 << 30  # the SDK reads lines of any length; a message is bounded by the client, not here
# After end of input, how long requests still in flight may take to be answered. A thought's own deadline
# (THINKING_DEADLINE, under a minute) ends it well before; this only bounds a request that never answers.
DRAIN_SECONDS = 300.0

Incoming = MemoryObjectReceiveStream[SessionMessage | Exception]
Outgoing = MemoryObjectSendStream[SessionMessage]


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


@asynccontextmanager
async def answered_before_eof(
    read_stream: Incoming, write_stream: Outgoing
) -> AsyncIterator[tuple[Incoming, Outgoing]]:
    """The server's streams, relayed: the server sees the end of input only once every request read before it has
    been answered (or cancelled by the client), so nothing a piped client sent goes unanswered."""
    pending: set[RequestId] = set()
    settled = anyio.Event()
    to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_out, from_server = anyio.create_memory_object_stream[SessionMessage](0)

    def settle(request: RequestId) -> None:
        nonlocal settled
        pending.discard(request)
        if not pending:
            settled.set()

    async def relay_in() -> None:
        nonlocal settled
        async with to_server:
            async for message in read_stream:
                if isinstance(message, SessionMessage):
                    sent = message.message
                    if isinstance(sent, JSONRPCRequest):
                        if not pending:
                            settled = anyio.Event()
                        pending.add(sent.id)
                    elif isinstance(sent, JSONRPCNotification) and sent.method == "notifications/cancelled":
                        request = (sent.params or {}).get("requestId")
                        if request is not None:
                            settle(request)
                await to_server.send(message)
            if pending:
                with anyio.move_on_after(DRAIN_SECONDS):
                    await settled.wait()

    written = anyio.Event()

    async def relay_out() -> None:
        async with from_server:
            async for message in from_server:
                await write_stream.send(message)
                if isinstance(message.message, JSONRPCResponse | JSONRPCError) and message.message.id is not None:
                    settle(message.message.id)
        written.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(relay_in)
        tasks.start_soon(relay_out)
        try:
            yield server_in, server_out
        finally:
            await server_out.aclose()
            with anyio.CancelScope(shield=True):
                await written.wait()  # the server's last reply is on the wire
            tasks.cancel_scope.cancel()  # relay_in may still wait for input the server no longer reads
    # The transport's writer ends when its stream closes, as it does when the SDK's loop owns it.
    await write_stream.aclose()
