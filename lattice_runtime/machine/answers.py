"""Checking an answer without acting on it (``lattice handoff validate``).

An answer is parsed by the protocol's one reader and, when it is a patch, lowered against the
run's grant registry as read from disk (digest checked), with the run's own binding. Nothing
is written: no transition, no registry update, no worktree. What would happen on ``continue``
is reported, or the first rule the answer breaks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lattice_runtime._files import lattice_dir
from lattice_runtime.grants import GrantRegistry
from lattice_runtime.machine.engine_state import load_state
from lattice_runtime.patch import lower
from lattice_runtime.protocol import ContextRequest, parse_response

__all__ = ["AnswerCheck", "check_answer"]


@dataclass(frozen=True, slots=True)
class AnswerCheck:
    """A valid answer.

    Attributes:
        kind: ``context_request`` or ``patch``.
        summary: What it asks for, or the files the patch changes.
    """

    kind: str
    summary: str


def check_answer(repo_root: Path, run_id: str, raw: str) -> AnswerCheck:
    """Parse ``raw`` and lower it (a patch) against run ``run_id``'s grants; write nothing.

    Raises:
        SessionError: The run has no resumable state.
        ProtocolViolation: The answer breaks the protocol (with its reason).
        LoweringError: The patch breaks a grant rule (with its reason code).
    """
    root = repo_root.resolve()
    state = load_state(root, run_id)
    response = parse_response(raw).response
    if isinstance(response, ContextRequest):
        asked = ", ".join(item.path_hint or item.symbol or "" for item in response.requests)
        return AnswerCheck("context_request", f"asks for {asked}")
    registry = GrantRegistry.load(lattice_dir(root) / "grants" / f"{run_id}.json")
    patch = lower(response, registry, state.binding, root)
    changes = ", ".join(f"{change.action} {change.path}" for change in patch.changes)
    return AnswerCheck("patch", f"lowers cleanly: {changes}")
