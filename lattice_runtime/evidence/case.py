"""One safety case: what a guarantee should do on one input, and what the runtime did.

Every case of the safety suite (:mod:`.suite`) is a :class:`SafetyCase`. ``expected`` and
``actual`` are short, deterministic outcome lines (``risk=high budget=12000/20/3/4 ...``,
``refused: unsafe_destination``): the case passed when the runtime's observed outcome equals
the outcome the documented rule calls for. Neither line ever holds a temporary path, a time
or anything else that changes between runs, so the suite's report is byte-for-byte stable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["GROUPS", "GROUP_SIZE", "SafetyCase", "SafetyGroup", "outcome_case"]

GROUP_SIZE: Final = 48
"""Cases per group; five groups make the suite's 240."""


@dataclass(frozen=True, slots=True)
class SafetyGroup:
    """A group of cases that together back one claim.

    Attributes:
        name: Short stable name (``risk``, ``protocol``, ...), the prefix of its case ids.
        claim: The guarantee the group's cases check, as one sentence.
    """

    name: str
    claim: str


GROUPS: Final[tuple[SafetyGroup, ...]] = (
    SafetyGroup("risk", "risk is never silently downgraded"),
    SafetyGroup("protocol", "the worker protocol fails closed"),
    SafetyGroup("paths", "paths stay inside the repository"),
    SafetyGroup("lowering", "patch lowering is exact"),
    SafetyGroup("budget", "the budget guard fails closed"),
)
"""The five groups, in report order."""


@dataclass(frozen=True, slots=True)
class SafetyCase:
    """One case's outcome.

    Attributes:
        group: The group's name (one of :data:`GROUPS`).
        id: Stable, unique id: ``<group>.<kind>.<n>``.
        description: What the case feeds the runtime and which rule decides.
        expected: The outcome the rule calls for.
        actual: The outcome the runtime produced.
        passed: ``actual == expected``.
    """

    group: str
    id: str
    description: str
    expected: str
    actual: str
    passed: bool


def outcome_case(
    group: str, case_id: str, description: str, expected: str, actual: str
) -> SafetyCase:
    """A case whose verdict is the equality of the two outcome lines.

    Args:
        group: The group's name.
        case_id: The case's id.
        description: What the case checks.
        expected: The outcome the rule calls for.
        actual: The outcome observed.

    Returns:
        The case, ``passed`` when ``actual == expected``.
    """
    return SafetyCase(group, case_id, description, expected, actual, actual == expected)
