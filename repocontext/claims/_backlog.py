"""The backlog side of ``claim_next``: which topic a call names, and its open entries in order.

A drained backlog is mostly finished items, and they form a growing prefix of the topic in key
order. A cursor per topic remembers where that prefix ends, so a call does not decode every
finished item again. The cursor is only trusted as far as the store's change feed allows: an
event (of any process) for a key before the cursor, since the feed position the cursor was
taken at, moves the scan's start back to that key (an entry reopened, added or rewritten).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Final

from repocontext.errors import (
    FeedTrimmedError,
    NotFoundError,
)
from repocontext.memory.service import check_topic
from repocontext.store import MEMORY, Store, read_repo
from repocontext.store.document import DocState
from repocontext.store.keys import family_prefix

__all__ = ["Backlog"]

CHANGES_CHECKED: Final = 1000
"""A cursor is checked against at most this many feed events; more: scan from the start."""
FIRST_PAGE: Final = 8
"""Entries read by the first page of a scan; pages then double up to :data:`PAGE`. The entry
a call claims is usually among the first few after the cursor, and a page decodes them all."""
PAGE: Final = 256
"""The topic rule of ``repocontext_remember`` (memory.service): no entry has another topic."""


class Backlog:
    """The backlogs (memory topics) of one store, each with a cursor past its finished items."""

    def __init__(self, store: Store) -> None:
        """Read backlogs from ``store``."""
        self.store = store
        # Per topic prefix: a key before which every live entry was done, and the feed
        # position that holds at.
        self._cursors: dict[str, tuple[str, int]] = {}
        self._lock = threading.Lock()

    def prefix(self, repo_id: str, topic: str) -> str:
        """Return the key prefix of a backlog.

        Raises:
            InvalidInputError: The topic is not one an entry can have.
            NotFoundError: The repository is not registered.
        """
        check_topic(topic)
        if read_repo(self.store, repo_id) is None:
            raise NotFoundError(
                f"no repository {repo_id!r} is registered",
                hint="Register it with repocontext_bootstrap or repocontext index.",
            )
        return family_prefix(repo_id, "mem", topic)

    def open_entries(self, prefix: str) -> Iterator[tuple[str, DocState]]:
        """Yield ``(key, doc)`` of the live entries of a backlog not ``status: done``, in key order.

        Moves the backlog's cursor past the finished entries it reads first.
        """
        start, seq = self._start(prefix)
        done_until: str | None = start  # every live entry before it is done (None: settled)
        for key, doc in self._entries(prefix, start):
            if doc.fields.get("status") == "done":
                if done_until is not None:
                    done_until = key + "\x00"
                continue
            if done_until is not None:
                self._keep(prefix, done_until, seq)
                done_until = None
            yield key, doc
        if done_until is not None:
            self._keep(prefix, done_until, seq)

    def _start(self, prefix: str) -> tuple[str, int]:
        seq = self.store.last_seq()  # read first: a write after this has a higher seq
        with self._lock:
            start, seen = self._cursors.get(prefix, (prefix, seq))
        if start == prefix:
            return prefix, seq
        try:
            changes = self.store.changes(seen, limit=CHANGES_CHECKED)
        except FeedTrimmedError:
            return prefix, seq
        if len(changes) >= CHANGES_CHECKED:
            return prefix, seq
        for change in changes:
            if change.tree == MEMORY and change.key.startswith(prefix):
                start = min(start, change.key)
        return start, seq

    def _keep(self, prefix: str, start: str, seq: int) -> None:
        with self._lock:
            self._cursors[prefix] = (start, seq)

    def _entries(self, prefix: str, start: str) -> Iterator[tuple[str, DocState]]:
        limit = FIRST_PAGE
        while True:
            page = self.store.scan(MEMORY, prefix, limit=limit, start=start)
            yield from ((r.key, r.doc) for r in page.records if r.doc is not None)
            if page.next_token is None or not page.records:
                return
            start = page.records[-1].key + "\x00"
            limit = min(limit * 2, PAGE)
