"""A worker that runs any agent program once per turn (see ``docs/lattice-command.md``).

The program gets the turn on stdin as one JSON object (:func:`turn_request`) and answers with
one protocol-v5 response on stdout; the runtime parses that answer, this worker only decodes
it. The program runs without a shell, in its own process group, with a turn deadline, a
bounded stdout and an environment built from an allowlist of names (:func:`worker_environment`)
so the user's secrets never reach it unless the user names them.

The program runs with the repository as its working directory: it may read the repository,
but it has no write authority. Anything it writes to the working tree is not a patch: the
worker takes a digest of the tree (``git status`` plus the bytes of every changed path)
before and after each turn and fails the turn when they differ.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Final

from lattice_runtime.errors import WorkerError
from lattice_runtime.protocol import PROTOCOL_VERSION
from lattice_runtime.workers._exchange import exchange
from lattice_runtime.workers._tree import tree_state
from lattice_runtime.workers.turn import GrantedPage, WorkerTurn

__all__ = [
    "DEFAULT_ENV_ALLOWLIST",
    "CommandWorker",
    "turn_request",
    "worker_environment",
]

DEFAULT_ENV_ALLOWLIST: Final[frozenset[str]] = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TERM",
        "TMPDIR",
        "TZ",
    }
)
"""The variables an agent program inherits by default: where programs are, who and where the
user is, locale and time zone. Nothing that commonly holds a secret or changes what Python
imports (``PYTHONPATH`` is not on it); add names with ``env_allowlist`` / ``--worker-env``."""


class CommandWorker:
    """Runs an agent program once per turn: the turn as JSON on stdin, the answer on stdout."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        turn_timeout_seconds: float = 600,
        env_allowlist: Collection[str] = DEFAULT_ENV_ALLOWLIST,
        base_env: Mapping[str, str] | None = None,
        max_output_bytes: int = 4_000_000,
    ) -> None:
        """Keep the program and its limits.

        Args:
            argv: The program and its arguments (no shell: no pipes, globs or variables).
            cwd: The working directory of each turn (the repository).
            turn_timeout_seconds: Each turn's deadline, for the whole exchange.
            env_allowlist: The variable names passed from ``base_env``.
            base_env: Where the allowed variables are read (None: this process's environment).
            max_output_bytes: The most stdout one turn may write.

        Raises:
            WorkerError: ``argv`` is empty or a limit is not positive.
        """
        if not argv or not argv[0]:
            raise WorkerError(
                "the command worker needs a program to run",
                hint='Pass --worker-command "<program> <args>".',
            )
        if turn_timeout_seconds <= 0 or max_output_bytes <= 0:
            raise WorkerError(
                "the turn timeout and the output limit must be positive",
                hint="Pass --turn-timeout S with S > 0.",
            )
        self._argv = tuple(argv)
        self._cwd = cwd
        self._timeout = turn_timeout_seconds
        self._allowlist = frozenset(env_allowlist)
        self._base_env = base_env
        self._max_output = max_output_bytes

    @classmethod
    def from_command_line(
        cls,
        text: str,
        *,
        cwd: Path,
        turn_timeout_seconds: float = 600,
        env_allowlist: Collection[str] = DEFAULT_ENV_ALLOWLIST,
        base_env: Mapping[str, str] | None = None,
    ) -> CommandWorker:
        """A worker from one command line, split like a POSIX shell would (never run by one).

        Raises:
            WorkerError: The line is empty or its quoting is unbalanced.
        """
        try:
            argv = shlex.split(text)
        except ValueError as exc:
            raise WorkerError(
                f"cannot split the worker command: {exc}", hint="Check its quotes."
            ) from None
        return cls(
            argv,
            cwd=cwd,
            turn_timeout_seconds=turn_timeout_seconds,
            env_allowlist=env_allowlist,
            base_env=base_env,
        )

    @property
    def name(self) -> str:
        """``command``."""
        return "command"

    @property
    def argv(self) -> tuple[str, ...]:
        """The program and its arguments."""
        return self._argv

    def respond(self, turn: WorkerTurn) -> str:
        """Run the program for ``turn`` and return its stdout as the raw answer.

        Raises:
            WorkerError: The program cannot start, passed the turn deadline, wrote too much,
                changed the working tree, exited non-zero, or wrote bytes that are not UTF-8.
        """
        request = json.dumps(turn_request(turn), ensure_ascii=False).encode("utf-8")
        base = os.environ if self._base_env is None else self._base_env
        before = tree_state(self._cwd)
        done = exchange(
            self._argv,
            cwd=self._cwd,
            env=worker_environment(base, self._allowlist, turn.number),
            request=request,
            timeout_seconds=self._timeout,
            max_output_bytes=self._max_output,
        )
        if before is not None and tree_state(self._cwd) != before:
            raise WorkerError(
                f"the working tree changed while the agent program ran (turn {turn.number}); "
                "a worker proposes and never writes",
                hint="Check the tree with git status: the change is the agent's, or someone "
                "edited files during the turn. Nothing of the run was applied.",
            )
        if done.exit_code != 0:
            tail = f"; stderr: {done.stderr_tail[-600:]}" if done.stderr_tail else ""
            raise WorkerError(
                f"the agent program exited with code {done.exit_code} on turn {turn.number}{tail}",
                hint="A command worker must exit 0 after writing its answer.",
            )
        try:
            return done.stdout.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WorkerError(
                f"the agent program's answer is not UTF-8 (byte {exc.start})",
                hint="Write the answer as UTF-8 JSON.",
            ) from None


def worker_environment(
    base: Mapping[str, str], allowlist: Collection[str], turn_number: int
) -> dict[str, str]:
    """The agent program's environment: the allowed names of ``base``, plus the turn markers.

    ``LATTICE_TURN`` (1 for the first turn) and ``LATTICE_PROTOCOL_VERSION`` are always set
    and cannot be overridden from ``base``.
    """
    allowed = set(allowlist)
    env = {name: value for name, value in base.items() if name in allowed}
    env["LATTICE_TURN"] = str(turn_number)
    env["LATTICE_PROTOCOL_VERSION"] = str(PROTOCOL_VERSION)
    return env


def turn_request(turn: WorkerTurn) -> dict[str, object]:
    """The JSON object an agent program reads on stdin (the wire form of ``turn``)."""
    request: dict[str, object] = {
        "protocolVersion": PROTOCOL_VERSION,
        "kind": turn.kind,
        "task": turn.task.to_wire(),
        "pages": [_page(page) for page in turn.pages],
        "repositoryMap": [[entry.path, list(entry.symbols)] for entry in turn.repo_map],
    }
    if turn.feedback is not None:
        request["feedback"] = {"kind": turn.kind, "message": turn.feedback}
    request["prompt"] = turn.prompt
    return request


def _page(page: GrantedPage) -> dict[str, object]:
    wire: dict[str, object] = {}
    if page.handle:
        wire["editHandle"] = page.handle
    wire["path"] = page.path
    if page.symbol is not None:
        wire["symbol"] = page.symbol
    wire["startLine"], wire["endLine"] = page.lines
    wire["permissions"] = list(page.operations)
    wire["content"] = page.content
    return wire
