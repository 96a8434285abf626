"""Test fakes for ``lattice_runtime``: a manually advanced clock and seeded randomness.

They live in the package (not under ``tests/``) so every test and benchmark uses the same
fakes, and they are tested themselves (``tests/lattice_runtime/test_testing.py``).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

__all__ = ["FakeClock", "SeededEntropy"]

_START = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


class FakeClock:
    """A wall clock that moves only when told to (a :class:`~lattice_runtime.machine.Clock`)."""

    def __init__(self, start: datetime = _START, *, step: timedelta = timedelta(0)) -> None:
        """Start at ``start``; each :meth:`now` then advances by ``step`` (zero: stand still)."""
        self._now = start
        self._step = step

    def now(self) -> datetime:
        """Return the current fake time, then advance it by the step."""
        current = self._now
        self._now = current + self._step
        return current

    def advance(self, seconds: float) -> datetime:
        """Move forward by ``seconds`` and return the new time.

        Raises:
            ValueError: ``seconds`` is negative (this clock never goes back).
        """
        if seconds < 0:
            raise ValueError("a FakeClock only moves forward")
        self._now += timedelta(seconds=seconds)
        return self._now


class SeededEntropy:
    """Deterministic random bytes (an :data:`~lattice_runtime.machine.Entropy` source)."""

    def __init__(self, seed: int = 0) -> None:
        """Draw from a generator seeded with ``seed``."""
        self._random = random.Random(seed)

    def __call__(self, count: int) -> bytes:
        """Return ``count`` bytes."""
        return self._random.randbytes(count)
