"""Rate-limit window usage from a provider's response headers, and the pre-run budget check.

Each provider reports, per dimension (requests, tokens, input tokens, ...), the window's limit
and what remains. The used share of a dimension is ``100 * (1 - remaining / limit)``; the window
usage is the largest share over the reported dimensions. A dimension with a limit but no
remaining count (or the reverse), a value that is not a non-negative integer, a zero limit or
``remaining > limit`` make the whole reading ``None``: the budget guard then refuses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Protocol

from lattice_runtime.errors import WorkerError
from lattice_runtime.workers.budget import BudgetDecision, guard_decision

__all__ = [
    "ANTHROPIC_HEADERS",
    "OPENAI_HEADERS",
    "WindowReader",
    "preflight",
    "read_anthropic_window_usage",
    "read_openai_window_usage",
    "read_window_usage",
]

ANTHROPIC_HEADERS: Final = (
    re.compile(r"anthropic-ratelimit-(?P<dim>[a-z0-9-]+)-limit"),
    re.compile(r"anthropic-ratelimit-(?P<dim>[a-z0-9-]+)-remaining"),
)
"""Anthropic: ``anthropic-ratelimit-<dimension>-limit`` / ``-remaining``."""

OPENAI_HEADERS: Final = (
    re.compile(r"x-ratelimit-limit-(?P<dim>[a-z0-9-]+)"),
    re.compile(r"x-ratelimit-remaining-(?P<dim>[a-z0-9-]+)"),
)
"""OpenAI: ``x-ratelimit-limit-<dimension>`` / ``x-ratelimit-remaining-<dimension>``."""

_COUNT: Final = re.compile(r"[0-9]{1,18}")


def _counts(headers: Mapping[str, str], pattern: re.Pattern[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for key, value in headers.items():
        match = pattern.fullmatch(key.strip().lower())
        if match:
            found[match["dim"]] = value.strip()
    return found


def read_window_usage(
    headers: Mapping[str, str], patterns: tuple[re.Pattern[str], re.Pattern[str]]
) -> float | None:
    """The used share (0-100) of the rate-limit window, from one response's headers.

    Args:
        headers: The response headers (any case).
        patterns: The provider's ``(limit, remaining)`` header patterns
            (:data:`ANTHROPIC_HEADERS` or :data:`OPENAI_HEADERS`).

    Returns:
        The largest used share over the reported dimensions, or ``None`` when no dimension
        is reported or any reported one is malformed.
    """
    limits = _counts(headers, patterns[0])
    remaining = _counts(headers, patterns[1])
    if not limits or limits.keys() != remaining.keys():
        return None
    shares: list[float] = []
    for dim, limit_text in limits.items():
        left_text = remaining[dim]
        if not (_COUNT.fullmatch(limit_text) and _COUNT.fullmatch(left_text)):
            return None
        limit, left = int(limit_text), int(left_text)
        if limit == 0 or left > limit:
            return None
        shares.append(100.0 * (limit - left) / limit)
    return max(shares)


def read_anthropic_window_usage(headers: Mapping[str, str]) -> float | None:
    """:func:`read_window_usage` with Anthropic's ``anthropic-ratelimit-*`` headers.

    Args:
        headers: The response headers.

    Returns:
        The used share (0-100), or ``None`` when missing or malformed.
    """
    return read_window_usage(headers, ANTHROPIC_HEADERS)


def read_openai_window_usage(headers: Mapping[str, str]) -> float | None:
    """:func:`read_window_usage` with OpenAI's ``x-ratelimit-*`` headers.

    Args:
        headers: The response headers.

    Returns:
        The used share (0-100), or ``None`` when missing or malformed.
    """
    return read_window_usage(headers, OPENAI_HEADERS)


class WindowReader(Protocol):
    """A provider worker as the budget check sees it."""

    @property
    def last_headers(self) -> Mapping[str, str] | None:
        """The headers of the last response (success or error), if any."""
        ...

    def probe(self) -> Mapping[str, str]:
        """Make one minimal request and return its response headers.

        Raises:
            WorkerError: The provider cannot be reached or refused the request.
        """
        ...

    def window_usage(self, headers: Mapping[str, str]) -> float | None:
        """The used share of the window from ``headers`` (``None``: missing or malformed)."""
        ...


def preflight(
    worker: WindowReader, estimated_increase: float, *, use_last: bool = False
) -> BudgetDecision:
    """Decide whether a paid run may start, from the provider's own window usage.

    Args:
        worker: The provider worker the run will use.
        estimated_increase: The share of the window (0-100) the run could take at most.
        use_last: Read the last response's headers instead of making a probe request
            (falls back to a probe when there is no last response).

    Returns:
        :func:`~lattice_runtime.workers.budget.guard_decision` on the reported usage; a
        refusal when the probe fails or the headers are missing or malformed (fail closed).
    """
    headers = worker.last_headers if use_last else None
    if headers is None:
        try:
            headers = worker.probe()
        except WorkerError as exc:
            return BudgetDecision(False, f"refused: the window usage could not be read: {exc}")
    return guard_decision(worker.window_usage(headers), estimated_increase)
