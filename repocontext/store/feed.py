"""Reading the change feed: its events after a position, its floor, consumers' cursors.

The feed is written inside every write transaction (:mod:`repocontext.store._writes`): one
entry per committed change, keyed by its sequence number, in the internal ``feed`` tree. The
sweep trims it from the oldest end and records the highest trimmed sequence as the floor; a
consumer asking for events below the floor must resynchronise from the records.
"""

from __future__ import annotations

import struct

from repocontext.errors import FeedTrimmedError
from repocontext.store import _writes as w
from repocontext.store.backend import Backend
from repocontext.store.trees import TREES_BY_TAG
from repocontext.store.view import Change

__all__ = ["feed_floor", "last_seq", "read_changes", "read_cursor", "write_cursor"]


def read_changes(backend: Backend, after: int, limit: int, retention: str) -> list[Change]:
    """Return at most ``limit`` events with ``seq > after``, oldest first, from one snapshot.

    Raises:
        FeedTrimmedError: Events after ``after`` were trimmed (``retention`` says how the
            feed is bounded, for the message).
    """
    changes: list[Change] = []
    with backend.read() as txn:
        floor = w.read_meta_int(txn, w.FEED_FLOOR)
        if after < floor:
            raise FeedTrimmedError(
                f"change-feed events {after + 1}..{floor} were trimmed (the feed keeps {retention})"
            )
        for _, raw in txn.iterate(w.FEED, w.seq_key(after + 1), None):
            for seq, tag, op, hlc, key in w.decode_feed_entry(raw):
                if seq > after:
                    changes.append(Change(seq, TREES_BY_TAG[tag].name, key, op, hlc))
            if len(changes) >= limit:
                return changes[:limit]
    return changes


def feed_floor(backend: Backend) -> int:
    """Return the highest sequence number trimmed from the feed (0: none)."""
    with backend.read() as txn:
        return w.read_meta_int(txn, w.FEED_FLOOR)


def last_seq(backend: Backend) -> int:
    """Return the highest sequence number handed out."""
    with backend.read() as txn:
        return w.read_meta_int(txn, b"seq")


def read_cursor(backend: Backend, name: str) -> int:
    """Return the saved feed position of consumer ``name`` (0 when new)."""
    with backend.read() as txn:
        return w.read_meta_int(txn, _cursor_key(name))


def write_cursor(backend: Backend, name: str, seq: int) -> None:
    """Durably record that consumer ``name`` has processed the feed up to ``seq``."""
    backend.write(lambda txn: txn.put(w.META, _cursor_key(name), struct.pack(">Q", seq)))


def _cursor_key(name: str) -> bytes:
    return b"cursor/" + name.encode()
