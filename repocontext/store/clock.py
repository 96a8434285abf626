"""Wall clocks and the hybrid logical clock (HLC) that orders every write.

An HLC timestamp is one integer: milliseconds since the epoch shifted left by 16 bits, plus a
16-bit logical counter. It never goes backwards, even when the wall clock does, and it is
persisted by the store so that it also survives restarts and is shared by every process that
opens the same environment.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Final, Protocol

__all__ = ["HLC_LOGICAL_BITS", "Clock", "SystemClock", "hlc_millis", "iso_utc", "next_hlc"]

HLC_LOGICAL_BITS: Final = 16
_LOGICAL_MASK: Final = (1 << HLC_LOGICAL_BITS) - 1


class Clock(Protocol):
    """A source of wall time in seconds since the epoch (injected so tests never sleep)."""

    def now(self) -> float:
        """Return the current time in seconds since the epoch."""
        ...


class SystemClock:
    """The real wall clock."""

    def now(self) -> float:
        """Return ``time.time()``."""
        return time.time()


def next_hlc(last: int, wall_seconds: float) -> int:
    """Return the next HLC after ``last`` given the current wall time.

    The physical part follows the wall clock when it moves forward; otherwise the logical
    counter advances (spilling into the physical part, which keeps the order total).
    """
    physical = int(wall_seconds * 1000) << HLC_LOGICAL_BITS
    return physical if physical > last else last + 1


def hlc_millis(hlc: int) -> int:
    """Return the wall-clock milliseconds encoded in an HLC timestamp."""
    return hlc >> HLC_LOGICAL_BITS


def iso_utc(seconds: float) -> str:
    """Format epoch seconds as ISO 8601 UTC with milliseconds (``2026-01-02T03:04:05.678Z``)."""
    stamp = datetime.fromtimestamp(seconds, tz=UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")
