"""The run machine: the current state of one run, moved only along the allowed edges.

:class:`RunMachine` knows nothing about workers, grants or worktrees: the run loop
(``machine/loop.py``) does the work and tells the machine where the run is. The machine refuses
any edge :data:`~lattice_runtime.machine.states.ALLOWED_TRANSITIONS` does not list, stamps each
transition with the injected clock, and, when it has a repository, writes the run record after
every transition and every telemetry update, before the new state becomes visible.
"""

from __future__ import annotations

import secrets
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

from lattice_runtime.compile.task import TaskIR
from lattice_runtime.errors import IllegalTransitionError
from lattice_runtime.machine.clock import Clock, SystemClock, iso_utc
from lattice_runtime.machine.record import (
    Entropy,
    RunRecord,
    Transition,
    check_run_id,
    new_run_id,
)
from lattice_runtime.machine.runs import load_run, save_run
from lattice_runtime.machine.states import ALLOWED_TRANSITIONS, RunState
from lattice_runtime.machine.telemetry import (
    ProtocolDiagnostic,
    RunTelemetry,
    TurnRecord,
    VerificationRecord,
)

__all__ = ["RunMachine"]


class RunMachine:
    """One run's state, transitions and telemetry.

    Args:
        run_id: The run's id (see :func:`~lattice_runtime.machine.record.new_run_id`).
        clock: Where transition times come from (the system clock by default).
        repo_root: The repository whose ``.lattice/runs/`` keeps the record; ``None`` keeps
            the record in memory only.
        task: The compiled task the run works on.
        session_id: The session the run belongs to.
        base_commit: The commit the run's grants are bound to.

    Raises:
        UnsafePathError: ``run_id`` is not a run id, or the record cannot be written safely.
    """

    def __init__(
        self,
        run_id: str,
        clock: Clock | None = None,
        *,
        repo_root: Path | None = None,
        task: TaskIR | None = None,
        session_id: str = "",
        base_commit: str = "",
    ) -> None:
        self._clock: Clock = clock or SystemClock()
        self._repo_root = repo_root
        self._record = RunRecord(
            run_id=check_run_id(run_id),
            task=MappingProxyType(task.to_wire() if task is not None else {}),
            session_id=session_id,
            base_commit=base_commit,
            started_at=iso_utc(self._clock.now()),
        )
        self._commit(self._record)

    @classmethod
    def start(
        cls,
        repo_root: Path,
        task: TaskIR,
        *,
        session_id: str = "",
        base_commit: str = "",
        clock: Clock | None = None,
        entropy: Entropy = secrets.token_bytes,
    ) -> RunMachine:
        """Create a run with a fresh id in ``CREATED`` and write its first record.

        Raises:
            UnsafePathError: The record cannot be written safely.
        """
        clock = clock or SystemClock()
        return cls(
            new_run_id(clock.now(), entropy),
            clock,
            repo_root=repo_root,
            task=task,
            session_id=session_id,
            base_commit=base_commit,
        )

    @classmethod
    def resume(cls, repo_root: Path, run_id: str, clock: Clock | None = None) -> RunMachine:
        """Pick a run up from its record on disk (to end a run a crash left behind, say).

        Raises:
            UnsafePathError: ``run_id`` is not a run id, or the record is a symlink.
            LatticeError: No record of that run exists, or the file is not a run record.
        """
        machine = cls.__new__(cls)
        machine._clock = clock or SystemClock()
        machine._repo_root = repo_root
        machine._record = load_run(repo_root, run_id)
        return machine

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self._record.run_id

    @property
    def state(self) -> RunState:
        """The state the run is in."""
        return self._record.state

    @property
    def record(self) -> RunRecord:
        """A snapshot of the whole record (what is on disk when the run has a repository)."""
        return self._record

    @property
    def telemetry(self) -> RunTelemetry:
        """What the run has counted so far."""
        return self._record.telemetry

    def can_transition(self, to: RunState) -> bool:
        """Return whether the run may move to ``to`` from where it is."""
        return to in ALLOWED_TRANSITIONS[self.state]

    def transition(self, to: RunState, reason: str) -> Transition:
        """Move the run to ``to`` and record why.

        Entering ``PASSED``, ``FAILED`` or ``CANCELLED`` also sets the record's outcome reason
        and end time.

        Raises:
            IllegalTransitionError: The graph has no edge from the current state to ``to``
                (nothing leaves a terminal state), or ``reason`` is blank.
            UnsafePathError: The record cannot be written safely; the run stays where it was.
        """
        source = self.state
        if not self.can_transition(to):
            allowed = ", ".join(sorted(ALLOWED_TRANSITIONS[source])) or "nothing (terminal)"
            raise IllegalTransitionError(
                f"run {self.run_id} cannot go from {source} to {to}",
                hint=f"From {source} the run may go to: {allowed}.",
            )
        if not reason.strip():
            raise IllegalTransitionError(
                f"the transition {source} -> {to} has no reason",
                hint="Say why the run moves (a reason code where one exists).",
            )
        step = Transition(source, to, reason, iso_utc(self._clock.now()))
        ended = to.terminal
        self._commit(
            replace(
                self._record,
                state=to,
                transitions=(*self._record.transitions, step),
                outcome_reason=reason if ended else None,
                ended_at=step.at if ended else None,
            )
        )
        return step

    def record_turn(self, turn: TurnRecord) -> None:
        """Add a worker turn to the telemetry (and persist it).

        Raises:
            UnsafePathError: The record cannot be written safely.
        """
        self._tally(self.telemetry.with_turn(turn))

    def record_fault(self) -> None:
        """Count one context fault served (and persist it).

        Raises:
            UnsafePathError: The record cannot be written safely.
        """
        self._tally(self.telemetry.with_fault())

    def record_pages(self, count: int) -> None:
        """Count ``count`` more pages granted (and persist it).

        Raises:
            ValueError: ``count`` is negative.
            UnsafePathError: The record cannot be written safely.
        """
        self._tally(self.telemetry.with_pages(count))

    def record_grants(self, count: int) -> None:
        """Count ``count`` more edit handles issued (and persist it).

        Raises:
            ValueError: ``count`` is negative.
            UnsafePathError: The record cannot be written safely.
        """
        self._tally(self.telemetry.with_grants(count))

    def record_verification(self, result: VerificationRecord) -> None:
        """Add a verification command's result (and persist it).

        Raises:
            UnsafePathError: The record cannot be written safely.
        """
        self._tally(self.telemetry.with_verification(result))

    def record_diagnostic(self, diagnostic: ProtocolDiagnostic) -> None:
        """Add a protocol diagnostic (and persist it).

        Raises:
            UnsafePathError: The record cannot be written safely.
        """
        self._tally(self.telemetry.with_diagnostic(diagnostic))

    def _tally(self, telemetry: RunTelemetry) -> None:
        self._commit(replace(self._record, telemetry=telemetry))

    def _commit(self, record: RunRecord) -> None:
        # Disk first: if the write is refused, the machine stays where its record says it is.
        if self._repo_root is not None:
            save_run(self._repo_root, record)
        self._record = record
