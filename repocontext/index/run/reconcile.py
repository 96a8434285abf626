"""The reconcile loop: keeps registered repositories fresh while the server runs.

* ``watch`` (default): file-system events (:mod:`watchfiles`) for every registered root are
  batched and each batch becomes a scoped :meth:`IndexService.refresh` of the paths it named,
  so an edit reaches outlines, links and search within one debounce interval plus the
  refresh itself. A full incremental pass also runs every ``interval`` seconds as a safety net
  (events can be lost: an overflowing inotify queue, a checkout while the server was down).
* ``poll``: only the periodic full pass.
* ``off``: nothing; ``repocontext_bootstrap`` or ``repocontext index`` refresh by hand.

Events under ``.git``, the store's own directory and the usual tool caches are ignored, and
the scoped refresh applies the repository's own filters (git's ignore rules, globs), so
ignored files never reach the index. When watching cannot start (no inotify, too many
directories for the watch limit) the loop logs why and falls back to polling. A root that
does not exist is left out of the watch (and watched again once it is back, caught up by a
full pass), and a batch refused because another process runs an index pass of the same
store is kept and retried every second until that pass is over. When the
watcher stops on an event it cannot report (a file name that is not UTF-8), it is started
again, and its catch-up pass takes in what the lost batch held; only repeated failures
(:data:`MAX_RESTARTS` within :data:`RESTART_WINDOW_S`) fall back to polling.
"""

from __future__ import annotations

import logging
import stat
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final, Literal

import watchfiles

from repocontext.errors import IndexRunningError, RepoContextError

__all__ = ["ReconcileMode", "Reconciler"]

ReconcileMode = Literal["watch", "poll", "off"]

DEBOUNCE_MS: Final = 50
STEP_MS: Final = 20
TICK_MS: Final = 1000
MAX_RESTARTS: Final = 5
RESTART_WINDOW_S: Final = 60.0

_log = logging.getLogger(__name__)

RootsFn = Callable[[], dict[str, Path]]
"""Returns the repositories to keep fresh: repo id -> resolved root."""
RefreshFn = Callable[[str, list[str]], object]
"""Re-indexes the given repository-relative paths of one repository."""
FullPassFn = Callable[[str], object]
"""Runs a full incremental pass over one repository."""
WarmFn = Callable[[str], object]
"""Loads a repository's projection state ahead of its first change."""


class Reconciler:
    """A daemon thread that turns file changes into index refreshes."""

    def __init__(
        self,
        roots: RootsFn,
        refresh: RefreshFn,
        full_pass: FullPassFn,
        *,
        mode: ReconcileMode = "watch",
        interval_seconds: float = 600.0,
        ignore_paths: tuple[Path, ...] = (),
        warm: WarmFn | None = None,
    ) -> None:
        """Prepare the loop; :meth:`start` runs it."""
        self._roots = roots
        self._refresh = refresh
        self._full_pass = full_pass
        self._warm = warm
        self.mode: ReconcileMode = mode
        self.interval_seconds = interval_seconds
        self._ignore = tuple(p.resolve() for p in ignore_paths)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.batches = 0
        """How many event batches were applied (for tests and stats)."""
        self.restarts = 0
        """How many times the watcher was started again after it failed."""
        self._deferred: dict[str, set[str]] = {}
        self.watching = threading.Event()
        """Set once the watcher runs and the catch-up pass after its start is done."""

    def start(self) -> None:
        """Start the loop thread (no-op in ``off`` mode or when already running)."""
        if self.mode == "off" or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="reconcile", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the loop to end and wait for it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    # -- loop --------------------------------------------------------------------------

    def _loop(self) -> None:
        failures: list[float] = []
        while not self._stop.is_set():
            roots = self._watchable()
            if self.mode == "watch" and roots:
                try:
                    self._watch(roots)
                    continue
                # (the watcher's own errors are RuntimeErrors; OSError: it could not start,
                # a root gone meanwhile or the inotify limit)
                except (OSError, RuntimeError) as exc:
                    now = time.monotonic()
                    failures = [t for t in failures if now - t < RESTART_WINDOW_S] + [now]
                    if len(failures) <= MAX_RESTARTS:
                        _log.warning("file watching stopped (%s); restarting it", exc)
                        self.restarts += 1
                        self._stop.wait(1.0)
                        continue
                    _log.warning("file watching keeps failing (%s); polling instead", exc)
                    self.mode = "poll"
            if self.mode == "watch" and self._roots():
                # registered roots, none there now: look again every second (watched, and
                # caught up, once one is back)
                if self._stop.wait(1.0):
                    return
                continue
            if self._stop.wait(self.interval_seconds if self._roots() else 1.0):
                return
            self._pass_all(self._roots())

    def _watch(self, watched: dict[str, tuple[Path, int]]) -> None:
        """Watch until the set of roots changes, the interval elapses or the loop stops."""
        roots = {repo_id: root for repo_id, (root, _) in watched.items()}
        watch_filter = watchfiles.DefaultFilter(ignore_paths=[str(p) for p in self._ignore])
        if self._warm is not None:
            for repo_id in sorted(roots):
                self._guarded(self._warm, repo_id)
        waited_ms = 0
        caught_up = False
        for changes in watchfiles.watch(  # (raises for a root that is gone: none is passed)
            *roots.values(),
            watch_filter=watch_filter,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=self._stop,
            rust_timeout=TICK_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
        ):
            if changes:
                self._apply(roots, {path for _, path in changes})
            else:
                waited_ms += TICK_MS
            self._retry_deferred()
            if not caught_up:
                # The watcher is certainly running now: one full incremental pass takes in
                # whatever changed before it started (while the server was down or warming).
                self._pass_all(roots)
                caught_up = True
                self.watching.set()
            if self._watchable() != watched:
                # A repository was added or removed, or its root vanished or came back (a
                # root deleted and made again is a new directory: watched anew, caught up).
                return
            if waited_ms >= self.interval_seconds * 1000:
                self._pass_all(roots)
                waited_ms = 0

    def _apply(self, roots: dict[str, Path], paths: set[str]) -> None:
        # Every repository whose root holds the path refreshes it: registrations may nest
        # or share a directory, and each index must follow the edit (a scoped refresh finds
        # nothing to do where its own walk does not list the path).
        by_repo: dict[str, list[str]] = defaultdict(list)
        for raw in paths:
            path = Path(raw)
            for repo_id, root in roots.items():
                if path.is_relative_to(root):
                    rel = path.relative_to(root).as_posix()
                    if rel != "." and not _under_git_dir(rel):
                        by_repo[repo_id].append(rel)
        for repo_id, rels in sorted(by_repo.items()):
            self._refresh_or_defer(repo_id, rels)
        self.batches += 1

    def _refresh_or_defer(self, repo_id: str, rels: Iterable[str]) -> None:
        """Refresh the paths now, or later when another process runs an index pass."""
        paths = sorted(set(rels) | self._deferred.pop(repo_id, set()))
        try:
            self._guarded(self._refresh, repo_id, paths, raising=(IndexRunningError,))
        except IndexRunningError:
            # (a `repocontext index` of the same store in another process: its walk may
            # have passed these paths already, so they are refreshed once it is done)
            self._deferred[repo_id] = set(paths)

    def _retry_deferred(self) -> None:
        for repo_id in sorted(self._deferred):
            self._refresh_or_defer(repo_id, ())

    def _watchable(self) -> dict[str, tuple[Path, int]]:
        """The registered roots that exist now, with their inodes.

        The watcher refuses every root when one is gone; and a root deleted and made again
        (or swapped by a rename) is another directory under the same path: its inode tells.
        """
        found: dict[str, tuple[Path, int]] = {}
        for repo_id, root in self._roots().items():
            try:
                info = root.stat()
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                found[repo_id] = (root, info.st_ino)
        return found

    def _pass_all(self, roots: dict[str, Path]) -> None:
        for repo_id in sorted(roots):
            if self._stop.is_set():
                return
            self._guarded(self._full_pass, repo_id)

    def _guarded(
        self,
        call: Callable[..., object],
        repo_id: str,
        *args: object,
        raising: tuple[type[RepoContextError], ...] = (),
    ) -> None:
        try:
            call(repo_id, *args)
        except raising:
            raise
        except RepoContextError as exc:
            _log.warning("reconcile of %s failed: %s (%s)", repo_id, exc.code, exc.message)
        except Exception:
            _log.exception("reconcile of %s failed unexpectedly", repo_id)


def _under_git_dir(rel: str) -> bool:
    return rel == ".git" or rel.startswith(".git/") or "/.git/" in rel
