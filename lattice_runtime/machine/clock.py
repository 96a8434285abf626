"""The wall clock a run reads its timestamps from (injected, so tests never sleep)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol

__all__ = ["Clock", "SystemClock", "iso_utc"]


class Clock(Protocol):
    """A source of the current time as an aware :class:`~datetime.datetime`."""

    def now(self) -> datetime:
        """Return the current time (timezone-aware; naive values are read as UTC)."""
        ...


class SystemClock:
    """The real wall clock, in UTC."""

    def now(self) -> datetime:
        """Return ``datetime.now(UTC)``."""
        return datetime.now(UTC)


def iso_utc(moment: datetime) -> str:
    """Format ``moment`` as ISO 8601 UTC with milliseconds (``2026-01-02T03:04:05.678Z``).

    A naive ``moment`` is taken to be UTC already.
    """
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return aware.isoformat(timespec="milliseconds").replace("+00:00", "Z")
