"""The live-evaluation budget guard: never start a paid run that could eat the window.

Before a benchmark runs against a paid provider, the runtime reads how much of the provider's
rate-limit window is used (a share, 0-100) and how much the run could add. It starts only when

- both numbers are present, finite and within 0-100 (anything else refuses: fail closed),
- the run could take at most 10 points of the window: the *hard ceiling* is
  ``min(100, used + 10)``,
- and, with a margin of 2 points, the usage after the run stays under the *start ceiling*
  ``max(used, hard - 2)``.

So with ``used`` = 40: hard = 50, start = 48; an increase of 8 starts, 11 is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

__all__ = ["MAX_SHARE_POINTS", "BudgetDecision", "guard_decision"]

MAX_SHARE_POINTS: Final = 10.0
"""Most points of the window one run may take."""
_MARGIN: Final = 2.0


@dataclass(frozen=True, slots=True)
class BudgetDecision:
    """Whether a run may start, and why.

    Attributes:
        allowed: The run may start.
        reason: One line: the numbers and the rule that decided.
        hard_ceiling: ``min(100, used + 10)`` (``None`` when the input was refused).
        start_ceiling: ``max(used, hard - 2)`` (``None`` when the input was refused).
    """

    allowed: bool
    reason: str
    hard_ceiling: float | None = None
    start_ceiling: float | None = None


def guard_decision(used: object, increase: object) -> BudgetDecision:
    """Decide whether a run that could add ``increase`` points may start at ``used`` points.

    Args:
        used: The share of the provider's window already used, 0-100 (as reported).
        increase: The share the run could take at most, 0-100 (an estimate).

    Returns:
        The decision; malformed or missing numbers are a refusal, never an error.
    """
    checked_used = _share(used)
    checked_increase = _share(increase)
    if checked_used is None or checked_increase is None:
        return BudgetDecision(
            False, f"refused: usage data missing or malformed (used={used!r}, run={increase!r})"
        )
    hard = min(100.0, checked_used + MAX_SHARE_POINTS)
    start = max(checked_used, hard - _MARGIN)
    after = checked_used + checked_increase
    allowed = after <= start
    verdict = "allowed" if allowed else "refused"
    return BudgetDecision(
        allowed,
        f"{verdict}: used {checked_used:g} + run {checked_increase:g} = {after:g} "
        f"against the start ceiling {start:g} (hard ceiling {hard:g})",
        hard,
        start,
    )


def _share(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 100.0:
        return None
    return number
