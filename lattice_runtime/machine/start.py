"""Starting a run: the checks before it exists, its session, task and record.

The repository must be the top directory of a git work tree with a commit (edit grants are
bound to a base commit); worktrees a crashed run left behind are removed; the session is the
one named or the current one (made when missing); the goal compiles with the session's risk
floor; then the run record exists (``CREATED``) and is listed in the session.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from lattice_runtime.compile import TaskIR, compile_task
from lattice_runtime.errors import TaskInvalidError
from lattice_runtime.grants import Binding
from lattice_runtime.machine.clock import SystemClock
from lattice_runtime.machine.machine import RunMachine
from lattice_runtime.machine.outcome import Observer, RunOptions
from lattice_runtime.machine.states import RunState
from lattice_runtime.session import SessionStore
from lattice_runtime.verify import cleanup_stale

__all__ = ["Started", "git_head", "git_output", "repository_root", "start_run"]


@dataclass(frozen=True, slots=True)
class Started:
    """A run that exists: its repository, options, task and machine.

    Attributes:
        root: The repository's top directory, resolved.
        options: What the run was asked to do.
        task: The compiled task.
        machine: The run's state machine (its record is on disk).
        observer: Told of every transition (progress, tests), if any.
        epoch: The session's grant epoch when the run started.
    """

    root: Path
    options: RunOptions
    task: TaskIR
    machine: RunMachine
    observer: Observer | None = None
    epoch: int = 1

    def step(self, state: RunState, reason: str) -> None:
        """Transition the machine and tell the observer."""
        self.machine.transition(state, reason)
        if self.observer is not None:
            self.observer(state, reason)

    def binding(self, repository_id: str) -> Binding:
        """The binding of every grant of this run."""
        record = self.machine.record
        return Binding(
            task_id=self.task.id,
            session_id=record.session_id,
            repository_id=repository_id,
            base_commit=record.base_commit,
            epoch=self.epoch,
        )


def start_run(repo_root: Path, options: RunOptions, observer: Observer | None) -> Started:
    """Check the repository, pick the session, compile the goal and create the run record.

    Raises:
        TaskInvalidError: The goal does not compile, or ``repo_root`` is not the top of a git
            repository with at least one commit.
        SessionNotFoundError: ``options.session_id`` names no session.
        UnsafePathError: ``.lattice`` metadata is a symlink.
    """
    root = repository_root(repo_root)
    base_commit = git_head(root)
    compile_task(options.goal, root, constraints=options.constraints)  # refuse before writing
    cleanup_stale(root)  # worktrees a crashed run left behind
    sessions = SessionStore(root)
    session = sessions.get(options.session_id) if options.session_id else sessions.current()
    task = compile_task(
        options.goal, root, constraints=options.constraints, risk_floor=session.risk_floor
    )
    machine = RunMachine.start(
        root, task, session_id=session.id, base_commit=base_commit, clock=SystemClock()
    )
    sessions.record_run(session, machine.run_id, task.risk)
    return Started(root, options, task, machine, observer, session.epoch)


def repository_root(path: Path) -> Path:
    """``path`` resolved, when it is the top directory of a git work tree.

    Raises:
        TaskInvalidError: It is not.
    """
    root = path.resolve()
    top = git_output(root, "rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != root:
        raise TaskInvalidError(
            f"{root} is not the top directory of a git repository",
            hint="Run lattice in (or pass --repo) the repository's top directory.",
        )
    return root


def git_head(root: Path) -> str:
    """The commit ``HEAD`` names.

    Raises:
        TaskInvalidError: The repository has no commit yet.
    """
    head = git_output(root, "rev-parse", "--verify", "HEAD^{commit}")
    if head is None:
        raise TaskInvalidError(
            f"{root} has no commit yet",
            hint="Commit once: edit grants are bound to a base commit.",
        )
    return head


def git_output(root: Path, *args: str) -> str | None:
    """``git args`` run in ``root``: its stripped stdout, or ``None`` when it failed."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
