"""The safety suite: 240 deterministic cases in five groups of 48, run on the real code.

:func:`run_safety_suite` builds its own scratch git repositories (in a temporary directory
it removes), runs every group in :data:`~.case.GROUPS` order and returns the cases;
:func:`run_extra_checks` runs the checks beyond the 240 (malformed budget-guard input). No
case re-implements the rule it checks: each calls the runtime (``compile_task``,
``parse_response``, ``lower`` with a ``GrantRegistry``, ``guard_decision``) and compares the
outcome with the one the documented rule calls for. See ``docs/lattice-evidence.md``.
"""

from __future__ import annotations

from typing import Final

from lattice_runtime.evidence._budget_cases import budget_cases, malformed_budget_checks
from lattice_runtime.evidence._lowering_cases import LINES, PATH, lowering_cases
from lattice_runtime.evidence._path_cases import REPOSITORY, path_cases
from lattice_runtime.evidence._protocol_cases import protocol_cases
from lattice_runtime.evidence._risk_cases import risk_cases
from lattice_runtime.evidence._scratch import scratch_repo
from lattice_runtime.evidence.case import GROUP_SIZE, GROUPS, SafetyCase

__all__ = ["SUITE_SIZE", "run_extra_checks", "run_safety_suite"]

SUITE_SIZE: Final = GROUP_SIZE * len(GROUPS)
"""240: the number of cases a complete run has."""


def run_safety_suite() -> tuple[SafetyCase, ...]:
    """Run the 240 cases.

    Returns:
        Every case, grouped in :data:`~.case.GROUPS` order; a failed case is a case with
        ``passed`` false, never an exception.

    Raises:
        subprocess.CalledProcessError: git could not build a scratch repository.
    """
    with scratch_repo(REPOSITORY) as (paths_root, paths_binding):
        risk = risk_cases(paths_root)
        paths = path_cases(paths_root, paths_binding)
    with scratch_repo({PATH: "".join(LINES)}) as (table_root, table_binding):
        lowering = lowering_cases(table_root, table_binding)
    return (*risk, *protocol_cases(), *paths, *lowering, *budget_cases())


def run_extra_checks() -> tuple[SafetyCase, ...]:
    """Run the checks beyond the 240 (not counted, but a failure also blocks the report).

    Returns:
        The budget guard's malformed-input checks.
    """
    return malformed_budget_checks()
