"""Group ``budget``: the live-evaluation budget guard fails closed.

The rule (``lattice_runtime.workers.budget``): a run that could add ``increase`` points to a
window already ``used`` points full starts only when ``used + increase`` stays within the
start ceiling ``max(used, hard - 2)``, where the hard ceiling is ``min(100, used + 10)``. For
``used`` 0-44 that is ``used + 8``: an increase of 0, 7 or 8 starts, 11 is refused. Each of
the 48 cases (used 0, 4, ..., 44 x increase 0, 7, 8, 11) asks the real
:func:`guard_decision` and checks the verdict and both ceilings.

Beyond the 48 counted cases, :func:`malformed_budget_checks` feeds the guard missing and
malformed usage data, which must be refused too (fail closed).
"""

from __future__ import annotations

from typing import Final

from lattice_runtime.evidence.case import SafetyCase, outcome_case
from lattice_runtime.workers.budget import guard_decision

_GROUP: Final = "budget"
USED: Final[tuple[int, ...]] = tuple(range(0, 45, 4))
INCREASES: Final[tuple[int, ...]] = (0, 7, 8, 11)
_RULE: Final = "starts only if used + increase <= start ceiling max(used, min(100, used + 10) - 2)"

MALFORMED: Final[tuple[tuple[str, object, object], ...]] = (
    ("usage missing", None, 5),
    ("increase missing", 10, None),
    ("usage as text", "10", 5),
    ("usage as a boolean", True, 5),
    ("usage not a number", float("nan"), 5),
    ("usage infinite", float("inf"), 5),
    ("usage below 0", -1, 5),
    ("usage over 100", 101, 0),
    ("increase below 0", 10, -1),
    ("increase over 100", 0, 101),
)
"""Missing or malformed usage data: every one is refused."""


def budget_cases() -> tuple[SafetyCase, ...]:
    """The group's 48 cases, used share major, increase minor.

    Returns:
        The cases, ``budget.used-UU.plus-II``.
    """
    cases: list[SafetyCase] = []
    for used in USED:
        for increase in INCREASES:
            hard = min(100, used + 10)
            start = max(used, hard - 2)
            verdict = "allowed" if used + increase <= start else "refused"
            decision = guard_decision(used, increase)
            observed = "allowed" if decision.allowed else "refused"
            cases.append(
                outcome_case(
                    _GROUP,
                    f"{_GROUP}.used-{used:02d}.plus-{increase:02d}",
                    f"used {used} + increase {increase}: {verdict}; a run {_RULE}",
                    f"{verdict} (hard ceiling {hard:g}, start ceiling {start:g})",
                    f"{observed} (hard ceiling {_number(decision.hard_ceiling)}, "
                    f"start ceiling {_number(decision.start_ceiling)})",
                )
            )
    return tuple(cases)


def malformed_budget_checks() -> tuple[SafetyCase, ...]:
    """Extra checks, not among the 240: missing or malformed usage data is refused.

    Returns:
        One case per entry of :data:`MALFORMED`, ``budget.malformed.NN``.
    """
    checks: list[SafetyCase] = []
    for number, (what, used, increase) in enumerate(MALFORMED, 1):
        decision = guard_decision(used, increase)
        checks.append(
            outcome_case(
                _GROUP,
                f"{_GROUP}.malformed.{number:02d}",
                f"{what} ({used!r}, {increase!r}): refused without ceilings (fail closed)",
                "refused (no ceilings)",
                ("allowed" if decision.allowed else "refused")
                + (" (no ceilings)" if decision.hard_ceiling is None else " (with ceilings)"),
            )
        )
    return tuple(checks)


def _number(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"
