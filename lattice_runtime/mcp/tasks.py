"""The tasks an MCP server drives: one repository, each task's latest run, one call at a time.

A server is started for one repository. ``lattice_begin`` starts a run there
(:meth:`RunEngine.begin` with ``apply=False``) and points the task id at it in
``.lattice/mcp/<taskId>.json``; every later call reads that pointer and takes the run up with
:meth:`RunEngine.resume`, so a call may come from any client of any server process of the
repository. Each call leaves a live run waiting for an answer to one turn. The tools never
write to the repository themselves: answers go through the run machine like any worker's,
and only ``lattice_apply`` writes, through :meth:`RunEngine.apply`.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from lattice_runtime._files import LATTICE_DIR, atomic_write, lattice_dir
from lattice_runtime.compile import compile_task
from lattice_runtime.control import ExplicitControl
from lattice_runtime.errors import (
    ProtocolError,
    SessionError,
    TaskInvalidError,
    UnsafePathError,
)
from lattice_runtime.kernel import Embedder
from lattice_runtime.machine import RunEngine, RunOptions, check_run_id, list_runs
from lattice_runtime.machine.journaling import Answered, note_answer, note_begin, verifications
from lattice_runtime.mcp.views import (
    apply_result,
    begin_result,
    patch_paths,
    stats_result,
    status_result,
    turn_result,
)
from lattice_runtime.mcp.wire import (
    ApplyResult,
    BeginResult,
    ContextItem,
    StatsResult,
    StatusResult,
    TurnResult,
)
from lattice_runtime.protocol import MAX_ITEMS
from lattice_runtime.session import Journal

__all__ = ["POINTER_DIR", "TASK_ID_PATTERN", "LatticeTasks"]

POINTER_DIR: Final = "mcp"
TASK_ID_PATTERN: Final = re.compile(r"task-[0-9a-f]{12}")
_BEGIN_FIRST: Final = "Call lattice_begin with the task; it answers the taskId to use."


class LatticeTasks:
    """The runs of one repository as the MCP tools see them (one call at a time)."""

    def __init__(
        self,
        repo_root: Path,
        *,
        embedder: Embedder = "static",
        timeout_seconds: float = 300.0,
        journal: Journal | None = None,
    ) -> None:
        """Serve ``repo_root`` (resolved); runs rank with ``embedder``, commands time out.

        With a ``journal`` (control mode not ``off``) each run step is also recorded in its
        session's journal: the accepted task, grants issued, patches proposed, verification.
        """
        self.root = repo_root.resolve()
        self._journal = journal
        self._embedder: Embedder = embedder
        self._timeout = timeout_seconds
        self._lock = threading.Lock()  # the SDK runs sync tools in threads: one run step at once
        self.control: ExplicitControl | None = None

    def check_repo(self, repo: str | None) -> None:
        """Refuse a ``repo`` argument that names anything but the served repository.

        Raises:
            UnsafePathError: ``repo`` resolves to another directory.
        """
        if repo is None or repo == "":
            return
        given = Path(repo).expanduser()
        resolved = (given if given.is_absolute() else self.root / given).resolve()
        if resolved != self.root:
            raise UnsafePathError(
                f"this server serves {self.root}, not {repo[:200]}",
                hint="Omit repo, or start a `lattice mcp --repo DIR` server for that repository.",
            )

    def begin(self, goal: str) -> BeginResult:
        """Start a run of ``goal`` and hand out its first turn.

        Raises:
            TaskInvalidError: The goal does not compile (nothing is written).
            LatticeError: The repository cannot be indexed or its metadata written.
        """
        compile_task(goal, self.root)  # a goal that cannot compile is refused before any write
        options = RunOptions(
            goal=goal, apply=False, timeout_seconds=self._timeout, embedder=self._embedder
        )
        with self._lock, RunEngine.begin(self.root, options, worker="mcp") as engine:
            self._point(engine.task.id, engine.run_id)
            turn = engine.next_turn()
            if self._journal is not None:
                note_begin(self._journal, engine, turn)
            return begin_result(engine, turn)

    def request_context(self, task_id: str, requests: list[ContextItem]) -> TurnResult:
        """Answer the waiting turn with a context request; return the next turn's new pages.

        Raises:
            ProtocolError: A request has neither ``pathHint`` nor ``symbol`` (nothing sent).
            TaskInvalidError: No run of ``task_id`` began here.
            SessionError: The run ended; it awaits no answer.
        """
        _check_requests(requests)
        wire = [item.model_dump(by_alias=True, exclude_none=True) for item in requests]
        raw = json.dumps({"kind": "context_request", "requests": wire})
        return self._answer(task_id, raw, proposal=False)

    def propose(self, task_id: str, response: str) -> TurnResult:
        """Answer the waiting turn with ``response`` (raw protocol-v5 JSON text).

        Raises:
            TaskInvalidError: No run of ``task_id`` began here.
            SessionError: The run ended; it awaits no answer.
        """
        return self._answer(task_id, response, proposal=True)

    def attach_control(self, control: ExplicitControl) -> None:
        """Guard every apply with ``control`` (explicit mode): each needs a one-use receipt."""
        self.control = control

    def apply(self, task_id: str, receipt: str | None = None) -> ApplyResult:
        """Write the passed run's verified patch to the working tree.

        Under explicit control ``receipt`` is consumed before anything else is checked.

        Raises:
            TaskInvalidError: No run of ``task_id`` began here.
            SessionError: The run did not pass, or its patch is applied already.
            StaleFileError: A file changed since its grant; nothing was written.
            ControlError: Explicit control refused the attempt (no, used or stale receipt).
        """
        if self.control is None:
            with self._lock, self._engine(task_id) as engine:
                engine.apply()
                return apply_result(engine)
        arguments = {"taskId": task_id}
        targets = functools.partial(self._patch_targets, task_id)  # found after consuming
        with (
            self._lock,
            self.control.guarded(receipt, "lattice_apply", arguments, targets),
            self._engine(task_id) as engine,
        ):
            engine.apply()
            return apply_result(engine)

    def patch_targets(self, task_id: str) -> list[str]:
        """The paths the task's latest run's patch touches (none before a patch passed).

        Raises:
            TaskInvalidError: No run of ``task_id`` began here.
        """
        with self._lock:
            return self._patch_targets(task_id)

    def _patch_targets(self, task_id: str) -> list[str]:
        with self._engine(task_id) as engine:
            return patch_paths(engine.outcome().diff)

    def status(self, task_id: str) -> StatusResult:
        """The run's state, transitions and telemetry, with its waiting turn (all pages).

        Raises:
            TaskInvalidError: No run of ``task_id`` began here.
        """
        with self._lock, self._engine(task_id) as engine:
            turn = engine.next_turn() if engine.awaiting else None  # awaiting: changes nothing
            return status_result(engine, turn)

    def stats(self) -> StatsResult:
        """Totals over every run recorded under ``.lattice/runs/``.

        Raises:
            LatticeError: A run record cannot be read.
        """
        with self._lock:
            return stats_result(list_runs(self.root))

    # -- the task pointer and the engine -------------------------------------------------

    def _answer(self, task_id: str, raw: str, *, proposal: bool) -> TurnResult:
        with self._lock, self._engine(task_id) as engine:
            before = engine.next_turn()  # the waiting turn (handed out again, or now)
            if before is None:
                raise SessionError(
                    f"the run {engine.run_id} of {task_id} ended {engine.state.value}: "
                    f"{_last_reason(engine)}",
                    hint="Call lattice_status to see why, or lattice_begin to start a new run.",
                )
            checked = verifications(engine)
            engine.submit(raw)
            after = engine.next_turn()
            known = {page.handle for page in before.pages}
            if self._journal is not None:
                note_answer(self._journal, engine, Answered(raw, proposal, checked, after, known))
            return turn_result(engine, after, known=known)

    @contextmanager
    def _engine(self, task_id: str) -> Iterator[RunEngine]:
        run_id = self._pointed(task_id)
        with RunEngine.resume(self.root, run_id) as engine:
            yield engine

    def _point(self, task_id: str, run_id: str) -> None:
        data = json.dumps({"taskId": task_id, "runId": run_id}, sort_keys=True)
        path = lattice_dir(self.root) / POINTER_DIR / _file_name(task_id)
        atomic_write(path, f"{data}\n".encode(), root=self.root)

    def _pointed(self, task_id: str) -> str:
        # Read without making .lattice/: a bad or unknown task id writes nothing.
        directory = self.root / LATTICE_DIR
        path = directory / POINTER_DIR / _file_name(task_id)
        if any(p.is_symlink() for p in (directory, path.parent, path)):
            raise UnsafePathError(f"{path} lies behind a symlink; refusing to read through it")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise TaskInvalidError(
                f"no run of {task_id} began in {self.root}", hint=_BEGIN_FIRST
            ) from None
        except ValueError:
            data = None
        run_id = data.get("runId") if isinstance(data, dict) else None
        if not isinstance(run_id, str):
            raise TaskInvalidError(f"{path} is damaged", hint=_BEGIN_FIRST)
        return check_run_id(run_id)


def _file_name(task_id: str) -> str:
    if not TASK_ID_PATTERN.fullmatch(task_id):
        raise TaskInvalidError(
            f"{task_id[:80]!r} is not a task id (task- and 12 hex digits)", hint=_BEGIN_FIRST
        )
    return f"{task_id}.json"


def _check_requests(requests: list[ContextItem]) -> None:
    if not requests or len(requests) > MAX_ITEMS:
        raise ProtocolError(
            f"{len(requests)} requests; between 1 and {MAX_ITEMS} are allowed",
            reason="schema",
            repairable=True,
            hint="Ask for the few paths or symbols you need most.",
        )
    for number, item in enumerate(requests, 1):
        if not (item.path_hint or item.symbol):
            raise ProtocolError(
                f"request {number} has neither pathHint nor symbol",
                reason="schema",
                repairable=True,
                hint="Give each request a pathHint (a path or part of one) and/or a symbol.",
            )


def _last_reason(engine: RunEngine) -> str:
    transitions = engine.outcome().record.transitions
    return transitions[-1].reason if transitions else ""
