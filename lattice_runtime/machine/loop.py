"""The run loop: one task from goal to verdict with a worker that answers in process.

compile -> index -> grant context -> worker turn -> normalize -> validate -> (context fault ->
grant more) | (lower -> worktree transaction -> verify) -> passed | revision (at most 2) |
failed. :func:`run_task` drives a :class:`~lattice_runtime.machine.engine.RunEngine` with a
worker that answers each turn right away (the mock, a command, a provider SDK); workers that
answer later (a manual handoff, an agent on the MCP tools) drive the same engine step by step.
"""

from __future__ import annotations

from pathlib import Path

from lattice_runtime.errors import LatticeError
from lattice_runtime.machine.engine import RunEngine
from lattice_runtime.machine.journaling import Answered, note_answer, note_begin, verifications
from lattice_runtime.machine.outcome import Observer, RunOptions, RunOutcome
from lattice_runtime.session import Journal
from lattice_runtime.workers import Worker
from lattice_runtime.workers.providers.usage import ProviderUsage

__all__ = ["run_task"]


def run_task(
    repo_root: Path,
    options: RunOptions,
    worker: Worker,
    *,
    observer: Observer | None = None,
    journal: Journal | None = None,
) -> RunOutcome:
    """Run ``options.goal`` on the repository at ``repo_root`` with ``worker``.

    The run always ends in a terminal state (``PASSED``, ``FAILED`` or ``CANCELLED``), and its
    record under ``.lattice/runs/`` says why. Only errors that happen before a run exists
    (the goal does not compile, the directory is not a git repository with a commit) raise.
    With a ``journal`` the run's steps are also recorded in its session's journal (the
    accepted task, grants issued, patches proposed, verification outcomes).

    Raises:
        TaskInvalidError: The goal is empty or too long, or ``repo_root`` is not the top of a
            git repository with at least one commit.
        SessionNotFoundError: ``options.session_id`` names no session.
        UnsafePathError: ``.lattice`` metadata is a symlink.
    """
    with RunEngine.begin(repo_root, options, worker=worker.name, observer=observer) as engine:
        try:
            turn = engine.next_turn()
            if journal is not None:
                note_begin(journal, engine, turn)
            while turn is not None:
                try:
                    raw = worker.respond(turn)
                except LatticeError as exc:  # the worker cannot answer: no revision helps
                    engine.fail(f"{exc.code}: {exc.message}")
                    break
                known = {page.handle for page in turn.pages}
                checked = verifications(engine)
                usage = getattr(worker, "last_usage", None)  # provider workers report it
                engine.submit(raw, usage if isinstance(usage, ProviderUsage) else None)
                turn = engine.next_turn()
                if journal is not None:
                    answered = Answered(raw, _was_patch(engine), checked, turn, known)
                    note_answer(journal, engine, answered)
        except KeyboardInterrupt:
            engine.cancel("interrupted")
            raise
        return engine.outcome()


def _was_patch(engine: RunEngine) -> bool:
    # The engine already parsed the answer; its turn record says what it was.
    turns = engine.outcome().record.telemetry.turns
    return bool(turns) and turns[-1].outcome == "patch"
