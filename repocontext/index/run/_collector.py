"""Pausing Python's cyclic garbage collector while an index run builds its state.

A whole-tree run allocates a few million long-lived objects (file facts, links, the digest
of every projection record), none of them in reference cycles: reference counting frees
them. With the collector on, every quarter of growth of that heap triggers a full
collection that walks everything built so far; on 25,840 files that was 29 full
collections and 11 of the 25 CPU seconds of the main process (docs/benchmarks.md). The
cycles a run does make are few (about 600 objects on that tree), so a run keeps the
collector off and turns it back on when the last run of the process ends; the new state
is then walked once or twice as it ages through the generations (about a second each on
that tree), instead of 29 times.

The switch is process-wide: in a serving process, cycles other threads drop while a run
holds it off (requests handled during a bootstrap) wait until it ends; a bootstrap of 25k
files holds it for about 40 s, a refresh for tens of milliseconds. Nothing is frozen
(:func:`gc.freeze`): that would save the last walks but keep for good any cycle alive at
that moment, such as a request a serving process was handling.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


class _Pause:
    """Counts the blocks holding the collector off (runs of several repositories overlap)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holders = 0
        self.was_enabled = False

    def enter(self) -> None:
        with self.lock:
            if self.holders == 0:
                self.was_enabled = gc.isenabled()
                gc.disable()
            self.holders += 1

    def leave(self) -> None:
        with self.lock:
            self.holders -= 1
            if self.holders == 0 and self.was_enabled:
                gc.enable()


_PAUSE = _Pause()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Keep the cyclic collector off for the block (nested and concurrent blocks share it).

    The collector is turned back on as the last block ends, if it was on before the first
    began, whether the block raised or not.
    """
    _PAUSE.enter()
    try:
        yield
    finally:
        _PAUSE.leave()
