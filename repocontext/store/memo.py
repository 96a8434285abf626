"""Values derived from a store, kept while its change sequence stays put.

A read view that lists many records on every call (grep's file list, the symbol names a
lookup scans) can keep what it computed: every write to a store, from any process, moves
the store's change sequence, so a value computed at sequence ``n`` is still exact while the
sequence reads ``n``. One value per store and key (a repository id); a closed store's values
go with it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from repocontext.store.store import Store

__all__ = ["StoreMemo"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class StoreMemo(Generic[K, V]):
    """``compute(store, key)``, kept per store and key until the store's sequence moves."""

    def __init__(self, compute: Callable[[Store, K], V]) -> None:
        """Keep the values of ``compute``."""
        self._compute = compute
        self._lock = threading.Lock()
        self._kept: weakref.WeakKeyDictionary[Store, dict[K, tuple[int, V]]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, store: Store, key: K) -> V:
        """The value for ``key``: kept when the store has not changed since it was computed."""
        seq = store.last_seq()  # (read first: a write during the computation moves it again)
        with self._lock:
            kept = self._kept.get(store, {}).get(key)
        if kept is not None and kept[0] == seq:
            return kept[1]
        value = self._compute(store, key)
        with self._lock:
            self._kept.setdefault(store, {})[key] = (seq, value)
        return value
