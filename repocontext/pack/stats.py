"""Call statistics of the context tools: totals since start and a bounded recent window.

``readsReplacedTokens`` is what reading every delivered file in full would have cost;
``netSavedTokens = readsReplacedTokens - responseTokens`` (negative when a bundle cost more
than the reads it replaced). The window keeps at most :data:`MAX_EVENTS` calls; totals are
monotonic counters (also exported as Prometheus counters by the HTTP app).
"""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass
from typing import Final

from repocontext.store import Clock

__all__ = ["DEFAULT_WINDOW_S", "MAX_EVENTS", "MAX_WINDOW_S", "CallStats", "StatsWindow"]

DEFAULT_WINDOW_S: Final = 3600.0
MAX_WINDOW_S: Final = 7 * 24 * 3600.0
MAX_EVENTS: Final = 100_000


@dataclass(frozen=True, slots=True)
class CallStats:
    """Figures of ``repocontext_stats``."""

    calls: int
    response_tokens: int
    reads_replaced_tokens: int
    net_saved_tokens: int
    window_seconds: float


class StatsWindow:
    """Thread-safe call counters."""

    def __init__(self, clock: Clock) -> None:
        """Start with no calls."""
        self._clock = clock
        self._started = clock.now()
        self._lock = threading.Lock()
        self._events: deque[tuple[float, int, int]] = deque(maxlen=MAX_EVENTS)
        self.total_calls = 0
        self.total_response_tokens = 0
        self.total_reads_replaced_tokens = 0

    def record(self, response_tokens: int, reads_replaced_tokens: int) -> None:
        """Count one call."""
        with self._lock:
            self._events.append((self._clock.now(), response_tokens, reads_replaced_tokens))
            self.total_calls += 1
            self.total_response_tokens += response_tokens
            self.total_reads_replaced_tokens += reads_replaced_tokens

    def totals(self) -> CallStats:
        """Sum every call since this window was made (``window_seconds``: the time since)."""
        with self._lock:
            calls, response = self.total_calls, self.total_response_tokens
            replaced = self.total_reads_replaced_tokens
        span = self._clock.now() - self._started
        return CallStats(calls, response, replaced, replaced - response, span)

    def window(self, seconds: float | None = None) -> CallStats:
        """Sum the calls of the last ``seconds`` (default one hour, at most a week)."""
        if seconds is None or not math.isfinite(seconds):  # (nan, inf: the default)
            seconds = DEFAULT_WINDOW_S
        span = min(max(seconds, 1.0), MAX_WINDOW_S)  # 0 and below: the shortest window
        since = self._clock.now() - span
        with self._lock:
            recent = [e for e in self._events if e[0] >= since]
        response = sum(e[1] for e in recent)
        replaced = sum(e[2] for e in recent)
        return CallStats(len(recent), response, replaced, replaced - response, span)
