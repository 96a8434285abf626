"""The workspace facade: the repository registry, the path guard and retrieval health.

Every surface (MCP tools, HTTP routes, the CLI) talks to the domain through one
:class:`Workspace`. It owns the open :class:`~repocontext.store.Store`, checks every path a
caller passes against the workspace root (symlinks resolved) and answers in frozen dataclasses.

Retrieval phases (``HealthReport.retrieval_phase``):

* ``nothing_registered`` — no repository is registered; nothing to search yet (ready).
* ``building`` — some registered repository has no finished index yet (not ready). Until the
  indexer lands, a freshly registered repository stays in this phase.
* ``keyword_only`` — every repository is indexed, some without vectors (ready).
* ``serving`` — every repository is indexed with vectors (ready).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from repocontext.claims import ClaimService
from repocontext.errors import (
    InvalidInputError,
    NoWorkspaceRootError,
    PathOutsideWorkspaceError,
    RepoConflictError,
    RepoContextError,
)
from repocontext.index.job import ProgressFn
from repocontext.index.reconcile import Reconciler
from repocontext.index.removal import (
    IndexReset,
    RepoRemoval,
    remove_repo_records,
    reset_index_records,
)
from repocontext.index.service import IndexService, IndexStatus
from repocontext.index.walk import WalkOptions, check_root, resolve_path
from repocontext.memory import ARCHIVE_NAME, MemoryArchiver, MemoryService
from repocontext.pack.bundle import Bundle, ContextRequest, build_bundle
from repocontext.pack.stats import StatsWindow
from repocontext.search.semantic import SemanticService
from repocontext.search.service import SearchService
from repocontext.settings import Settings
from repocontext.store import (
    STRUCTURAL,
    Clock,
    Record,
    Store,
    StoreStats,
    Sweeper,
    SweepReport,
    SystemClock,
    Value,
)
from repocontext.store.clock import iso_utc
from repocontext.store.keys import decode_component, encode_component, repo_key

__all__ = [
    "HealthReport",
    "RepoInfo",
    "RepositoryHealth",
    "RetrievalPhase",
    "Verdict",
    "Workspace",
]

RetrievalPhase = Literal["serving", "keyword_only", "nothing_registered", "building"]
Verdict = Literal["serving", "keyword_only", "building", "unknown"]

_log = logging.getLogger(__name__)

GROUP: Final = "repocontext"
_REPO_SCAN_PREFIX: Final = "repo/"
MAX_REPO_ID_BYTES: Final = 128
"""Longest repository id (key-encoded): a key holds 480 bytes, and the paths need the rest."""


@dataclass(frozen=True, slots=True)
class RepoInfo:
    """A registered repository.

    Attributes:
        repo_id: The repository id (unique in the store).
        root: Absolute, symlink-free path of the repository root.
        registered_at: When it was registered (ISO 8601, UTC).
        files: Files in its index.
        indexed_at: When its last index pass finished (ISO 8601, UTC), or ``None``.
        vectors: Vectors in its semantic index.
        last_ingested_at: When the last file change was ingested, or ``None``.
        indexed_commit: Git commit the index reflects, or ``None``.
    """

    repo_id: str
    root: str
    registered_at: str | None
    files: int
    indexed_at: str | None
    vectors: int
    last_ingested_at: str | None = None
    indexed_commit: str | None = None


@dataclass(frozen=True, slots=True)
class RepositoryHealth:
    """Retrieval health of one repository.

    Attributes:
        verdict: ``serving``, ``keyword_only``, ``building`` or ``unknown``.
        reason: One sentence explaining the verdict.
        files: Files in its index.
        vectors_indexed: Vectors in its semantic index.
        indexed_at: When its last index pass finished, or ``None``.
    """

    verdict: Verdict
    reason: str
    files: int
    vectors_indexed: int
    indexed_at: str | None


@dataclass(frozen=True, slots=True)
class HealthReport:
    """Health of the service and its retrieval plane.

    Attributes:
        available: The service answered (reachability only).
        group: Always ``repocontext``.
        status: ``ok`` when the store answered a read.
        retrieval_ready: False only while the phase is ``building``.
        retrieval_phase: See the module docstring.
        repositories: Registered repositories.
        repository: Health of the repository asked about, when one was.
    """

    available: bool
    group: str
    status: str
    retrieval_ready: bool
    retrieval_phase: RetrievalPhase
    repositories: int
    repository: RepositoryHealth | None = None


class Workspace:
    """The facade every surface uses; one per process, opened from :class:`Settings`."""

    def __init__(self, settings: Settings, store: Store, clock: Clock) -> None:
        """Wrap an open store (use :meth:`open`)."""
        self.settings = settings
        self._store = store
        self._clock = clock
        self._sweeper: Sweeper | None = None
        self._reconciler: Reconciler | None = None
        self.semantic = SemanticService(
            store, settings.data_dir / "vectors", settings.embedder, clock
        )
        """The embedding phase (scheduled after every index run that changed files)."""
        self.index = IndexService(
            store, clock, encoding=settings.token_encoding, on_changed=self.semantic.schedule
        )
        """Index jobs and views (outline, related, changed) over this workspace's store."""
        self.search = SearchService(store, settings.data_dir / "search", self.semantic)
        self.memory = MemoryService(store, on_write=self.semantic.schedule)
        self.archiver: MemoryArchiver | None = None
        """The memory archive (``settings.archive_dir``); restored and started with the
        background work, exported once more on close. Never set for a read-only store."""
        if settings.archive_dir is not None and not store.backend.read_only:
            self.archiver = MemoryArchiver(
                store,
                settings.archive_dir / ARCHIVE_NAME,
                interval_seconds=settings.archive_interval_seconds,
                on_restore=self.semantic.schedule,
            )
        self.claims = ClaimService(
            store,
            default_lease_seconds=settings.claim_default_lease_seconds,
            max_lease_seconds=settings.claim_max_lease_seconds,
        )
        """Keyword retrieval with reasons; its indexes are projections of the store."""
        self.call_stats = StatsWindow(clock)
        """Token figures of the context bundles served by this process."""

    @classmethod
    def open(
        cls, settings: Settings, *, clock: Clock | None = None, read_only: bool = False
    ) -> Workspace:
        """Open the store under ``settings.data_dir``.

        Raises:
            StoreReadOnlyError: The data directory cannot be written.
            StoreUnavailableError: The store cannot be opened.
        """
        clock = clock or SystemClock()
        store = Store.open(
            settings.data_dir,
            read_only=read_only,
            clock=clock,
            feed_max_events=settings.feed_max_events,
        )
        return cls(settings, store, clock)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop background work and close the store (idempotent)."""
        if self._reconciler is not None:
            self._reconciler.stop()
            self._reconciler = None
        if self._sweeper is not None:
            self._sweeper.stop()
            self._sweeper = None
        if self.archiver is not None:
            self.archiver.stop()  # the shutdown export, while the store is still open
        self.semantic.close()
        self.search.close()
        self._store.close()

    @property
    def store(self) -> Store:
        """The store every view reads (the same one the index writes)."""
        return self._store

    def start_background(self, *, sweep_interval_seconds: float = 60.0) -> None:
        """Restore the memory archive, then start its exports, the TTL sweeper and reconciling.

        With ``settings.archive_dir`` the archive is first merged per ``archive_restore`` and
        then exported periodically (see :mod:`repocontext.memory.archiver`). The sweeper turns
        expired records into tombstones and compacts old ones; the reconcile loop keeps every
        indexed repository fresh (see :mod:`repocontext.index.reconcile`).

        Raises:
            ArchiveCorruptError: The archive to restore is damaged (nothing was written and
                nothing was started).
            StoreReadOnlyError: The archive directory cannot be written (the restore ran,
                nothing was started).
        """
        if self._store.backend.read_only:
            return
        if self.archiver is not None and not self.archiver.running:
            # Before anything else writes: ``auto`` must see whether memory is empty.
            self.archiver.restore(self.settings.archive_restore)
            self.archiver.start()
        if self._sweeper is None:
            self._sweeper = Sweeper(self._store, interval_seconds=sweep_interval_seconds)
            self._sweeper.start()
        if self._reconciler is None:
            self._reconciler = Reconciler(
                self._indexed_roots,
                self.index.refresh,
                self.index.reindex,
                mode=self.settings.reconcile,
                interval_seconds=self.settings.reconcile_interval_seconds,
                ignore_paths=(self.settings.data_dir,),
                warm=self.index.warm,
            )
            self._reconciler.start()
            self._resume_first_passes()

    def _resume_first_passes(self) -> None:
        """Start again, in the background, each first index pass that failed or was killed.

        The reconcile loop keeps only finished indexes fresh; a repository whose first pass
        died with its process would otherwise stay unindexed (and the server "building")
        for good. A repository reset on purpose has no failed run, so it stays as it is.
        """
        for info in self.list_repos():
            if info.indexed_at or self.index.status(info.repo_id).status != "failed":
                continue
            record = self._store.get(STRUCTURAL, repo_key(info.repo_id))
            value = record.value if record is not None and isinstance(record.value, dict) else {}
            filters = value.get("filters")
            _log.info("resuming the first index pass of %s", info.repo_id)
            try:
                self.index.start(info.repo_id, Path(info.root), WalkOptions.from_wire(filters))
            except RepoContextError as exc:  # (a root gone since: reported by its status)
                _log.warning("cannot resume %s: %s (%s)", info.repo_id, exc.code, exc.message)

    @property
    def reconciler(self) -> Reconciler | None:
        """The running reconcile loop, if any."""
        return self._reconciler

    def _indexed_roots(self) -> dict[str, Path]:
        # Repositories whose first pass finished; the others are still being bootstrapped.
        return {r.repo_id: Path(r.root) for r in self.list_repos() if r.indexed_at}

    def sweep(self) -> SweepReport:
        """Run one TTL sweep now and return what it did."""
        return self._store.sweep()

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
            InvalidInputError: The repository id is empty or malformed.
            RepoConflictError: The id is registered for another directory.
        """
        root = self._guard(path)
        repo_id = _check_repo_id(repo_id if repo_id is not None else root.name)
        key = repo_key(repo_id)
        existing = self._store.get(STRUCTURAL, key)
        if existing is not None:
            info = _repo_info(repo_id, existing)
            if info.root == str(root):
                return info
            raise RepoConflictError(
                f"repository id {repo_id!r} is already registered at {info.root}"
            )
        value: dict[str, Value] = {
            "root": str(root),
            "registeredAt": iso_utc(self._clock.now()),
            "files": 0,
            "indexedAt": None,
            "vectors": 0,
        }
        return _repo_info(repo_id, self._store.put(STRUCTURAL, key, value))

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
            NoWorkspaceRootError: The workspace has no root to check paths against.
            DangerousRootError: The path is the filesystem root or the home directory.
            PathOutsideWorkspaceError: The path resolves outside the workspace root.
            PathNotFoundError: The path is not an existing directory.
            RepoConflictError: The id is registered for another directory.
            InvalidInputError: A glob can never match, or the id is malformed or too long.
        """
        if options is not None:
            options.check()  # before anything is written
        info = self.register_repo(root, repo_id)
        key = repo_key(info.repo_id)
        record = self._store.get(STRUCTURAL, key)
        value = dict(record.value) if record is not None and isinstance(record.value, dict) else {}
        if options is None:  # the filters of the last run; the size cap is this process's
            options = dataclasses.replace(
                WalkOptions.from_wire(value.get("filters")),
                max_file_bytes=self.settings.max_file_bytes,
            )
        filters = options.to_wire()
        if value.get("filters") != filters:
            value["filters"] = filters
            self._store.put(STRUCTURAL, key, value)
        root_path = Path(info.root)
        if background:
            return self.index.start(info.repo_id, root_path, options)
        return self.index.run(info.repo_id, root_path, options, on_progress)

    def context(self, request: ContextRequest) -> Bundle:
        """Build a context bundle (see :mod:`repocontext.pack.bundle`) and count it in stats.

        Raises:
            NotFoundError: The repository is not registered.
            InvalidInputError: The task is empty.
        """
        request = dataclasses.replace(request, encoding=self.settings.token_encoding)
        bundle = build_bundle(self._store, self.search, self._clock, request)
        self.call_stats.record(bundle.response_tokens, bundle.reads_replaced)
        return bundle

    def get_repo(self, repo_id: str) -> RepoInfo | None:
        """Return the registered repository ``repo_id``, or ``None``.

        Raises:
            InvalidInputError: The repository id is empty or malformed.
        """
        record = self._store.get(STRUCTURAL, repo_key(_check_repo_id(repo_id)))
        return _repo_info(repo_id, record) if record is not None else None

    def list_repos(self) -> list[RepoInfo]:
        """Return every registered repository in ascending id order."""
        return sorted(
            (
                dataclasses.replace(info, vectors=self.semantic.ready_vectors(info.repo_id))
                for info in self._iter_repos()
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
        phase = _phase(repos)
        repository = None
        if repo_id is not None:
            known = next((r for r in repos if r.repo_id == repo_id), None)
            repository = _repository_health(repo_id, known)
        return HealthReport(
            available=True,
            group=GROUP,
            status="ok",
            retrieval_ready=phase != "building",
            retrieval_phase=phase,
            repositories=len(repos),
            repository=repository,
        )

    def stats(self) -> StoreStats:
        """Return the store's statistics (path, sizes, records per tree)."""
        return self._store.stats()

    def _guard(self, path: Path | str) -> Path:
        workspace_root = self.settings.workspace_root
        if workspace_root is None:
            raise NoWorkspaceRootError(f"cannot register {path}: no workspace root is configured")
        if not str(path).strip() or "\x00" in str(path):
            raise InvalidInputError(
                f"{str(path)!r} is no repository path", hint="Pass the repository directory."
            )
        given = Path(path).expanduser()
        # A relative path is relative to the workspace root, not to the server's directory.
        # Outside the root is refused before anything else is looked at (existence included).
        resolved = resolve_path(given if given.is_absolute() else workspace_root / given)
        if not resolved.is_relative_to(workspace_root.expanduser().resolve()):
            raise PathOutsideWorkspaceError(
                f"{path} resolves to {resolved}, outside the workspace root {workspace_root}"
            )
        return check_root(resolved)

    def _iter_repos(self) -> Iterator[RepoInfo]:
        # The registry shares the structural tree with file records; only keys with exactly
        # two components (repo/{id}) are repository records. Each repository's subtree
        # (repo/{id}/...) is skipped in one jump, so the cost grows with repositories, not files.
        start: str | None = None
        while True:
            page = self._store.scan(STRUCTURAL, _REPO_SCAN_PREFIX, limit=1, start=start)
            if not page.records:
                return
            key = page.records[0].key
            head, _, rest = key.partition("/")
            encoded_id, slash, _ = rest.partition("/")
            if not slash:
                yield _repo_info(decode_component(encoded_id), page.records[0])
                start = key + "\x00"
            else:
                start = f"{head}/{encoded_id}0"  # '0' sorts right after '/'

    def remove_repo(self, repo_id: str) -> RepoRemoval:
        """Unregister a repository and delete every record of it; files on disk stay.

        Its code index, memory, sessions and vector records are tombstoned in the store
        (see :mod:`repocontext.index.removal`), its keyword index and vector plane are
        deleted, and its cached index state dropped. The reconcile loop stops watching it at
        its next tick (it lists registered, indexed repositories). An unknown id is a no-op
        whose counts are all zero.

        Raises:
            InvalidInputError: The repository id is empty or malformed.
            IndexRunningError: An index run of the repository is in progress; nothing was
                deleted (runs are never cut short; wait for it to end and call again).
        """
        repo_id = _check_repo_id(repo_id)
        with self.index.exclusive(repo_id):
            self.semantic.drop(repo_id)  # before the sweep: a pass must not write after it
            removal = remove_repo_records(self._store, repo_id)
            self.search.drop(repo_id)
        return removal

    def reset_index(self, repo_id: str) -> IndexReset:
        """Drop a repository's code index and keep its memory, sessions and registration.

        File, package, symbol, content, cross-reference and vector records are tombstoned,
        the keyword index and vector plane deleted, and the registration's index fields
        cleared, so the repository reads as not indexed (``building``) until
        :meth:`bootstrap` indexes it again. The reconcile loop leaves it alone meanwhile.

        Raises:
            InvalidInputError: The repository id is empty or malformed.
            NotFoundError: The repository is not registered.
            IndexRunningError: An index run of the repository is in progress; nothing was
                deleted.
        """
        repo_id = _check_repo_id(repo_id)
        with self.index.exclusive(repo_id):
            self.semantic.drop(repo_id)
            reset = reset_index_records(self._store, repo_id)
            self.search.drop(repo_id)
        return reset


def _check_repo_id(repo_id: str) -> str:
    if not repo_id or repo_id in (".", "..") or repo_id != repo_id.strip():
        raise InvalidInputError(
            f"invalid repository id {repo_id!r}",
            hint="Use a short name such as the directory name, without surrounding spaces.",
        )
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in repo_id):
        raise InvalidInputError(f"repository id {repo_id!r} holds a control character")
    if len(encode_component(repo_id).encode()) > MAX_REPO_ID_BYTES:
        raise InvalidInputError(
            f"repository id {repo_id[:40]!r}... is too long",
            hint=f"Use at most {MAX_REPO_ID_BYTES} bytes (once key-encoded), so every file"
            " path of the repository still fits in a key.",
        )
    return repo_id


def _repo_info(repo_id: str, record: Record) -> RepoInfo:
    value = record.value if isinstance(record.value, dict) else {}
    return RepoInfo(
        repo_id=repo_id,
        root=str(value.get("root", "")),
        registered_at=_opt_str(value.get("registeredAt")),
        files=_int(value.get("files")),
        indexed_at=_opt_str(value.get("indexedAt")),
        vectors=_int(value.get("vectors")),
        last_ingested_at=_opt_str(value.get("lastIngestedAt")),
        indexed_commit=_opt_str(value.get("indexedCommit")),
    )


def _phase(repos: list[RepoInfo]) -> RetrievalPhase:
    if not repos:
        return "nothing_registered"
    if any(r.indexed_at is None for r in repos):
        return "building"
    if all(r.vectors > 0 for r in repos):
        return "serving"
    return "keyword_only"


def _repository_health(repo_id: str, info: RepoInfo | None) -> RepositoryHealth:
    if info is None:
        return RepositoryHealth(
            verdict="unknown",
            reason=f"no repository {repo_id!r} is registered; call repocontext_list_repos",
            files=0,
            vectors_indexed=0,
            indexed_at=None,
        )
    verdict: Verdict
    if info.indexed_at is None:
        verdict, reason = "building", "registered; its first index pass has not finished"
    elif info.vectors > 0:
        verdict, reason = "serving", "indexed with vectors; keyword and semantic search work"
    else:
        verdict, reason = "keyword_only", "indexed without vectors; search is keyword-only"
    return RepositoryHealth(
        verdict=verdict,
        reason=reason,
        files=info.files,
        vectors_indexed=info.vectors,
        indexed_at=info.indexed_at,
    )


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
