"""Running one verification command: no shell, a deadline, its own process group, a tail.

Rules:

- The command's ``argv`` is executed directly (``subprocess.Popen`` without a shell) in the
  worktree, in a new session, so its whole process group can be killed.
- stdin is ``/dev/null``; stdout and stderr are merged; only the last
  :data:`TAIL_CHARS` characters are kept (decoded as UTF-8 with replacement).
- At the deadline the process group is killed and the exit code is 124. A program that
  cannot be started gets exit code 127, with the reason in the tail. A command killed by a
  signal gets 128 + the signal number. Leftover processes of the group are killed when the
  command ends.
- Environment: the caller's (default: this process's), plus ``PYTHONDONTWRITEBYTECODE=1``.
  ``PATH`` starts with the repository's ``.venv/bin`` (when it has one), then the directory of
  the interpreter running the runtime, so ``python`` and ``pytest`` resolve to an environment
  that has them even on a machine whose ``PATH`` has no ``python``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final, cast

from lattice_runtime.compile.task import VerificationCommand

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "EXIT_NOT_STARTED",
    "EXIT_TIMEOUT",
    "TAIL_CHARS",
    "CommandResult",
    "command_env",
    "run_command",
]

DEFAULT_TIMEOUT_SECONDS: Final = 300.0
EXIT_TIMEOUT: Final = 124
EXIT_NOT_STARTED: Final = 127
TAIL_CHARS: Final = 4_000
_TAIL_BYTES: Final = TAIL_CHARS * 4  # enough bytes for TAIL_CHARS characters of UTF-8
_DRAIN_SECONDS: Final = 5.0  # how long to wait for the output pipe after the group is killed


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What one verification command did.

    Attributes:
        command: The command that ran.
        exit_code: Its exit code (124: deadline, 127: could not start, 128+n: signal n).
        duration_seconds: Time from start to end on the injected monotonic clock.
        output_tail: The last :data:`TAIL_CHARS` characters of stdout and stderr, merged.
        timed_out: The deadline ended it.
    """

    command: VerificationCommand
    exit_code: int
    duration_seconds: float
    output_tail: str
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        """It exited 0."""
        return self.exit_code == 0


def command_env(repo_root: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a command runs with (see the module docstring)."""
    env = dict(os.environ if base is None else base)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    first = [Path(sys.executable).parent]  # the runtime's own interpreter: python, pytest
    venv_bin = repo_root / ".venv" / "bin"
    if venv_bin.is_dir():
        first.insert(0, venv_bin.resolve())
    rest = env.get("PATH", os.defpath)
    env["PATH"] = os.pathsep.join([*(str(path) for path in first), *([rest] if rest else [])])
    return env


def run_command(
    command: VerificationCommand,
    cwd: Path,
    *,
    env: Mapping[str, str],
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    clock: Callable[[], float] = time.monotonic,
) -> CommandResult:
    """Run ``command`` in ``cwd`` under a deadline and return what it did.

    Never raises for the command's own failure: a non-zero exit, a timeout or a program that
    cannot start are results.
    """
    start = clock()
    try:
        process = subprocess.Popen(
            command.argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        message = f"cannot start {command.display}: {exc}"[-TAIL_CHARS:]
        return CommandResult(command, EXIT_NOT_STARTED, clock() - start, message)
    tail = _TailReader(cast(IO[bytes], process.stdout))  # a pipe: stdout=PIPE above
    timed_out = False
    try:
        process.wait(timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _kill_group(process.pid)
        process.wait()
    output = tail.finish()
    code = EXIT_TIMEOUT if timed_out else _exit_code(process.returncode)
    return CommandResult(command, code, clock() - start, output, timed_out)


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class _TailReader:
    """Reads a pipe on a thread, keeping only its last bytes."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self._pipe = pipe
        self._buffer = bytearray()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        fd = self._pipe.fileno()
        while chunk := os.read(fd, 65_536):
            self._buffer += chunk
            if len(self._buffer) > 2 * _TAIL_BYTES:
                del self._buffer[:-_TAIL_BYTES]

    def finish(self) -> str:
        """Wait (bounded) for the pipe to close, then return the decoded tail."""
        self._thread.join(timeout=_DRAIN_SECONDS)
        if not self._thread.is_alive():  # else a process that left the group holds the pipe
            self._pipe.close()
        data = bytes(self._buffer[-_TAIL_BYTES:])
        return data.decode("utf-8", errors="replace")[-TAIL_CHARS:]
