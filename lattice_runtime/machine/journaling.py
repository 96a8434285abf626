"""What a run's driver records in the session journal about the run's steps.

The engine is left as it is: after each step the driver (``run_task``, the MCP tasks) reads
what the engine exposes (the run record's session, the task, the turn's pages, the last
verification) and appends the journal entries of what the runtime itself saw: the accepted
task, grants issued, patches proposed and verification outcomes.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from lattice_runtime.machine.engine import RunEngine
from lattice_runtime.machine.states import RunState
from lattice_runtime.session import (
    GrantIssued,
    Journal,
    PatchProposed,
    VerificationOutcome,
    sha256_text,
)
from lattice_runtime.workers import WorkerTurn

__all__ = ["Answered", "note_answer", "note_begin", "verifications"]


@dataclass(frozen=True, slots=True)
class Answered:
    """One answered turn, as the journal notes it.

    Attributes:
        raw: The answer's raw text.
        proposal: It was offered as a patch (``lattice_propose``, or a worker's patch answer).
        verified_before: How many times the run had entered ``VERIFYING`` before the answer.
        after: The next turn (``None`` once the run ended).
        known: Handles the worker had before the answer.
    """

    raw: str
    proposal: bool
    verified_before: int
    after: WorkerTurn | None
    known: Collection[str]


def verifications(engine: RunEngine) -> int:
    """How many times the run entered ``VERIFYING`` (a new one means a verification ran)."""
    transitions = engine.outcome().record.transitions
    return sum(1 for step in transitions if step.to_state is RunState.VERIFYING)


def note_begin(journal: Journal, engine: RunEngine, turn: WorkerTurn | None) -> None:
    """Record the task a run accepted and the handles of its first turn."""
    session_id = engine.outcome().record.session_id
    journal.accept_task(session_id, engine.run_id, engine.task)
    _granted(journal, session_id, engine.run_id, turn, ())


def note_answer(journal: Journal, engine: RunEngine, answered: Answered) -> None:
    """Record a proposal, the verification it led to, and any new handles."""
    outcome = engine.outcome()
    session_id = outcome.record.session_id
    if answered.proposal:
        journal.append(session_id, PatchProposed(engine.run_id, sha256_text(answered.raw)))
    if verifications(engine) > answered.verified_before:
        passed = engine.state is RunState.PASSED
        journal.append(session_id, VerificationOutcome(engine.run_id, engine.state.value, passed))
    _granted(journal, session_id, engine.run_id, answered.after, answered.known)


def _granted(
    journal: Journal,
    session_id: str,
    run_id: str,
    turn: WorkerTurn | None,
    known: Collection[str],
) -> None:
    handles = tuple(p.handle for p in (turn.pages if turn else ()) if p.handle not in known)
    if handles:
        journal.append(session_id, GrantIssued(run_id, handles))
