"""The background work of a served workspace: the memory archive, the TTL sweeper, reconciling.

Started once by a server (:meth:`Workspace.start_background`) and stopped on close. The
archive is restored before anything else writes, then exported periodically; the sweeper turns
expired records into tombstones; the reconcile loop keeps every indexed repository fresh and
resumes the first index passes that died with their process. The change-feed follower
(:mod:`repocontext.workspace.follower`) keeps this process's derived indexes current with what
other processes write.

With ``serve --workers N`` every worker follows the feed, but only one (``jobs``) runs the
archiver, the sweeper and the reconcile loop: N archivers would restore and export the same
archive, and N reconcile loops would watch and refresh the same trees.

Several servers may share one store (PostgreSQL). A first index pass killed with its server
leaves no event in the change feed, so the process running the jobs also looks, every
:data:`RESUME_INTERVAL_S`, for first passes that read as interrupted (their process is gone:
on another machine, the run lock tells) and resumes them; the run lock keeps two servers
from running the same repository at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from repocontext.errors import RepoContextError
from repocontext.index.run.reconcile import Reconciler
from repocontext.index.service import IndexService
from repocontext.memory import ARCHIVE_NAME, MemoryArchiver
from repocontext.settings import Settings
from repocontext.store import Store, Sweeper
from repocontext.workspace.follower import FeedFollower
from repocontext.workspace.registry import Registry, RepoInfo

__all__ = ["Background"]

_log = logging.getLogger(__name__)

RESUME_INTERVAL_S: Final = 10.0
"""Seconds between two looks for interrupted first index passes (of any server)."""


class Background:
    """The archiver, sweeper and reconcile loop of one workspace (none runs until started)."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        index: IndexService,
        registry: Registry,
        on_restore: Callable[[str], None],
        follower: FeedFollower,
    ) -> None:
        """Prepare the background work; the archiver exists only with an archive directory."""
        self.follower = follower
        """The change-feed follower (started with the rest, in every serving process)."""
        self._settings = settings
        self._store = store
        self._index = index
        self._registry = registry
        self._sweeper: Sweeper | None = None
        self.reconciler: Reconciler | None = None
        """The running reconcile loop, if any."""
        self._resumer: threading.Thread | None = None
        self._stopping = threading.Event()
        self.archiver: MemoryArchiver | None = None
        """The memory archive (``settings.archive_dir``); never set for a read-only store."""
        if settings.archive_dir is not None and not store.backend.read_only:
            self.archiver = MemoryArchiver(
                store,
                settings.archive_dir / ARCHIVE_NAME,
                interval_seconds=settings.archive_interval_seconds,
                on_restore=on_restore,
            )

    def start(self, sweep_interval_seconds: float, *, jobs: bool = True) -> None:
        """Restore the archive, then start its exports, the sweeper, reconciling and following.

        Args:
            sweep_interval_seconds: Seconds between two TTL sweeps.
            jobs: Run the archiver, sweeper and reconcile loop (one process of a data
                directory does); without, only the change-feed follower starts.

        Raises:
            ArchiveCorruptError: The archive to restore is damaged (nothing was written and
                nothing was started).
            StoreReadOnlyError: The archive directory cannot be written (the restore ran,
                nothing was started).
        """
        if self._store.backend.read_only:
            return
        if jobs:
            self._start_jobs(sweep_interval_seconds)
        self.follower.start()

    def _start_jobs(self, sweep_interval_seconds: float) -> None:
        if self.archiver is not None and not self.archiver.running:
            # Before anything else writes: ``auto`` must see whether memory is empty.
            self.archiver.restore(self._settings.archive_restore)
            self.archiver.start()
        if self._sweeper is None:
            self._sweeper = Sweeper(self._store, interval_seconds=sweep_interval_seconds)
            self._sweeper.start()
        if self.reconciler is None:
            self.reconciler = Reconciler(
                self._indexed_roots,
                self._index.refresh,
                self._index.reindex,
                mode=self._settings.reconcile,
                interval_seconds=self._settings.reconcile_interval_seconds,
                ignore_paths=(self._settings.data_dir,),
                warm=self._index.warm,
            )
            self.reconciler.start()
            self._resume_first_passes()
        if self._resumer is None:
            self._stopping.clear()
            self._resumer = threading.Thread(
                target=self._resume_loop, name="repocontext-resume", daemon=True
            )
            self._resumer.start()

    def stop(self) -> None:
        """Stop following, reconciling and sweeping; export the archive once more (idempotent)."""
        self.follower.stop()
        self._stopping.set()
        if self._resumer is not None:
            self._resumer.join(10.0)
            self._resumer = None
        if self.reconciler is not None:
            self.reconciler.stop()
            self.reconciler = None
        if self._sweeper is not None:
            self._sweeper.stop()
            self._sweeper = None
        if self.archiver is not None:
            self.archiver.stop()  # the shutdown export, while the store is still open

    def _repos(self) -> list[RepoInfo]:
        return list(self._registry.iter_repos())

    def _indexed_roots(self) -> dict[str, Path]:
        # Repositories whose first pass finished; the others are still being bootstrapped.
        return {r.repo_id: Path(r.root) for r in self._repos() if r.indexed_at}

    def _resume_loop(self) -> None:
        while not self._stopping.wait(RESUME_INTERVAL_S):
            try:
                self._resume_first_passes(interrupted_only=True)
            except RepoContextError as exc:  # (the store unreachable for a while: next time)
                _log.warning("looking for interrupted index runs failed: %s", exc.code)

    def _resume_first_passes(self, *, interrupted_only: bool = False) -> None:
        """Start again, in the background, each first index pass that failed or was killed.

        The reconcile loop keeps only finished indexes fresh; a repository whose first pass
        died with its process would otherwise stay unindexed (and the server "building")
        for good. A repository reset on purpose has no failed run, so it stays as it is.
        ``interrupted_only``: only passes whose process died (the periodic look; a pass that
        failed for a reason of its own is retried at the next start, not every few seconds).
        """
        for info in self._repos():
            if info.indexed_at:
                continue
            status = self._index.status(info.repo_id)
            code = (status.error or {}).get("code")
            if status.status != "failed" or (interrupted_only and code != "index.interrupted"):
                continue
            _log.info("resuming the first index pass of %s", info.repo_id)
            options = self._registry.kept_filters(info.repo_id)
            try:
                self._index.start(info.repo_id, Path(info.root), options)
            except RepoContextError as exc:  # (a root gone since: reported by its status)
                _log.warning("cannot resume %s: %s (%s)", info.repo_id, exc.code, exc.message)
