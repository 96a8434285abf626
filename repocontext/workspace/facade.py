"""The workspace facade: one object through which every surface and library user works.

:class:`Workspace` owns the open :class:`~repocontext.store.Store` and the services over it
(index, search, semantic, memory, claims: all private) and answers in frozen dataclasses. MCP
tools, HTTP routes, the CLI and the Lattice runtime call its methods; none reaches a service.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Unpack

from repocontext.arguments import repo_id as checked_repo_id
from repocontext.claims import (
    ClaimOptions,
    ClaimResult,
    ClaimStatus,
    ReleaseResult,
    RenewResult,
)
from repocontext.entries import DEFAULT_PAGE_SIZE, Entry, EntryPage, Scope, recall, scan
from repocontext.index.drift import DriftReport
from repocontext.index.files.walk import WalkOptions
from repocontext.index.model import FileNode
from repocontext.index.removal import (
    IndexReset,
    RepoRemoval,
    remove_repo_records,
    reset_index_records,
)
from repocontext.index.run.reconcile import Reconciler
from repocontext.index.run.status import IndexProgress, IndexStatus, ProgressFn
from repocontext.index.service import RELATED_PAGE, OutlineView, RelatedView
from repocontext.memory import (
    Forgotten,
    MemoryEntry,
    Neighbors,
    NoteChanges,
    NoteFields,
    TopicCount,
)
from repocontext.pack.bundle import Bundle, build_bundle
from repocontext.pack.request import ContextRequest
from repocontext.pack.stats import CallStats
from repocontext.search.modes import warnings_of
from repocontext.search.request import SearchRequest
from repocontext.search.semantic import EmbedReport
from repocontext.search.service import SearchResult
from repocontext.settings import Settings
from repocontext.store import Clock, Store, StoreStats, SweepReport, SystemClock
from repocontext.workspace.health import HealthReport, StoreHealth, health_report, store_health
from repocontext.workspace.reading import Reading
from repocontext.workspace.registry import RepoInfo
from repocontext.workspace.services import Services

__all__ = ["Workspace"]


class Workspace(Reading):
    """The facade every surface uses; one per process, opened from :class:`Settings`."""

    def __init__(self, settings: Settings, store: Store, clock: Clock) -> None:
        """Wrap an open store (use :meth:`open`); see :mod:`.services` for the wiring."""
        self.settings = settings
        self._store = store
        self._clock = clock
        self._services = services = Services.wire(settings, store, clock)
        self._registry = services.registry
        self._semantic = services.semantic
        self._index = services.index
        self._search = services.search
        self._memory = services.memory
        self._claims = services.claims
        self._call_stats = services.call_stats
        self._background = services.background

    @classmethod
    def open(
        cls, settings: Settings, *, clock: Clock | None = None, read_only: bool = False
    ) -> Workspace:
        """Open the store under ``settings.data_dir`` (or at ``settings.store_url``).

        Raises:
            InvalidInputError: ``settings.store_url`` is not a supported store URL.
            StoreReadOnlyError: The data directory cannot be written.
            StoreUnavailableError: The store cannot be opened.
        """
        clock = clock or SystemClock()
        store = Store.open(
            settings.data_dir,
            read_only=read_only,
            clock=clock,
            feed_max_events=settings.feed_max_events,
            store_url=settings.store_url,
        )
        return cls(settings, store, clock)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop background work and close the store (idempotent)."""
        self._services.close()
        self._store.close()

    @property
    def store(self) -> Store:
        """The store every view reads (the same one the index writes)."""
        return self._store

    @property
    def reconciler(self) -> Reconciler | None:
        """The running reconcile loop, if any (started by :meth:`start_background`)."""
        return self._background.reconciler

    def start_background(self, *, sweep_interval_seconds: float = 60.0, jobs: bool = True) -> None:
        """Restore the memory archive, start its exports, the sweeper, reconciling and following.

        See :mod:`repocontext.workspace.background`; ``jobs=False``: only the change-feed
        follower (the other workers of ``serve --workers N``).

        Raises:
            ArchiveCorruptError: The archive to restore is damaged (nothing was started).
            StoreReadOnlyError: The archive directory cannot be written (nothing was started).
        """
        self._background.start(sweep_interval_seconds, jobs=jobs)

    def sweep(self) -> SweepReport:
        """Run one TTL sweep now and return what it did."""
        return self._store.sweep()

    def stats(self) -> StoreStats:
        """Return the store's statistics (path, sizes, records per tree)."""
        return self._store.stats()

    # -- repositories ----------------------------------------------------------------------

    def register_repo(self, path: Path | str, repo_id: str | None = None) -> RepoInfo:
        """Register a repository directory under the workspace root.

        Registering the same directory under the same id again changes nothing.

        Args:
            path: The repository directory (relative: to the workspace root); symlinks are
                resolved before any check.
            repo_id: The id to register it under; defaults to the directory's name.

        Raises:
            NoWorkspaceRootError: The workspace has no root to check paths against.
            DangerousRootError: The path is the filesystem root or the home directory.
            PathOutsideWorkspaceError: The path resolves outside the workspace root.
            PathNotFoundError: The path is not an existing directory.
            InvalidInputError: The repository id is empty or not a plain name.
            RepoConflictError: The id is registered for another directory, or the directory
                under another id.
        """
        return self._registry.register(path, repo_id)

    def bootstrap(
        self,
        root: Path | str,
        repo_id: str | None = None,
        options: WalkOptions | None = None,
        *,
        background: bool = True,
        on_progress: ProgressFn | None = None,
    ) -> IndexStatus:
        """Register ``root`` (if needed) and index it; in the background unless told otherwise.

        The filters in ``options`` are kept with the repository and reused by later runs
        and by drift detection; without ``options``, the kept filters apply again (defaults
        for a new repository), with the size cap of this workspace's settings.

        Raises:
            RepoContextError: As :meth:`register_repo`; ``InvalidInputError`` also for a
                glob that can never match.
        """
        if options is not None:
            options.check()  # before anything is written
        info = self.register_repo(root, repo_id)
        if options is None:  # the filters of the last run; the size cap is this process's
            options = dataclasses.replace(
                self._registry.kept_filters(info.repo_id),
                max_file_bytes=self.settings.max_file_bytes,
            )
        self._registry.keep_filters(info.repo_id, options)
        if background:
            return self._index.start(info.repo_id, Path(info.root), options)
        return self._index.run(info.repo_id, Path(info.root), options, on_progress)

    def get_repo(self, repo_id: str) -> RepoInfo | None:
        """Return the registered repository ``repo_id``, or ``None``.

        Raises:
            InvalidInputError: The repository id is empty or malformed.
        """
        return self._registry.get(repo_id)

    def list_repos(self) -> list[RepoInfo]:
        """Return every registered repository in ascending id order."""
        return sorted(
            (
                dataclasses.replace(info, vectors=self._semantic.ready_vectors(info.repo_id))
                for info in self._registry.iter_repos()
            ),
            key=lambda info: info.repo_id,
        )

    def health(
        self, repo_id: str | None = None, *, visible: Callable[[str], bool] | None = None
    ) -> HealthReport:
        """Report service and retrieval health, optionally for one repository.

        An unknown ``repo_id`` is not an error: its verdict is ``unknown``.

        Args:
            repo_id: Also report on this repository.
            visible: Count only the repositories it accepts (a caller's grant).

        Raises:
            StoreError: The store could not be read.
        """
        repos = [r for r in self.list_repos() if visible is None or visible(r.repo_id)]
        return health_report(repos, repo_id)

    def store_health(self) -> StoreHealth:
        """Probe the store's engine once: reachable or not, and its round-trip latency."""
        return store_health(self._store)

    def remove_repo(self, repo_id: str) -> RepoRemoval:
        """Unregister a repository and delete every record of it; files on disk stay.

        Its code index, memory, sessions and vector records are tombstoned (see
        :mod:`repocontext.index.removal`), its keyword index and vector plane deleted. An
        unknown id is a no-op whose counts are all zero.

        Raises:
            InvalidInputError: The repository id is empty or malformed.
            IndexRunningError: An index run of the repository is in progress; nothing was
                deleted (wait for it to end and call again).
        """
        repo_id = checked_repo_id(repo_id)
        with self._index.exclusive(repo_id):
            with self._semantic.dropping(repo_id):  # no pass writes during or after the sweep
                removal = remove_repo_records(self._store, repo_id)
            self._search.drop(repo_id)
        return removal

    def reset_index(self, repo_id: str) -> IndexReset:
        """Drop a repository's code index and keep its memory, sessions and registration.

        The repository reads as not indexed (``building``) until :meth:`bootstrap` runs again.

        Raises:
            InvalidInputError: The repository id is empty or malformed.
            NotFoundError: The repository is not registered.
            IndexRunningError: An index run of the repository is in progress.
        """
        repo_id = checked_repo_id(repo_id)
        with self._index.exclusive(repo_id):
            with self._semantic.dropping(repo_id):
                reset = reset_index_records(self._store, repo_id)
            self._search.drop(repo_id)
        return reset

    # -- the index -------------------------------------------------------------------------

    def index_status(self, repo_id: str) -> IndexStatus:
        """The status of the repository's latest index run (``none`` before any)."""
        return self._index.status(repo_id)

    def wait_indexed(self, repo_id: str, timeout: float | None = None) -> IndexStatus:
        """Wait for a background index run of the repository to end; return its status."""
        return self._index.wait(repo_id, timeout)

    def refresh(self, repo_id: str, paths: Iterable[str]) -> IndexProgress:
        """Re-index only ``paths`` (files or directories) of an indexed repository.

        Raises:
            NotFoundError: The repository is not registered.
            IndexRunningError: An index run of the repository is in progress.
        """
        return self._index.refresh(repo_id, paths)

    def outline(self, repo_id: str, path: str, max_symbols: int | None = None) -> OutlineView:
        """The stored outline of a file (at most ``max_symbols`` symbols, depth first).

        Raises:
            NotFoundError: The repository is not registered.
        """
        return self._index.outline(repo_id, path, max_symbols)

    def files(self, repo_id: str) -> tuple[FileNode, ...]:
        """Every indexed file of the repository, in path order, with its stored outline.

        What a caller that ranks or resolves paths itself reads (the Lattice kernel).

        Raises:
            NotFoundError: The repository is not registered.
        """
        return self._index.files(repo_id)

    def related(
        self, repo_id: str, path: str, *, offset: int = 0, limit: int = RELATED_PAGE
    ) -> RelatedView:
        """A file's imports, references, dependents and covering tests, a page of each.

        Raises:
            NotFoundError: The repository is not registered.
        """
        return self._index.related(repo_id, path, offset=offset, limit=limit)

    def changed(self, repo_id: str, scope: str | None = None) -> DriftReport:
        """Compare the working tree with the index (see :mod:`repocontext.index.drift`).

        Raises:
            NotFoundError: The repository is not registered.
            RootChangedError: The repository root now resolves elsewhere.
        """
        return self._index.changed(repo_id, scope)

    # -- retrieval -------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchResult:
        """Rank files (and memory entries) for a query, each hit with its reasons.

        Raises:
            NotFoundError: The repository is not registered.
            InvalidInputError: The query is empty.
            VectorsUnavailableError: The request's mode needs vectors and none can answer.
        """
        return self._search.search(
            request.repo_id,
            request.query,
            request.k,
            request.scope,
            retrieval=request.mode,
            files=request.files,
        )

    def search_warnings(self, repo_id: str) -> tuple[str, ...]:
        """What a keyword-only answer for the repository warns about now (embedder mismatch)."""
        return warnings_of(self._semantic, repo_id)

    def context(self, request: ContextRequest) -> Bundle:
        """Build a context bundle (see :mod:`repocontext.pack.bundle`) and count it in stats.

        Raises:
            NotFoundError: The repository is not registered.
            InvalidInputError: The task is empty.
        """
        request = dataclasses.replace(request, encoding=self.settings.token_encoding)
        bundle = build_bundle(self._store, self._search, self._clock, request)
        self._call_stats.record(bundle.response_tokens, bundle.reads_replaced)
        return bundle

    def usage(self, window_seconds: float | None = None) -> CallStats:
        """Token economics of the bundles this process served in a recent window."""
        return self._call_stats.window(window_seconds)

    def usage_totals(self) -> CallStats:
        """Token economics of every bundle this process served (the ``/metrics`` counters)."""
        return self._call_stats.totals()

    def embed(
        self, repo_id: str, on_progress: Callable[[int, int], None] | None = None
    ) -> EmbedReport | None:
        """Run one embedding pass of the repository now; ``None`` without an embedder.

        Raises:
            EmbeddingStoppedError: The workspace closed, or the repository was removed or
                reset, while the pass ran (it wrote nothing more).
        """
        return self._semantic.refresh(repo_id, on_progress)

    def wait_embedded(self, repo_id: str, timeout: float | None = None) -> None:
        """Wait for the background embedding pass of the repository to end."""
        self._semantic.wait(repo_id, timeout)

    # -- memory ----------------------------------------------------------------------------

    def recall(self, key: str) -> Entry:
        """The entry stored under any key (see :mod:`repocontext.entries`).

        Raises:
            InvalidKeyError: The key does not follow the key grammar.
            InvalidInputError: The key's family cannot be recalled.
        """
        return recall(self._store, key)

    def recall_note(self, key: str) -> MemoryEntry:
        """The memory entry under ``key`` (absent, forgotten or expired: ``exists`` false).

        Raises:
            WrongFamilyError: The key is not a memory key.
        """
        return self._memory.recall(key)

    def scan(
        self,
        repo_id: str,
        scope: Scope,
        *,
        topic: str | None = None,
        path_prefix: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        token: str | None = None,
    ) -> EntryPage:
        """A page of the live entries of one scope of a repository.

        Raises:
            NotFoundError: The repository is not registered.
            InvalidInputError: The scope, topic or prefix is invalid.
            InvalidTokenError: The continuation token is malformed.
        """
        return scan(
            self._store,
            repo_id,
            scope,
            topic=topic,
            path_prefix=path_prefix,
            page_size=page_size,
            token=token,
        )

    def remember(self, repo_id: str, topic: str, **note: Unpack[NoteFields]) -> MemoryEntry:
        """Create or rewrite a memory entry (the fields: :meth:`MemoryService.remember`).

        Raises:
            RepoContextError: ``repo.not_found``, ``input.invalid``, a ``claim.*`` refusal.
        """
        return self._memory.remember(repo_id, topic, **note)

    def update(self, key: str, **changes: Unpack[NoteChanges]) -> MemoryEntry:
        """Change a live memory entry (the changes: :meth:`MemoryService.update`).

        Raises:
            RepoContextError: ``memory.not_found``, ``memory.wrong_family``,
                ``input.invalid``, a ``claim.*`` refusal.
        """
        return self._memory.update(key, **changes)

    def forget(
        self,
        key: str,
        *,
        lapse: bool = False,
        lapse_seconds: float | None = None,
        fencing_token: int | None = None,
    ) -> Forgotten:
        """Delete a memory entry now, or let it lapse (see :meth:`MemoryService.forget`).

        Raises:
            RepoContextError: ``memory.wrong_family``, ``input.invalid``, ``claim.*``.
        """
        return self._memory.forget(
            key, lapse=lapse, lapse_seconds=lapse_seconds, fencing_token=fencing_token
        )

    def list_topics(self, repo_id: str) -> list[TopicCount]:
        """The topics of a repository's memory with their live entry counts.

        Raises:
            NotFoundError: The repository is not registered.
        """
        return self._memory.list_topics(repo_id)

    def neighbors(
        self, key: str, *, relation: str | None = None, depth: int = 1, max_nodes: int = 50
    ) -> Neighbors:
        """The keys a memory entry links to, breadth first (see :mod:`repocontext.memory`).

        Raises:
            RepoContextError: ``memory.wrong_family``, ``input.invalid``.
        """
        return self._memory.neighbors(key, relation=relation, depth=depth, max_nodes=max_nodes)

    def set_default_ttl(self, repo_id: str, seconds: float | None) -> None:
        """Set (or clear, with ``None``) the default TTL of the repository's new entries.

        Raises:
            NotFoundError: The repository is not registered.
            InvalidInputError: ``seconds`` is not positive.
        """
        self._memory.set_default_ttl(repo_id, seconds)

    def default_ttl(self, repo_id: str) -> float | None:
        """The default TTL of the repository's new memory entries, if any.

        Raises:
            NotFoundError: The repository is not registered.
        """
        return self._memory.default_ttl(repo_id)

    # -- claims ----------------------------------------------------------------------------

    def claim(self, key: str, owner: str, **options: Unpack[ClaimOptions]) -> ClaimResult:
        """Claim a memory entry, waiting in FIFO order (see :mod:`repocontext.claims`).

        Raises:
            RepoContextError: ``memory.wrong_family``, ``input.invalid``.
        """
        return self._claims.claim(key, owner, **options)

    async def claim_async(
        self, key: str, owner: str, **options: Unpack[ClaimOptions]
    ) -> ClaimResult:
        """:meth:`claim` for an event loop: waits without holding a thread.

        Raises:
            RepoContextError: ``memory.wrong_family``, ``input.invalid``.
        """
        return await self._claims.claim_async(key, owner, **options)

    def claim_next(
        self, repo_id: str, topic: str, owner: str, *, lease_seconds: float | None = None
    ) -> ClaimResult:
        """Claim the oldest unclaimed live entry of a topic (a backlog).

        Raises:
            RepoContextError: ``repo.not_found``, ``input.invalid``.
        """
        return self._claims.claim_next(repo_id, topic, owner, lease_seconds=lease_seconds)

    def renew_claim(
        self, key: str, fencing_token: int, *, lease_seconds: float | None = None
    ) -> RenewResult:
        """Extend a held claim's lease (``superseded`` when the claim moved on).

        Raises:
            RepoContextError: ``memory.wrong_family``, ``input.invalid``.
        """
        return self._claims.renew(key, fencing_token, lease_seconds=lease_seconds)

    def release_claim(self, key: str, fencing_token: int) -> ReleaseResult:
        """Release a held claim.

        Raises:
            RepoContextError: ``memory.wrong_family``, ``input.invalid``.
        """
        return self._claims.release(key, fencing_token)

    def claim_status(self, key: str) -> ClaimStatus:
        """The claim state of a memory entry (advisory: ``authoritative`` is false).

        Raises:
            RepoContextError: ``memory.wrong_family``.
        """
        return self._claims.status(key)
