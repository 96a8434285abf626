"""Keep one process's derived indexes current from the store's change feed.

The keyword indexes and vector planes are projections each serving process keeps under its
data directory. A process updates them after its own index runs and memory writes; what other
processes wrote (the other workers of ``serve --workers N``, a ``repocontext index`` run, or
another server of a shared store) reaches it only through the change feed. The follower polls
that feed (one sequence read per tick when nothing changed) and, for each repository whose
files, contents or memory entries changed, calls back — the workspace then brings its keyword
index to the head and schedules an embedding pass (see :mod:`repocontext.workspace.services`).

At start it asks for every registered repository once (``on_start``): a data directory that
lacks the planes the store records (a new server of a shared store) embeds them. When the
events it has not read were trimmed from the feed, every registered repository is caught up.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Final

from repocontext.errors import FeedTrimmedError
from repocontext.store import Store
from repocontext.store.keys import decode_component

__all__ = ["DEFAULT_INTERVAL_S", "FeedFollower", "repos_changed"]

DEFAULT_INTERVAL_S: Final = 0.25
"""Seconds between two reads of the store's head sequence."""
_PAGE: Final = 5000
_FAMILIES: Final = frozenset({"file", "content", "mem"})

_log = logging.getLogger(__name__)


def repos_changed(changes: Iterable[tuple[int, str]]) -> dict[str, int]:
    """Map each repository these ``(seq, key)`` changes touched to its last sequence.

    Only file, content and memory records count (the derived indexes project those).
    """
    repos: dict[str, int] = {}
    for seq, key in changes:
        head, _, rest = key.partition("/")
        repo_part, _, tail = rest.partition("/")
        if head == "repo" and repo_part and tail.partition("/")[0] in _FAMILIES:
            repo_id = decode_component(repo_part)
            repos[repo_id] = max(seq, repos.get(repo_id, 0))
    return repos


class FeedFollower:
    """A daemon thread that reads the change feed and reports the repositories it touched."""

    def __init__(
        self,
        store: Store,
        on_changed: Callable[[str, int], None],
        registered: Callable[[], Iterable[str]],
        *,
        on_start: Callable[[str], object] | None = None,
        interval_seconds: float = DEFAULT_INTERVAL_S,
    ) -> None:
        """Follow ``store``; ``on_changed(repo_id)`` runs on the follower's thread.

        Args:
            store: The store whose feed is read.
            on_changed: Called once per changed repository per tick, with the last sequence
                that changed it.
            registered: The registered repository ids (a trimmed feed catches them all up).
            on_start: Called for every registered repository when the follower starts.
            interval_seconds: Seconds between two polls.
        """
        self._store = store
        self._on_changed = on_changed
        self._registered = registered
        self._on_start = on_start
        self._interval = interval_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.cursor = 0
        """The last feed sequence handled."""

    @property
    def running(self) -> bool:
        """Whether the thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start following from the store's head (what is already there is caught up once)."""
        if self.running:
            return
        self.cursor = self._store.last_seq()
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="feed-follower", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread and wait for it (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def poll(self) -> set[str]:
        """Read the feed after the cursor once; report and return the repositories changed."""
        head = self._store.last_seq()
        if head <= self.cursor:
            return set()
        try:
            changes: list[tuple[int, str]] = []
            after = self.cursor
            while batch := self._store.changes(after=after, limit=_PAGE):
                changes += ((change.seq, change.key) for change in batch)
                after = batch[-1].seq
            repos = repos_changed(changes)
        except FeedTrimmedError:  # fell behind the feed's retention: catch everything up
            after, repos = head, dict.fromkeys(self._registered(), head)
        self.cursor = max(after, head)
        for repo_id in sorted(repos):
            self._call(lambda repo: self._on_changed(repo, repos[repo]), repo_id)
        return set(repos)

    def _loop(self) -> None:
        if self._on_start is not None:
            for repo_id in self._safe_registered():
                self._call(self._on_start, repo_id)
        while not self._stop.wait(self._interval):
            try:
                self.poll()
            except Exception:  # a store hiccup must not end following for good
                _log.exception("reading the change feed failed; trying again")

    def _safe_registered(self) -> list[str]:
        try:
            return sorted(self._registered())
        except Exception:
            _log.exception("listing the repositories to catch up failed")
            return []

    def _call(self, action: Callable[[str], object], repo_id: str) -> None:
        try:
            action(repo_id)
        except Exception:  # one repository's failure must not stop the others
            _log.exception("bringing the derived indexes of %s current failed", repo_id)
