"""Serve MCP over stdio until the client closes stdin or the process is told to stop.

The SDK's stdio transport reads stdin in a worker thread. A thread blocked in ``read`` cannot
be cancelled, so a server whose client keeps the pipe open ignored SIGTERM and Ctrl-C: the
event loop stopped, then waited for that read forever. Here, when stdin is a pipe, a socket
or a terminal, lines are read in the event loop itself (wait until readable, then one
``read``), so SIGTERM or SIGINT cancels the server at once and :func:`serve_stdio` returns
normally: the caller closes the workspace (store, archive) as after any other shutdown.

While serving, fd 0 points at the null device (as the SDK does when it reads stdin itself):
a git or parser process started meanwhile reads EOF instead of the client's messages.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import os
import signal
import stat
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

__all__ = ["serve_stdio"]

_READ_BYTES = 1 << 16
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


async def serve_stdio(server: MCPServer) -> bool:
    """Serve ``server`` on the process's stdin and stdout.

    Returns:
        True when a SIGTERM or SIGINT stopped it, False when the client closed stdin.
    """
    stopped = False
    with _stdin_lines() as stdin:
        async with anyio.create_task_group() as group:

            async def stop_on_signal() -> None:
                nonlocal stopped
                with anyio.open_signal_receiver(*_STOP_SIGNALS) as signals:
                    async for _ in signals:
                        stopped = True
                        group.cancel_scope.cancel()
                        return

            group.start_soon(stop_on_signal)
            async with stdio_server(stdin=cast(Any, stdin)) as (read_stream, write_stream):
                lowlevel = server._lowlevel_server
                await lowlevel.run(
                    read_stream, write_stream, lowlevel.create_initialization_options()
                )
            group.cancel_scope.cancel()
    return stopped


@contextlib.contextmanager
def _stdin_lines() -> Iterator[_PipeLines | None]:
    """Take fd 0 for the server: its lines when it can be polled, else None (the SDK's way).

    A regular file or the null device never blocks a read for long, and cannot be polled.
    """
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        yield None
        return
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(0)):
        yield None
        return
    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        yield _PipeLines(private)
    finally:
        os.dup2(private, 0)
        os.close(private)


class _PipeLines:
    """The UTF-8 lines of a pollable descriptor, read without a thread (cancellable)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        partial: list[str] = []  # the current line's text so far, chunk by chunk
        while True:
            await anyio.wait_readable(self._fd)
            chunk = os.read(self._fd, _READ_BYTES)
            if not chunk:
                break
            *lines, rest = decoder.decode(chunk).split("\n")
            for line in lines:
                yield "".join(partial) + line + "\n"
                partial.clear()
            partial.append(rest)
        partial.append(decoder.decode(b"", final=True))
        last = "".join(partial)
        if last:
            yield last
