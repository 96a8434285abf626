"""What a run is asked to do and what it ended with.

:class:`RunOptions` is the input of :func:`~lattice_runtime.machine.loop.run_task`;
:class:`RunOutcome` its answer: the terminal state, the reason, the diff and each
verification command's result, with the run record that was persisted alongside.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lattice_runtime.compile import TaskIR
from lattice_runtime.kernel import Embedder
from lattice_runtime.machine.record import RunRecord
from lattice_runtime.machine.states import RunState
from lattice_runtime.machine.telemetry import TurnRecord
from lattice_runtime.verify import CommandResult

__all__ = ["Observer", "RunOptions", "RunOutcome"]

MAX_REVISIONS = 2
"""Patch revisions a run may use (the contract's limit)."""

Observer = Callable[[RunState, str], None]
"""Called after every transition with the new state and its reason (progress, tests)."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """One run's request.

    Attributes:
        goal: The task in the user's words.
        apply: Apply a verified patch to the user's tree (``False``: stop after verifying).
        session_id: The session to run in (``None``: the current one, made when missing).
        constraints: Extra constraints for the task IR.
        timeout_seconds: Each verification command's deadline (exit 124 when it passes).
        use_cache: Reuse (and keep) a verified patch for the same task on byte-identical code
            (opt-in; see :mod:`.cache`).
        embedder: How the context kernel ranks (``static``: hybrid with the packaged static
            embedder; ``off``: keyword only; ``minilm``).
    """

    goal: str
    apply: bool = True
    session_id: str | None = None
    constraints: tuple[str, ...] = ()
    timeout_seconds: float = 300.0
    use_cache: bool = False
    embedder: Embedder = "static"


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How a run ended.

    Attributes:
        record: The run record as persisted (state, transitions, telemetry).
        task: The compiled task.
        diff: The verified patch as ``git diff`` text (empty when none was verified).
        applied: The patch was applied to the user's tree.
        verification: The last transaction's command results.
        refused_commands: Commands the worker suggested that are not on the allowlist (never
            run), each ``<command>: <why>``.
    """

    record: RunRecord
    task: TaskIR
    diff: str = ""
    applied: bool = False
    verification: tuple[CommandResult, ...] = ()
    refused_commands: tuple[str, ...] = ()

    @property
    def state(self) -> RunState:
        """The terminal state."""
        return self.record.state

    @property
    def passed(self) -> bool:
        """The run ended in ``PASSED``."""
        return self.record.state is RunState.PASSED

    @property
    def reason(self) -> str:
        """Why it ended there."""
        return self.record.outcome_reason or ""

    def to_wire(self) -> dict[str, object]:
        """The camelCase JSON form (``lattice run --json``)."""
        telemetry = self.record.telemetry
        return {
            "runId": self.record.run_id,
            "state": self.record.state.value,
            "reason": self.reason,
            "sessionId": self.record.session_id,
            "baseCommit": self.record.base_commit,
            "task": self.task.to_wire(),
            "applied": self.applied,
            "diff": self.diff,
            "verification": [
                {
                    "command": result.command.display,
                    "exitCode": result.exit_code,
                    "durationSeconds": round(result.duration_seconds, 3),
                    "timedOut": result.timed_out,
                    "outputTail": result.output_tail,
                }
                for result in self.verification
            ],
            "refusedCommands": list(self.refused_commands),
            "transitions": [
                {"from": t.from_state.value, "to": t.to_state.value, "reason": t.reason, "at": t.at}
                for t in self.record.transitions
            ],
            "telemetry": {
                "turns": len(telemetry.turns),
                "tokensPerTurn": list(telemetry.tokens_per_turn),
                "contextFaults": telemetry.context_faults,
                "pagesGranted": telemetry.pages_granted,
                "grantsIssued": telemetry.grants_issued,
                "usage": _usage_totals(telemetry.turns),
            },
        }


def _usage_totals(turns: tuple[TurnRecord, ...]) -> dict[str, int | float | None] | None:
    # Provider-reported usage summed over the run's turns (None when no turn reported any).
    reported = [turn.usage for turn in turns if turn.usage is not None]
    if not reported:
        return None
    costs = [usage.cost_usd for usage in reported]
    return {
        "inputTokens": sum(usage.input_tokens for usage in reported),
        "cachedInputTokens": sum(usage.cached_input_tokens for usage in reported),
        "cacheWriteTokens": sum(usage.cache_write_tokens for usage in reported),
        "outputTokens": sum(usage.output_tokens for usage in reported),
        "reasoningTokens": sum(usage.reasoning_tokens for usage in reported),
        "costUsd": None if None in costs else sum(cost or 0.0 for cost in costs),
    }
