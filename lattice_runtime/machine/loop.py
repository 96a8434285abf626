"""The run loop: one task from goal to verdict, as a path through the run machine.

compile -> index -> grant context -> worker turn -> normalize -> validate -> (context fault ->
grant more) | (lower -> worktree transaction -> verify) -> passed | revision (at most 2) |
failed. The worker only proposes: it sees pages and handles (:mod:`lattice_runtime.kernel`,
:mod:`lattice_runtime.grants`); its answer is parsed strictly (:mod:`lattice_runtime.protocol`),
lowered against the grants (:mod:`lattice_runtime.patch`) and verified in a disposable worktree
(:mod:`lattice_runtime.verify`); only a verified patch reaches the user's tree, through ``git
apply`` after every fingerprint is checked again. Every step is a transition of the
:class:`~lattice_runtime.machine.machine.RunMachine`, persisted as it happens.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from lattice_runtime.compile import TaskIR, compile_task
from lattice_runtime.errors import LatticeError, TaskInvalidError
from lattice_runtime.grants import Binding, GrantRegistry
from lattice_runtime.kernel import ContextKernel
from lattice_runtime.machine.clock import Clock, SystemClock
from lattice_runtime.machine.machine import RunMachine
from lattice_runtime.machine.outcome import Observer, RunOptions, RunOutcome
from lattice_runtime.machine.states import TERMINAL_STATES, RunState
from lattice_runtime.machine.turns import TurnDriver
from lattice_runtime.session import SessionStore
from lattice_runtime.verify import cleanup_stale
from lattice_runtime.workers import Worker

__all__ = ["run_task"]


def run_task(
    repo_root: Path,
    options: RunOptions,
    worker: Worker,
    *,
    clock: Clock | None = None,
    observer: Observer | None = None,
) -> RunOutcome:
    """Run ``options.goal`` on the repository at ``repo_root`` with ``worker``.

    The run always ends in a terminal state (``PASSED``, ``FAILED`` or ``CANCELLED``), and its
    record under ``.lattice/runs/`` says why. Only errors that happen before a run exists
    (the goal does not compile, the directory is not a git repository with a commit) raise.

    Raises:
        TaskInvalidError: The goal is empty or too long, or ``repo_root`` is not the top of a
            git repository with at least one commit.
        SessionNotFoundError: ``options.session_id`` names no session.
        UnsafePathError: ``.lattice`` metadata is a symlink.
    """
    root = _repository_root(repo_root)
    base_commit = _head(root)
    cleanup_stale(root)  # worktrees a crashed run left behind
    sessions = SessionStore(root)
    session = sessions.get(options.session_id) if options.session_id else sessions.current()
    task = compile_task(
        options.goal, root, constraints=options.constraints, risk_floor=session.risk_floor
    )
    machine = RunMachine.start(
        root, task, session_id=session.id, base_commit=base_commit, clock=clock or SystemClock()
    )
    sessions.record_run(session, machine.run_id, task.risk)
    notify = observer or (lambda state, reason: None)
    try:
        return _drive(root, options, worker, task, machine, session.epoch, notify)
    except KeyboardInterrupt:
        _end(machine, RunState.CANCELLED, "interrupted", notify)
        raise
    except LatticeError as exc:  # a stage failed in a way no revision can fix
        _end(machine, RunState.FAILED, f"{exc.code}: {exc.message}", notify)
        return RunOutcome(record=machine.record, task=task)
    except Exception as exc:  # a bug or a broken dependency: the record still says FAILED
        _end(machine, RunState.FAILED, f"internal_error: {type(exc).__name__}: {exc}", notify)
        raise


def _drive(
    root: Path,
    options: RunOptions,
    worker: Worker,
    task: TaskIR,
    machine: RunMachine,
    epoch: int,
    notify: Observer,
) -> RunOutcome:
    def step(state: RunState, reason: str) -> None:
        machine.transition(state, reason)
        notify(state, reason)

    criteria = len(task.acceptance_criteria)
    commands = len(task.allowed_verification_commands)
    step(RunState.COMPILED, f"risk {task.risk}, {criteria} criteria, {commands} commands")
    with ContextKernel.open(root, task, embedder=options.embedder) as kernel:
        step(RunState.INDEXED, f"{len(kernel.index.workspace.files(kernel.index.repo_id))} files")
        binding = Binding(
            task_id=task.id,
            session_id=machine.record.session_id,
            repository_id=kernel.index.repo_id,
            base_commit=machine.record.base_commit,
            epoch=epoch,
        )
        driver = TurnDriver(
            root, options, worker, task, machine, kernel, GrantRegistry(binding), step
        )
        return driver.run()


def _end(machine: RunMachine, state: RunState, reason: str, notify: Observer) -> None:
    if machine.state not in TERMINAL_STATES:
        machine.transition(state, reason)
        notify(state, reason)


def _repository_root(path: Path) -> Path:
    root = path.resolve()
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != root:
        raise TaskInvalidError(
            f"{root} is not the top directory of a git repository",
            hint="Run lattice in (or pass --repo) the repository's top directory.",
        )
    return root


def _head(root: Path) -> str:
    head = _git(root, "rev-parse", "--verify", "HEAD^{commit}")
    if head is None:
        raise TaskInvalidError(
            f"{root} has no commit yet",
            hint="Commit once: edit grants are bound to a base commit.",
        )
    return head


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
