"""Risk: how careful a run must be, read from the goal's words and never downgraded.

A goal is ``high`` risk when one of its words *starts with* a sensitive stem (auth, security,
password, permission, migration, concurrency, crypt, payment), ``low`` when it asks only for
a cosmetic change (fix a typo, formatting, sort imports, update the readme or documentation),
and ``medium`` otherwise. High wins over low: "fix a typo in the auth docs" is high.

A *word* is a run of letters and digits; underscores, hyphens, dots and camelCase humps also
start a new word, so ``reset_password``, ``user-auth`` and ``resetPassword`` count while
``unauthorized`` does not (its word starts with ``un``).
"""

from __future__ import annotations

import re
from typing import Final

from lattice_runtime.compile.task import Risk
from lattice_runtime.errors import TaskInvalidError

__all__ = ["HIGH_RISK_STEMS", "classify_risk", "goal_words", "raise_risk"]

HIGH_RISK_STEMS: Final[tuple[str, ...]] = (
    "auth",
    "security",
    "password",
    "permission",
    "migration",
    "concurrency",
    "crypt",
    "payment",
)
"""A word that starts with one of these (case-insensitive) makes the task high risk."""

_LOW_RISK_PHRASES: Final[tuple[re.Pattern[str], ...]] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\bfix\s+(?:a\s+)?typos?\b",
        r"\bformat(?:ting)?\b",
        r"\bsort\s+imports\b",
        r"\bupdate\s+(?:the\s+)?(?:readme|documentation)\b",
    )
)

_RANK: Final[dict[Risk, int]] = {"low": 0, "medium": 1, "high": 2}

# Letters and digits, cut again at camelCase humps: "resetPassword" -> "reset", "Password";
# "OAuthToken" -> "O", "Auth", "Token"; "HTTPServer" -> "HTTP", "Server".
_WORD: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")


def goal_words(text: str) -> tuple[str, ...]:
    """The words of ``text``, lower-cased, in order (the units the stems are matched against).

    Args:
        text: Any text (a goal).

    Returns:
        The words: runs of letters or digits, split at ``_``, ``-``, ``.``, spaces and
        camelCase humps.
    """
    return tuple(match.group(0).casefold() for match in _WORD.finditer(text))


def classify_risk(goal: str) -> Risk:
    """The risk the goal's words call for.

    Args:
        goal: The goal as the user wrote it.

    Returns:
        ``high`` if a word starts with one of :data:`HIGH_RISK_STEMS`; else ``low`` if the goal
        asks for a typo fix, formatting, sorted imports or a readme/documentation update; else
        ``medium``.
    """
    if any(word.startswith(HIGH_RISK_STEMS) for word in goal_words(goal)):
        return "high"
    if any(pattern.search(goal) for pattern in _LOW_RISK_PHRASES):
        return "low"
    return "medium"


def raise_risk(current: Risk, floor: Risk | None) -> Risk:
    """The higher of two risks: a risk can be raised, never lowered.

    Args:
        current: The risk so far.
        floor: A risk the result may not fall below (``None``: no floor).

    Returns:
        ``floor`` when it is higher than ``current``, else ``current``.

    Raises:
        TaskInvalidError: If either value is not ``low``, ``medium`` or ``high``.
    """
    if current not in _RANK or (floor is not None and floor not in _RANK):
        raise TaskInvalidError(
            f"unknown risk: {current!r} / {floor!r}", hint="Use low, medium or high."
        )
    if floor is None:
        return current
    return floor if _RANK[floor] > _RANK[current] else current
