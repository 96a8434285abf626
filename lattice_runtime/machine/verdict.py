"""The verification step of a run: which commands run, what they said, what to tell the worker.

Helpers of :mod:`.engine` for the part between a lowered patch and the verdict: the worker's
suggested commands go through the allowlist (refused ones never run; with none admitted, the
task's default commands run), each result is recorded in the run's telemetry, and a failure
becomes the feedback of the next ``PATCH_REVISION`` turn.
"""

from __future__ import annotations

from pathlib import Path

from lattice_runtime.compile import TaskIR, VerificationCommand, admit, default_commands
from lattice_runtime.errors import CommandNotAllowedError, LoweringError
from lattice_runtime.kernel import ContextGrant
from lattice_runtime.machine.machine import RunMachine
from lattice_runtime.machine.telemetry import VerificationRecord
from lattice_runtime.patch import PatchIR
from lattice_runtime.verify import TransactionResult

__all__ = [
    "admitted_commands",
    "granted_summary",
    "lowering_feedback",
    "patch_summary",
    "record_results",
    "verification_feedback",
]


def admitted_commands(
    task: TaskIR, root: Path, suggested: tuple[str, ...]
) -> tuple[tuple[VerificationCommand, ...], tuple[str, ...]]:
    """The commands to run for ``suggested``, and the refused ones (``<command>: <why>``)."""
    admitted: list[VerificationCommand] = []
    refused: list[str] = []
    for command in suggested:
        try:
            admitted.append(admit(command, task, root))
        except CommandNotAllowedError as exc:
            refused.append(f"{command[:200]}: {exc.message}")
    unique = tuple(dict.fromkeys(admitted))
    return unique or default_commands(task), tuple(refused)


def record_results(machine: RunMachine, result: TransactionResult) -> str:
    """Record each command's result in the run's telemetry; return a one-line summary."""
    for item in result.results:
        machine.record_verification(
            VerificationRecord(
                command=item.command.display,
                exit_code=item.exit_code,
                duration_seconds=item.duration_seconds,
                timed_out=item.timed_out,
            )
        )
    summary = ", ".join(f"{r.command.display} -> {r.exit_code}" for r in result.results)
    return summary or "no command ran"


def granted_summary(grant: ContextGrant) -> str:
    """``N pages, T tokens[, R refused]`` (a transition reason)."""
    refused = f", {len(grant.refused)} refused" if grant.refused else ""
    return f"{len(grant.pages)} pages, {grant.page_tokens} tokens{refused}"


def patch_summary(patch: PatchIR) -> str:
    """``modify a.py, create b.py`` (a transition reason)."""
    return ", ".join(f"{change.action} {change.path}" for change in patch.changes)


def lowering_feedback(exc: LoweringError) -> str:
    """What a ``PATCH_REVISION`` turn after a lowering refusal tells the worker."""
    return f"The patch was refused before anything ran: {exc.reason}: {exc.message}\n{exc.hint}"


def verification_feedback(result: TransactionResult) -> str:
    """What a ``PATCH_REVISION`` turn after failed verification tells the worker."""
    lines = ["The patch applied in an isolated worktree, but verification failed:"]
    for item in result.results:
        status = "timed out (exit 124)" if item.timed_out else f"exit {item.exit_code}"
        lines.append(f"$ {item.command.display}  -> {status}")
        if not item.passed:
            lines.append(item.output_tail[-2000:])
    return "\n".join(lines)
