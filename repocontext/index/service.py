"""The indexer as a service: background jobs per repository and the read views over the index.

One :class:`IndexService` per store. ``start`` runs an :class:`IndexJob` in a daemon thread
and returns at once (one job per repository at a time); ``run`` runs it in the caller's
thread (the CLI, with a progress bar); ``refresh`` re-indexes only the given paths (the
reconcile loop). Jobs of one repository never overlap. The service keeps each repository's
:class:`ProjectionState` between jobs, so a small change updates only the projection records
it affects. Status lives in the repository record, so any process can read it; a
``running`` status whose process is gone is reported as ``failed``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from repocontext.errors import (
    IndexRunningError,
    NotFoundError,
    PathOutsideWorkspaceError,
    RepoContextError,
)
from repocontext.index.drift import DriftReport, detect_drift, scope_prefix
from repocontext.index.files.nodes import (
    file_text,
    iter_file_nodes,
    load_stats,
    node_of,
    read_file_node,
)
from repocontext.index.files.roots import checked_root, file_path, is_under
from repocontext.index.files.walk import WalkOptions, keyable
from repocontext.index.model import FileNode, RelatedLink, Symbol, count_tree, first_of_tree
from repocontext.index.projections.projection import ProjectionState
from repocontext.index.projections.projection_writer import load_projections
from repocontext.index.projections.xref_records import stored_links
from repocontext.index.run._collector import collector_paused
from repocontext.index.run.job import IndexJob
from repocontext.index.run.status import (
    HOST,
    IndexProgress,
    IndexStatus,
    ProgressFn,
    RunRecord,
    pid_alive,
    recorded_status,
)
from repocontext.store import (
    Clock,
    RepoRecord,
    Store,
    read_embed_status,
    read_repo,
)
from repocontext.tokens import DEFAULT_ENCODING

__all__ = ["IndexService", "OutlineView", "RelatedView"]

_log = logging.getLogger(__name__)

START_WAIT_S: Final = 5.0
EXCLUSIVE_WAIT_S: Final = 10.0
RELATED_PAGE: Final = 50
"""Items per list of a related view (a central module has hundreds of dependents)."""
MAX_RELATED_PAGE: Final = 500
_LOCK_POLL_S: Final = 0.05
"""How long :meth:`IndexService.exclusive` waits for a refresh in progress to end."""


@dataclass(frozen=True, slots=True)
class OutlineView:
    """A file's outline as stored (what ``repocontext_outline`` returns).

    Attributes:
        exists: Whether the path has a node.
        language: Its language id (``None``: no parser, no symbols).
        token_count: Exact tokens of the whole file (``None`` when it does not exist).
        symbols: The kept symbols, nested (the first ``max_symbols``, depth first).
        syntax_errors: The parser met a syntax error (the outline is best effort).
        symbol_count: The file's total symbols, nested ones included.
        truncated: Fewer symbols kept than the file has.
    """

    exists: bool
    language: str | None = None
    token_count: int | None = None
    symbols: tuple[Symbol, ...] = ()
    syntax_errors: bool = False
    symbol_count: int = 0
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class RelatedView:
    """A file's links, each with the reason it was made (``repocontext_related``).

    Attributes:
        exists: Whether the path has a node.
        imports: Files it imports.
        references: Files defining names it uses.
        dependents: Files importing or referencing it.
        covering_tests: Tests that cover it.
        truncated: Some list holds more than this page.
        next_offset: The ``offset`` of the next page, when ``truncated``.
    """

    exists: bool
    imports: tuple[RelatedLink, ...] = ()
    references: tuple[RelatedLink, ...] = ()
    dependents: tuple[RelatedLink, ...] = ()
    covering_tests: tuple[RelatedLink, ...] = ()
    truncated: bool = False
    next_offset: int | None = None


class IndexService:
    """Index jobs and index views over one store."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        encoding: str = DEFAULT_ENCODING,
        on_changed: Callable[[str], None] | None = None,
    ) -> None:
        """Bind the service to a store; ``on_changed(repo_id)`` follows runs that changed files."""
        self.store = store
        self._on_changed = on_changed
        self.clock = clock
        self.encoding = encoding
        self._lock = threading.Lock()
        self._threads: dict[str, threading.Thread] = {}
        self._states: dict[str, ProjectionState] = {}
        self._repo_locks: dict[str, threading.Lock] = {}
        self._running_options: dict[str, WalkOptions] = {}
        self._follow_up: dict[str, tuple[Path, WalkOptions, list[threading.Event]]] = {}

    def start(self, repo_id: str, root: Path, options: WalkOptions) -> IndexStatus:
        """Start a background run (or join the one already running) and return its status."""
        started = threading.Event()
        with self._lock:
            thread = self._threads.get(repo_id)
            if thread is None or not thread.is_alive():
                thread = threading.Thread(
                    target=self._run_quietly,
                    args=(repo_id, root, options, [started]),
                    name=f"index-{repo_id}",
                    daemon=True,
                )
                self._threads[repo_id] = thread
                self._running_options[repo_id] = options
                thread.start()
            else:
                if self._running_options.get(repo_id) != options:
                    # Joined, but with other filters: one more pass runs with them after,
                    # and this call returns once that pass has recorded "running" (not the
                    # status of the pass it joined, which may have just completed).
                    waiting = self._follow_up.get(repo_id, (root, options, []))[2]
                    self._follow_up[repo_id] = (root, options, [*waiting, started])
                else:
                    started.set()
        # Until the job has recorded "running" (a refresh in progress delays it a moment).
        started.wait(START_WAIT_S)
        return self.status(repo_id)

    def run(
        self, repo_id: str, root: Path, options: WalkOptions, on_progress: ProgressFn | None = None
    ) -> IndexStatus:
        """Run a pass in this thread and return its final status.

        Raises:
            RepoContextError: The pass failed.
        """
        self._execute(repo_id, root, options, on_progress)
        return self.status(repo_id)

    def refresh(self, repo_id: str, paths: Iterable[str]) -> IndexProgress:
        """Re-index only ``paths`` (files or directories, relative to the root or absolute).

        Added, changed and deleted files under them are applied and the projections they
        affect updated; the rest of the index is not looked at. A repository without a
        finished index (reset since the reconcile loop listed it) is left alone.

        Raises:
            NotFoundError: No repository ``repo_id`` is registered.
            RootChangedError: The root was swapped for a symlink since it was registered.
            PathOutsideWorkspaceError: A path is outside the indexed root as written (one
                inside it that a symlinked directory leads out of is skipped).
        """
        repo = self._repo(repo_id)
        # (first: a root swapped for a symlink is refused, not read as paths leading out)
        root = checked_root(repo_id, repo.root, Path(repo.root))
        scope: set[str] = set()
        for path in paths:
            try:
                prefix = scope_prefix(root, path).rstrip("/")
            except PathOutsideWorkspaceError:
                if not is_under(os.path.normpath(root / path), str(root)):
                    raise  # named outside the root
                # (under the root as written, out of it through a symlinked directory: an
                # event inside a link the walk never follows)
                _log.warning("refresh of %s skips %r: it leads outside the root", repo_id, path)
                continue
            if prefix and not keyable(repo_id, prefix):
                # (no file of that name can be indexed, none under it either: a name with a
                # control character, or too long for a key)
                _log.warning("refresh of %s skips %r: no store key can hold it", repo_id, prefix)
                continue
            # A file or a directory; it may have been the other one (deleted, or replaced by
            # a directory of that name): both are refreshed.
            scope.update((prefix, prefix + "/") if prefix else ("",))
        if not scope:
            return IndexProgress(phase="reconciling")  # nothing that can be indexed
        options = WalkOptions.from_wire(repo.filters)
        return self._execute(repo_id, root, options, None, scope=sorted(scope), keep_fresh=True)

    def reindex(self, repo_id: str) -> IndexProgress:
        """Run a full incremental pass with the repository's stored root and filters.

        Like :meth:`refresh`, it leaves a repository without a finished index alone.

        Raises:
            NotFoundError: No repository ``repo_id`` is registered.
        """
        repo = self._repo(repo_id)
        root = Path(repo.root)
        options = WalkOptions.from_wire(repo.filters)
        return self._execute(repo_id, root, options, None, keep_fresh=True)

    def warm(self, repo_id: str) -> bool:
        """Load the projection state of a repository, writing nothing.

        Done ahead of the first change (the reconcile loop does it when it starts watching),
        so that change is applied incrementally. Only a consistent index is loaded: one
        whose projections are not marked dirty and carry the stamp of their last writer
        (see :func:`~repocontext.index.projections.projection_writer.load_projections`).

        Returns:
            True when a warm state is now held.
        """
        with self._repo_lock(repo_id):
            if repo_id in self._states:
                return True
            with collector_paused():  # (as IndexJob.run)
                state = load_projections(self.store, repo_id, self._repo(repo_id))
            if state is None:
                return False
            self._states[repo_id] = state
            return True

    def wait(self, repo_id: str, timeout: float | None = None) -> IndexStatus:
        """Wait for a background run to end (tests, shutdown) and return the status."""
        thread = self._threads.get(repo_id)
        if thread is not None:
            thread.join(timeout)
        return self.status(repo_id)

    def status(self, repo_id: str) -> IndexStatus:
        """Return the status of the last or current run of ``repo_id``.

        Raises:
            NotFoundError: No repository ``repo_id`` is registered.
        """
        return recorded_status(
            repo_id,
            self._repo(repo_id).run,
            read_embed_status(self.store, repo_id),
            alive=lambda run: self._alive(repo_id, run),
        )

    def outline(self, repo_id: str, path: str, max_symbols: int | None = None) -> OutlineView:
        """Return the stored outline of a file (``path``: see :func:`file_path`).

        ``max_symbols``: keep at most that many symbols, the first in depth-first order
        (a parent before its children), and say so in ``truncated``; ``symbol_count`` is
        the file's total either way.
        """
        path = file_path(self._repo(repo_id).root, path)
        node = read_file_node(self.store, repo_id, path)
        if node is None:
            return OutlineView(exists=False)
        total = count_tree(node.symbols)
        kept = node.symbols
        if max_symbols is not None and total > max_symbols:
            kept = first_of_tree(node.symbols, max(max_symbols, 0))
        return OutlineView(
            exists=True,
            language=node.language,
            token_count=node.token_count,
            symbols=kept,
            syntax_errors=node.syntax_errors,
            symbol_count=total,
            truncated=max_symbols is not None and total > max_symbols,
        )

    def related(
        self, repo_id: str, path: str, *, offset: int = 0, limit: int = RELATED_PAGE
    ) -> RelatedView:
        """Return a file's imports, references, dependents and covering tests.

        Each list holds its items ``offset`` to ``offset + limit``; ``truncated`` (and
        ``next_offset``, the ``offset`` of the next page) says some list holds more.
        """
        path = file_path(self._repo(repo_id).root, path)
        if read_file_node(self.store, repo_id, path) is None:
            return RelatedView(exists=False)
        out = stored_links(self.store, repo_id, f"out:{path}")
        back = stored_links(self.store, repo_id, f"in:{path}")
        whole = (out.imports, out.references, back.dependents, back.covering_tests)
        more = any(len(items) > offset + limit for items in whole)
        imports, references, dependents, tests = (i[offset : offset + limit] for i in whole)
        return RelatedView(
            exists=True,
            imports=imports,
            references=references,
            dependents=dependents,
            covering_tests=tests,
            truncated=more,
            next_offset=offset + limit if more else None,
        )

    def changed(self, repo_id: str, scope: str | None = None) -> DriftReport:
        """Compare the working tree with the index (see :mod:`repocontext.index.drift`)."""
        repo = self._repo(repo_id)
        root = checked_root(repo_id, repo.root, Path(repo.root))
        nodes = load_stats(self.store, repo_id)
        return detect_drift(
            self.store,
            repo_id,
            root,
            nodes,
            scope=scope,
            options=WalkOptions.from_wire(repo.filters),
        )

    def files(self, repo_id: str) -> tuple[FileNode, ...]:
        """Return every indexed file node of a repository, in path order.

        Raises:
            NotFoundError: The repository is not registered.
        """
        self._repo(repo_id)
        return tuple(node_of(node) for node in iter_file_nodes(self.store, repo_id))

    def content(self, repo_id: str, path: str) -> str | None:
        """Return the stored text of a file, or ``None``."""
        return file_text(self.store, repo_id, path)

    @contextmanager
    def exclusive(self, repo_id: str, timeout: float = EXCLUSIVE_WAIT_S) -> Iterator[None]:
        """Hold the repository's job lock, so no run, refresh or reindex of it starts meanwhile.

        Used to drop a repository's records: a run in progress is never cut short; the
        caller is refused instead. A quiet refresh (one that has recorded no status) is
        waited for. Runs that were waiting for the lock find the repository gone (or reset)
        when they get it, and write nothing. The projection state kept for the repository
        is dropped on the way out.

        Raises:
            IndexRunningError: A run of the repository is in progress (in this process or
                another), or a refresh did not end within ``timeout`` seconds.
        """
        lock = self._repo_lock(repo_id)
        if not lock.acquire(blocking=False):
            if self._stored_run(repo_id) is not None:
                raise IndexRunningError(f"an index run of {repo_id!r} is in progress")
            if not lock.acquire(timeout=timeout):
                raise IndexRunningError(f"a refresh of {repo_id!r} did not end in {timeout} s")
        try:
            with self._run_lock(repo_id, timeout) as held:  # (see _execute)
                if not held:
                    raise self._running_elsewhere(repo_id)
                yield
        finally:
            self._states.pop(repo_id, None)
            lock.release()

    # -- internals ---------------------------------------------------------------------

    def _stored_run(self, repo_id: str) -> RunRecord | None:
        """The recorded status of a run said to be in progress, if any."""
        repo = read_repo(self.store, repo_id)
        if repo is None or repo.run is None or not repo.indexing:
            return None
        return RunRecord.of_value(repo.run)

    def _running_elsewhere(self, repo_id: str) -> IndexRunningError:
        """The refusal when another process holds the run lock (naming its pid, if recorded)."""
        run = self._stored_run(repo_id)
        pid = run.pid if run is not None else None
        where = f"process {pid}" if isinstance(pid, int) and pid != os.getpid() else None
        return IndexRunningError(
            f"an index run of {repo_id!r} is in progress in {where or 'another process'}",
            hint="Wait until repocontext_index_status reports completed or failed "
            "(or stop that process), then call again.",
        )

    @contextmanager
    def _run_lock(self, repo_id: str, wait_s: float = EXCLUSIVE_WAIT_S) -> Iterator[bool]:
        """Hold the inter-process run lock of ``repo_id``; yields False when it stays busy.

        A process whose run is recorded as running refuses at once; one holding the lock for
        a quiet refresh (which records nothing) is waited for, ``wait_s`` at most.
        """
        deadline = time.monotonic() + wait_s
        while True:
            with self.store.exclusive(f"index:{repo_id}") as held:
                if held or self._stored_run(repo_id) is not None or time.monotonic() > deadline:
                    yield held
                    return
            time.sleep(_LOCK_POLL_S)

    def _execute(
        self,
        repo_id: str,
        root: Path,
        options: WalkOptions,
        on_progress: ProgressFn | None,
        *,
        scope: list[str] | None = None,
        started: Iterable[threading.Event] = (),
        keep_fresh: bool = False,
    ) -> IndexProgress:
        with self._repo_lock(repo_id), ExitStack() as run_lock:
            try:
                # Checked under the lock: a removal or reset may have held it since the
                # caller looked, and a job must not write its records back.
                repo = self._repo(repo_id)
                if keep_fresh and not repo.indexed_at:
                    return IndexProgress(phase="reconciling")  # reset: stays unindexed
                root = checked_root(repo_id, repo.root, root)
                # One run at a time across processes too: a lock the kernel drops with its
                # holder (two runs started at once both passed a check of the status).
                if not run_lock.enter_context(self._run_lock(repo_id)):
                    # (a "running" record of another process without the lock is stale)
                    raise self._running_elsewhere(repo_id)
                job = IndexJob(
                    self.store,
                    repo_id,
                    root,
                    options,
                    clock=self.clock,
                    encoding=self.encoding,
                    on_progress=on_progress,
                    state=self._states.pop(repo_id, None),
                    scope=scope,
                )
                job.begin()  # records "running" before anyone waiting is released
            finally:
                for event in started:
                    event.set()
            progress = job.run()  # a failed run leaves no state: the next one rebuilds
            if job.state is not None:
                self._states[repo_id] = job.state
        if self._on_changed is not None and (scope is None or _changed(progress)):
            self._on_changed(repo_id)  # full runs always: the embedding pass may be missing
        return progress

    def _repo_lock(self, repo_id: str) -> threading.Lock:
        with self._lock:
            return self._repo_locks.setdefault(repo_id, threading.Lock())

    def _run_quietly(
        self, repo_id: str, root: Path, options: WalkOptions, started: list[threading.Event]
    ) -> None:
        # The top of a background thread: the job has already recorded any failure in its
        # status, so the error is logged here and the thread ends normally.
        while True:
            try:
                self._execute(repo_id, root, options, None, started=started)
            except RepoContextError as exc:
                _log.warning("index run of %s failed: %s (%s)", repo_id, exc.code, exc.message)
            except Exception:
                _log.exception("index run of %s failed unexpectedly", repo_id)
            with self._lock:  # a start() that joined this run with other filters
                follow_up = self._follow_up.pop(repo_id, None)
                if follow_up is None:  # (a start() from now on starts a new thread)
                    self._running_options.pop(repo_id, None)
                    self._threads.pop(repo_id, None)
                    return
                root, options, started = follow_up
                self._running_options[repo_id] = options

    def _alive(self, repo_id: str, run: RunRecord) -> bool:
        if run.host not in (None, HOST):
            # A pid of another machine (servers sharing one store): the run lock tells. A
            # run holds it until it ends, and the database drops it with a dead holder.
            if self.store.backend.read_only:
                return True  # (a read-only view cannot probe it: report what is recorded)
            with self.store.exclusive(f"index:{repo_id}") as free:
                return not free
        if run.pid == os.getpid():
            # Every run of this process (background, foreground, reconcile refresh or pass)
            # records "running" and ends its record while it holds the repository's lock.
            return self._repo_lock(repo_id).locked()
        return isinstance(run.pid, int) and pid_alive(run.pid)

    def _repo(self, repo_id: str) -> RepoRecord:
        repo = read_repo(self.store, repo_id)
        if repo is None:
            raise NotFoundError(f"no repository {repo_id!r} is registered")
        return repo


def _changed(progress: IndexProgress) -> bool:
    return bool(progress.files_added or progress.files_updated or progress.files_removed)
