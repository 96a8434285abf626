"""Test fakes shared by the test suite and by downstream consumers' tests.

Only deterministic stand-ins for injected effects live here (the clock); nothing in this
module replaces a real part of ``repocontext``.
"""

from __future__ import annotations

import threading

__all__ = ["FakeClock"]


class FakeClock:
    """A manually advanced wall clock, safe to share between threads."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        """Start at ``start`` seconds since the epoch."""
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> float:
        """Return the current fake time."""
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` (never backwards) and return the new time.

        Raises:
            ValueError: ``seconds`` is negative.
        """
        if seconds < 0:
            raise ValueError("a FakeClock only moves forward")
        with self._lock:
            self._now += seconds
            return self._now

    def set(self, when: float) -> None:
        """Jump to ``when`` (may move backwards, to exercise clock skew)."""
        with self._lock:
            self._now = when
