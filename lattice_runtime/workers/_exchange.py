"""One bounded exchange with a child process: stdin in, stdout back, stderr kept aside.

The child runs without a shell, in its own session (so its whole process group can be
killed), with the environment it is given and nothing else. Its stdin gets the request bytes,
its stdout is read up to a byte limit, and its stderr is drained so the child never blocks on
a full pipe, keeping only the tail for diagnostics. A deadline covers the whole exchange.
Everything runs on one thread through a selector, so no reader can outlive the exchange.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from lattice_runtime.errors import WorkerError

__all__ = ["STDERR_TAIL_BYTES", "Exchange", "exchange"]

STDERR_TAIL_BYTES: Final = 4_000
"""How much of the child's stderr is kept for error messages (the end of it)."""

_CHUNK: Final = 65_536


@dataclass(frozen=True, slots=True)
class Exchange:
    """What a finished child produced.

    Attributes:
        stdout: Everything it wrote to stdout (at most the byte limit).
        stderr_tail: The last :data:`STDERR_TAIL_BYTES` of its stderr, decoded leniently.
        exit_code: Its exit status (negative: killed by that signal).
    """

    stdout: bytes
    stderr_tail: str
    exit_code: int


class _Overflow(Exception):
    """Stdout passed the byte limit."""


class _Pipes:
    """The selector loop over one child's three pipes."""

    def __init__(self, process: subprocess.Popen[bytes], request: bytes, limit: int) -> None:
        self.process = process
        self.limit = limit
        self.pending = memoryview(request)
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.selector = selectors.DefaultSelector()
        for stream, events in (
            (process.stdin, selectors.EVENT_WRITE),
            (process.stdout, selectors.EVENT_READ),
            (process.stderr, selectors.EVENT_READ),
        ):
            assert stream is not None  # Popen was given three pipes
            os.set_blocking(stream.fileno(), False)
            self.selector.register(stream, events)

    def pump(self, deadline: float) -> bool:
        """Move bytes until both output pipes close; False when the deadline passes first.

        Raises:
            _Overflow: Stdout passed the limit.
        """
        while self.selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            for key, _ in self.selector.select(timeout=left):
                stream: IO[bytes] = key.fileobj  # type: ignore[assignment]  # registered streams
                if stream is self.process.stdin:
                    self._write(stream)
                else:
                    self._read(stream)
        return True

    def _write(self, stream: IO[bytes]) -> None:
        try:
            written = os.write(stream.fileno(), self.pending[:_CHUNK])
        except BlockingIOError:  # the pipe filled up after the selector looked
            written = 0
        except BrokenPipeError:  # the child stopped reading: its answer decides
            written = len(self.pending)
        self.pending = self.pending[written:]
        if not self.pending:
            self._close(stream)

    def _read(self, stream: IO[bytes]) -> None:
        chunk = os.read(stream.fileno(), _CHUNK)
        if not chunk:
            self._close(stream)
            return
        if stream is self.process.stdout:
            self.stdout += chunk
            if len(self.stdout) > self.limit:
                raise _Overflow
        else:
            self.stderr += chunk
            del self.stderr[:-STDERR_TAIL_BYTES]

    def _close(self, stream: IO[bytes]) -> None:
        self.selector.unregister(stream)
        stream.close()

    def close(self) -> None:
        for key in list(self.selector.get_map().values()):
            self._close(key.fileobj)  # type: ignore[arg-type]  # registered streams
        self.selector.close()

    def stderr_tail(self) -> str:
        return self.stderr.decode("utf-8", errors="replace").strip()


def exchange(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    request: bytes,
    timeout_seconds: float,
    max_output_bytes: int,
) -> Exchange:
    """Run ``argv`` once, send ``request`` on stdin, return what it wrote.

    The child's whole process group is killed when the exchange ends, whichever way it ends,
    so nothing it started outlives its turn.

    Raises:
        WorkerError: The program cannot start, the deadline passed, or stdout passed the
            limit (the child is killed in both cases).
    """
    try:
        process = subprocess.Popen(  # the user's agent, without a shell
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise WorkerError(
            f"cannot start the agent program {argv[0]!r}: {exc.strerror or exc}",
            hint="Check --worker-command: the program must exist and be executable.",
        ) from None
    pipes = _Pipes(process, request, max_output_bytes)
    deadline = time.monotonic() + timeout_seconds
    try:
        finished = pipes.pump(deadline) and _exited_by(process, deadline)
    except _Overflow:
        raise WorkerError(
            f"the agent program wrote more than {max_output_bytes} bytes to stdout; it was killed",
            hint="An answer is one JSON object; write diagnostics to stderr.",
        ) from None
    finally:
        pipes.close()
        _kill_group(process)
    if not finished:
        raise WorkerError(
            f"the turn deadline passed ({timeout_seconds:g}s); the agent program was killed",
            hint="Raise --turn-timeout, or make the agent answer sooner.",
        )
    return Exchange(bytes(pipes.stdout), pipes.stderr_tail(), process.returncode)


def _exited_by(process: subprocess.Popen[bytes], deadline: float) -> bool:
    """Wait for a child that closed its pipes to exit, at most until ``deadline``."""
    try:
        process.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return False
    return True


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the child's process group (it leads its own session) and reap the child."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
