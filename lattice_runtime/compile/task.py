"""The task IR (schema version 2): what a goal compiles to, before any model sees it.

The IR is a frozen value: the run machine, the context kernel and the transaction read it,
nothing changes it. Its wire form (:meth:`TaskIR.to_wire`) is the camelCase JSON a run
record and ``lattice run --json`` carry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "TASK_SCHEMA_VERSION",
    "AcceptanceCriterion",
    "Budget",
    "Risk",
    "Scope",
    "TaskIR",
    "VerificationCommand",
]

TASK_SCHEMA_VERSION: Final = 2

Risk = Literal["low", "medium", "high"]
"""How careful the run must be; compiled from the goal and never downgraded."""


@dataclass(frozen=True, slots=True)
class AcceptanceCriterion:
    """One clause of the goal the patch must satisfy.

    Attributes:
        id: ``ac-1``, ``ac-2``, ... in goal order.
        text: The clause, trimmed.
    """

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class Scope:
    """Which repository paths the task may read and change (git-style globs).

    Attributes:
        include: Globs a path must match (empty: every path).
        exclude: Globs that take a path out again.
    """

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Budget:
    """The task's limits on context and model work.

    Attributes:
        context_tokens: Most tokens of pages granted over the whole run.
        pages: Most pages granted over the whole run.
        context_faults: Most context requests served.
        model_turns: Most worker turns (repairs and revisions included).
    """

    context_tokens: int = 12_000
    pages: int = 20
    context_faults: int = 3
    model_turns: int = 4


@dataclass(frozen=True, slots=True)
class VerificationCommand:
    """A command the runtime may run to verify a patch; never a shell string.

    Attributes:
        argv: The program and its arguments, run without a shell.
        origin: Where the allowlist found it (``builtin``, ``Makefile``, ``package.json``,
            ``pyproject.toml``, ``tox.ini``, ``noxfile.py``).
    """

    argv: tuple[str, ...]
    origin: str = "builtin"

    @property
    def display(self) -> str:
        """The command as one line (for reports; never executed through a shell)."""
        return " ".join(self.argv)


@dataclass(frozen=True, slots=True)
class TaskIR:
    """A compiled task.

    Attributes:
        id: Stable task id (``task-`` + 12 hex digits of the goal and repository).
        goal: The goal as the user wrote it.
        constraints: Extra constraints the user passed.
        invariants: The goal's "do not ..." and "preserve ..." phrases.
        acceptance_criteria: The goal split into clauses.
        risk: ``low``, ``medium`` or ``high``.
        scope: Paths the task may touch.
        budget: Context and turn limits.
        allowed_verification_commands: The allowlist found in the repository.
        schema_version: Always :data:`TASK_SCHEMA_VERSION`.
    """

    id: str
    goal: str
    constraints: tuple[str, ...] = ()
    invariants: tuple[str, ...] = ()
    acceptance_criteria: tuple[AcceptanceCriterion, ...] = ()
    risk: Risk = "medium"
    scope: Scope = field(default_factory=Scope)
    budget: Budget = field(default_factory=Budget)
    allowed_verification_commands: tuple[VerificationCommand, ...] = ()
    schema_version: int = TASK_SCHEMA_VERSION

    def to_wire(self) -> dict[str, object]:
        """The camelCase JSON form (schema version 2)."""
        return {
            "schemaVersion": self.schema_version,
            "id": self.id,
            "goal": self.goal,
            "constraints": list(self.constraints),
            "invariants": list(self.invariants),
            "acceptanceCriteria": [{"id": c.id, "text": c.text} for c in self.acceptance_criteria],
            "risk": self.risk,
            "scope": {"include": list(self.scope.include), "exclude": list(self.scope.exclude)},
            "budget": {
                "contextTokens": self.budget.context_tokens,
                "pages": self.budget.pages,
                "contextFaults": self.budget.context_faults,
                "modelTurns": self.budget.model_turns,
            },
            "allowedVerificationCommands": [c.display for c in self.allowed_verification_commands],
        }
