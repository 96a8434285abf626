"""Goal -> TaskIR: criteria, invariants, risk, budget, verification allowlist.

:func:`compile_task` turns a goal and a repository into a frozen :class:`TaskIR`;
:func:`admit` decides whether a worker's suggested verification command may run, and
:func:`default_commands` what runs when it suggests none. Errors derive from
:class:`lattice_runtime.errors.LatticeError` (``TaskInvalidError``, ``CommandNotAllowedError``).
"""

from lattice_runtime.compile.admission import SAFE_PYTEST_FLAGS, admit
from lattice_runtime.compile.allowlist import (
    NON_TERMINATING,
    default_commands,
    discover_allowlist,
    is_verification_name,
)
from lattice_runtime.compile.clauses import acceptance_criteria, extract_invariants, split_clauses
from lattice_runtime.compile.compiler import MAX_GOAL_CHARS, compile_task, task_id
from lattice_runtime.compile.risk import HIGH_RISK_STEMS, classify_risk, raise_risk
from lattice_runtime.compile.task import (
    TASK_SCHEMA_VERSION,
    AcceptanceCriterion,
    Budget,
    Risk,
    Scope,
    TaskIR,
    VerificationCommand,
)

__all__ = [
    "HIGH_RISK_STEMS",
    "MAX_GOAL_CHARS",
    "NON_TERMINATING",
    "SAFE_PYTEST_FLAGS",
    "TASK_SCHEMA_VERSION",
    "AcceptanceCriterion",
    "Budget",
    "Risk",
    "Scope",
    "TaskIR",
    "VerificationCommand",
    "acceptance_criteria",
    "admit",
    "classify_risk",
    "compile_task",
    "default_commands",
    "discover_allowlist",
    "extract_invariants",
    "is_verification_name",
    "raise_risk",
    "split_clauses",
    "task_id",
]
