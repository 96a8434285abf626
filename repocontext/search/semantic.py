"""The embedding phase and semantic retrieval of a store's repositories.

After an index run changes files, :meth:`SemanticService.schedule` embeds them in a daemon
thread: files whose blob id the vector plane already holds keep their rows, changed and new
files are chunked (:func:`~repocontext.search.embed.chunks_of`) and embedded, removed files
drop out, and the plane is rewritten. Memory entries are embedded too, one chunk each (title,
tags and body; :mod:`repocontext.search.memory_vectors`), and re-embedded when that text
changes; memory writes schedule a pass as index runs do. Memory vectors live in a plane of
their own, so a note written or forgotten rewrites only that small plane, never the
repository's file plane (nor its ANN index).

Progress and the result live in the vector-metadata record ``repo/{id}/vec/status``
(``status``, ``space``, ``chunksDone``, ``chunksTotal``, ``vectors``, ``finishedAt``,
``servable``), which ``index_status`` and health read. Semantic answers come only from
completed planes of the configured space. A pass writes its planes only when it ends, so
while it runs the planes on disk are still those of the last completed pass: when there was
one in the same space (``servable``), they keep answering (trailing the pass by its changes;
the keyword side is always current). Before the first completed pass, or without an
embedder, search fails closed to keyword-only and says so.

Several processes may serve one data directory (``serve --workers N``), and several servers
one store each with its own data directory (a shared PostgreSQL store). A pass holds an
exclusive ``flock`` on ``embed.lock`` in the repository's plane directory, so the processes
of one data directory embed a change once: the others wait for it and skip their pass when
the store sequence that pass started at (``<space>.seq`` beside the planes) has reached the
change that scheduled theirs, or else load the planes it wrote and find nothing left to do.
The status record is shared by every server of the store, the planes are not: a server
answers from its own planes only (until they exist, search is keyword-only and says so), and
:meth:`SemanticService.catch_up` embeds what it lacks.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from repocontext.errors import EmbeddingStoppedError
from repocontext.index.files.nodes import content_blob_ids, file_text, read_file_node
from repocontext.search.embed import Chunk, Embedder, chunks_of, load_embedder
from repocontext.search.memory_vectors import memory_todo
from repocontext.search.vectors import ChunkHit, VectorPlane
from repocontext.store import (
    STRUCTURAL,
    VECTOR_METADATA,
    Clock,
    EmbedStatus,
    Store,
    Value,
    read_embed_status,
)
from repocontext.store.clock import iso_utc
from repocontext.store.keys import repo_key, vec_key

__all__ = ["EmbedReport", "SemanticService"]

BATCH: Final = 256
STATUS_INTERVAL_S: Final = 0.5
LOCK_POLL_S: Final = 0.1
"""How often a pass waiting for another process's pass of the same planes tries again."""
FILES_PART: Final = "files"
MEMORY_PART: Final = "memory"

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EmbedReport:
    """What one embedding pass did."""

    files_embedded: int
    chunks_embedded: int
    vectors: int
    elapsed_s: float


class _Stopped(Exception):
    """The service closed while a pass was running."""


class SemanticService:
    """Embeds repositories in the background and answers semantic queries."""

    def __init__(self, store: Store, directory: Path, embedder: str, clock: Clock) -> None:
        """Bind to a store; the embedder named ``embedder`` is loaded on first use."""
        self.store = store
        self.directory = directory
        self.embedder_name = embedder
        self.clock = clock
        self._embedder: Embedder | None = None
        self._load_error: str | None = None
        self._lock = threading.Lock()
        self._planes: dict[tuple[str, str], VectorPlane] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._pending: set[str] = set()
        self._run_locks: dict[str, threading.Lock] = {}
        self._dropping: set[str] = set()
        self._drops: dict[str, int] = {}  # per repository, how many times it was dropped
        self._wanted: dict[str, int] = {}  # the store sequence a scheduled pass must reflect
        self._closed = threading.Event()

    @property
    def enabled(self) -> bool:
        """False when no embedder is configured or it could not be loaded."""
        return self.embedder_name != "off" and self.embedder() is not None

    def embedder(self) -> Embedder | None:
        """The embedder, loaded on first use (``None`` when off or broken)."""
        if self._embedder is None and self._load_error is None and self.embedder_name != "off":
            try:
                self._embedder = load_embedder(self.embedder_name)
            except Exception as exc:  # an optional backend that fails must not take search down
                self._load_error = f"{type(exc).__name__}: {exc}"
                _log.warning("embedder %s unavailable: %s", self.embedder_name, self._load_error)
        return self._embedder

    def status(self, repo_id: str) -> EmbedStatus:
        """The stored embedding status of a repository (not ``recorded`` before any pass)."""
        return read_embed_status(self.store, repo_id)

    def ready_vectors(self, repo_id: str) -> int:
        """Vectors of completed planes of the configured backend (0 otherwise); loads nothing.

        From the store's status record, and only once this data directory holds the planes:
        a server with a data directory of its own (several servers sharing one store) counts
        none until its follower has embedded them, as its search answers keyword-only until
        then.
        """
        status = self.status(repo_id)
        space = status.space or ""
        if not status.planes_complete or not space.startswith(f"{self.embedder_name}-"):
            return 0
        return status.vectors if self._held_here(repo_id, space) else 0

    def _held_here(self, repo_id: str, space: str) -> bool:
        """Whether this data directory holds a written plane of ``space`` (one ``stat``)."""
        return (self.directory / _plane_dir(repo_id) / space / "files.msgpack").exists()

    def ready_plane(self, repo_id: str) -> VectorPlane | None:
        """The repository's file plane when a completed one of the configured space exists."""
        status = self.status(repo_id)
        if not status.planes_complete or self._other_backend(status) is not None:
            return None  # (nothing this backend made: it need not load)
        embedder = self.embedder()
        if embedder is None or status.space != embedder.space.id:
            return None
        plane = self._plane(repo_id, embedder)
        plane.reload()  # (another process of this data directory may have rewritten it)
        # The status is the store's, shared by servers with other data directories: only
        # planes this one holds answer.
        return plane if plane.on_disk else None

    def catch_up(self, repo_id: str) -> bool:
        """Schedule a pass when the store records vectors this data directory lacks.

        Returns whether it scheduled one. Loads no embedder.
        """
        status = self.status(repo_id)
        space = status.space or ""
        if not status.planes_complete or not space.startswith(f"{self.embedder_name}-"):
            return False
        if self._held_here(repo_id, space):
            return False
        self.schedule(repo_id)
        return True

    def stored_embedder(self, repo_id: str) -> str | None:
        """The backend of the repository's completed vectors when it is not the configured one.

        ``None`` when they match, when there are none, and when no embedder is configured.
        """
        return self._other_backend(self.status(repo_id))

    def _other_backend(self, status: EmbedStatus) -> str | None:
        space = status.space or ""
        if self.embedder_name == "off" or not status.planes_complete or not space:
            return None
        backend = space.split("-", 1)[0]
        return None if backend == self.embedder_name else backend

    def search(
        self, repo_id: str, query: str, limit: int, within: Set[str] | None = None
    ) -> list[ChunkHit] | None:
        """Chunks nearest to ``query`` (files and memory), or ``None`` when no plane can answer.

        ``within``: the file paths whose chunks may answer (memory entries always may).
        """
        plane = self.ready_plane(repo_id)
        embedder = self._embedder
        if plane is None or embedder is None:
            return None
        vector = embedder.embed([query])[0]
        hits = plane.search(vector, limit, within)
        memory = self._plane(repo_id, embedder, MEMORY_PART)
        memory.reload()
        notes = memory.search(vector, limit)
        if not notes:
            return hits
        return sorted([*hits, *notes], key=lambda hit: -hit.score)[:limit]

    def close(self, timeout: float = 30.0) -> None:
        """Stop scheduling, let running passes stop at their next batch, and wait for them."""
        self._closed.set()
        with self._lock:
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(timeout)

    def schedule(self, repo_id: str, seq: int | None = None) -> None:
        """Embed the repository's changes in the background (coalescing repeated calls).

        ``seq``: the store sequence of the last change the pass must see (default: the
        store's head).
        """
        if self.embedder_name == "off" or self._closed.is_set():
            return
        wanted = self.store.last_seq() if seq is None else seq
        with self._lock:
            self._wanted[repo_id] = max(wanted, self._wanted.get(repo_id, 0))
            self._pending.add(repo_id)
            thread = self._threads.get(repo_id)
            if thread is not None and thread.is_alive():
                return  # the running thread loops while work is pending
            thread = threading.Thread(
                target=self._drain, args=(repo_id,), name=f"embed-{repo_id}", daemon=True
            )
            self._threads[repo_id] = thread
            thread.start()

    def wait(self, repo_id: str, timeout: float | None = None) -> None:
        """Wait for the background pass of a repository to end (tests, benchmarks)."""
        thread = self._threads.get(repo_id)
        if thread is not None:
            thread.join(timeout)

    def refresh(
        self,
        repo_id: str,
        on_progress: Callable[[int, int], None] | None = None,
        *,
        scheduled: bool = False,
    ) -> EmbedReport | None:
        """Run one embedding pass now; ``None`` when there is no embedder.

        A repository that is no longer registered (removed since the pass was scheduled)
        is not embedded: nothing is written for it. ``scheduled`` (the background pass):
        skipped when another process of this data directory ran one that saw the changes
        that scheduled it.

        Raises:
            EmbeddingStoppedError: Not ``scheduled``, and the service closed or the
                repository was dropped while the pass ran; it wrote nothing more.
        """
        embedder = self.embedder()
        if embedder is None:
            return None
        with self._lock:
            run_lock = self._run_locks.setdefault(repo_id, threading.Lock())
            drops = self._drops.get(repo_id, 0)
        try:
            with run_lock:
                with self._lock:
                    dropped = self._drops.get(repo_id, 0) != drops
                if dropped or self.store.get(STRUCTURAL, repo_key(repo_id)) is None:
                    return EmbedReport(0, 0, 0, 0.0)  # asked for before a drop: nothing to write
                return self._run(repo_id, embedder, on_progress, scheduled)
        except _Stopped:
            if scheduled:
                raise  # (the background loop stops quietly)
            raise EmbeddingStoppedError(
                f"The embedding pass of {repo_id!r} stopped before it ended: the workspace "
                "closed, or the repository was removed or reset, meanwhile."
            ) from None

    def _run(
        self,
        repo_id: str,
        embedder: Embedder,
        on_progress: Callable[[int, int], None] | None,
        scheduled: bool,
    ) -> EmbedReport:
        """The pass, in the repository's turn: across processes, unless one already ran it."""
        with self._across_processes(repo_id):
            with self._lock:
                wanted = self._wanted.get(repo_id) if scheduled else None
            marker = self._marker(repo_id, embedder)
            if wanted is not None and _read_seq(marker) >= wanted:
                # Another process of this data directory embedded these changes.
                return EmbedReport(0, 0, 0, 0.0)
            started_at = self.store.last_seq()  # what this pass sees, at least
            report = self._pass(repo_id, embedder, on_progress)
            _write_seq(marker, started_at)
            return report

    @contextlib.contextmanager
    def dropping(self, repo_id: str) -> Iterator[None]:
        """Forget a repository's vector plane while the caller deletes its records.

        A pass in progress stops at its next batch and writes nothing more; a scheduled one
        is cancelled, and so is every pass asked for before the drop, even one already
        waiting for the repository's turn. The plane directory under ``directory`` is
        deleted (a projection: the next pass rebuilds it). No pass of the repository runs
        until the block ends, so the caller deletes the status record with the repository's
        other vector records and nothing writes it again behind them.
        """
        with self._lock:
            self._pending.discard(repo_id)
            self._dropping.add(repo_id)
            self._drops[repo_id] = self._drops.get(repo_id, 0) + 1
            run_lock = self._run_locks.setdefault(repo_id, threading.Lock())
        try:
            with run_lock:
                with self._lock:
                    for part in (FILES_PART, MEMORY_PART):
                        self._planes.pop((repo_id, part), None)
                _remove_tree(self.directory / _plane_dir(repo_id))
                yield
        finally:
            with self._lock:
                self._dropping.discard(repo_id)

    # -- internals ---------------------------------------------------------------------

    @contextlib.contextmanager
    def _across_processes(self, repo_id: str) -> Iterator[None]:
        """Hold the repository's ``embed.lock`` against the other processes of the data dir.

        Waits while another process's pass holds it (it may have embedded these changes
        already: the pass then reloads its planes and finds nothing to do); stops waiting
        when this service closes or the repository is dropped.

        Raises:
            _Stopped: The service closed, or the repository is being dropped, meanwhile.
        """
        directory = self.directory / _plane_dir(repo_id)
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / "embed.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if self._closed.wait(LOCK_POLL_S) or repo_id in self._dropping:
                        raise _Stopped from None
            yield
        finally:
            os.close(fd)  # (drops the lock)

    def _drain(self, repo_id: str) -> None:
        while True:
            with self._lock:
                if repo_id not in self._pending:
                    return
                self._pending.discard(repo_id)
            try:
                self.refresh(repo_id, scheduled=True)
            except _Stopped:
                return  # closing: the plane and its status stay as they were
            except Exception:
                _log.exception("embedding %s failed", repo_id)
                self._set_status(repo_id, {"status": "failed"})

    def _marker(self, repo_id: str, embedder: Embedder) -> Path:
        """The file holding the store sequence the last completed pass of the space saw."""
        return self.directory / _plane_dir(repo_id) / f"{embedder.space.id}.seq"

    def _plane(self, repo_id: str, embedder: Embedder, part: str = "files") -> VectorPlane:
        with self._lock:
            plane = self._planes.get((repo_id, part))
            if plane is None or plane.space != embedder.space:
                name = embedder.space.id if part == FILES_PART else f"{embedder.space.id}.{part}"
                plane = VectorPlane(self.directory / _plane_dir(repo_id) / name, embedder.space)
                self._planes[(repo_id, part)] = plane
            return plane

    def _pass(
        self,
        repo_id: str,
        embedder: Embedder,
        on_progress: Callable[[int, int], None] | None,
    ) -> EmbedReport:
        started = time.perf_counter()
        files = self._plane(repo_id, embedder)
        memory = self._plane(repo_id, embedder, MEMORY_PART)
        files.reload()  # what another process's pass wrote is not done again
        memory.reload()
        current: dict[str, str | None] = {}
        todo: list[str] = []
        # Only the three fields that decide what changed are decoded (a note's pass reads
        # every file node of the repository); whole nodes are read for the changed files only.
        for path, blob in content_blob_ids(self.store, repo_id):
            current[path] = blob
            if files.files.get(path) != current[path] or path not in files.files:
                todo.append(path)
        current_notes: dict[str, str | None] = {}
        notes = memory_todo(self.store, repo_id, memory, current_notes)
        files_stale = bool(todo) or set(files.files) != set(current)
        notes_stale = bool(notes) or set(memory.files) != set(current_notes)
        space = embedder.space.id
        prior = self.status(repo_id)
        settled = prior.space == space and prior.status == "completed"
        if settled and not files_stale and not notes_stale:
            return EmbedReport(0, 0, files.size + memory.size, time.perf_counter() - started)
        chunks: list[Chunk] = []
        for path in todo:
            parsed = read_file_node(self.store, repo_id, path)
            text = file_text(self.store, repo_id, path)
            if parsed is not None and text is not None:
                chunks += chunks_of(parsed, text)
        total = len(notes) + len(chunks)
        # The planes on disk stay those of the last completed pass until this one ends.
        servable = prior.space == space and prior.planes_complete
        status: dict[str, Value] = {
            "status": "running",
            "pid": os.getpid(),  # (a pass whose process died reads as interrupted)
            "space": space,
            "chunksDone": 0,
            "chunksTotal": total,
            "servable": servable,
            "vectors": prior.vectors if servable else 0,
        }
        self._set_status(repo_id, status)
        progress = _Progress(self, repo_id, status, total, on_progress)
        if notes_stale:  # first: a note is small and agents look for it right away
            kept_vectors, kept_rows = memory.rows_of(set(current_notes) - {n.path for n in notes})
            vectors = self._embed(embedder, notes, kept_vectors, progress)
            memory.replace(vectors, [*kept_rows, *notes], current_notes)
        if files_stale:
            kept_vectors, kept_rows = files.rows_of(set(current) - set(todo))
            vectors = self._embed(embedder, chunks, kept_vectors, progress)
            files.replace(vectors, [*kept_rows, *chunks], current)
        self._set_status(
            repo_id,
            {
                "status": "completed",
                "space": space,
                "chunksDone": total,
                "chunksTotal": total,
                "vectors": files.size + memory.size,
                "finishedAt": iso_utc(self.clock.now()),
            },
        )
        return EmbedReport(
            len(todo), total, files.size + memory.size, time.perf_counter() - started
        )

    def _embed(
        self, embedder: Embedder, chunks: list[Chunk], kept: Any, progress: _Progress
    ) -> Any:
        """Embed ``chunks`` in batches after the ``kept`` rows; stops when the pass must."""
        parts = [kept]
        for i in range(0, len(chunks), BATCH):
            if self._closed.is_set() or progress.repo_id in self._dropping:
                raise _Stopped
            batch = chunks[i : i + BATCH]
            parts.append(embedder.embed([c.text for c in batch]))
            progress.advance(len(batch))
        return np.concatenate(parts).astype(np.float32, copy=False)

    def _set_status(self, repo_id: str, value: dict[str, Value]) -> None:
        self.store.put(VECTOR_METADATA, vec_key(repo_id, "status"), value)


class _Progress:
    """Counts embedded chunks across a pass's planes; reports them now and then."""

    def __init__(
        self,
        service: SemanticService,
        repo_id: str,
        status: dict[str, Value],
        total: int,
        on_progress: Callable[[int, int], None] | None,
    ) -> None:
        self.service = service
        self.repo_id = repo_id
        self.status = status
        self.total = total
        self.on_progress = on_progress
        self.done = 0
        self.last = time.monotonic()

    def advance(self, chunks: int) -> None:
        self.done += chunks
        if self.on_progress is not None:
            self.on_progress(self.done, self.total)
        if time.monotonic() - self.last > STATUS_INTERVAL_S:
            self.last = time.monotonic()
            self.service._set_status(self.repo_id, {**self.status, "chunksDone": self.done})


def _read_seq(path: Path) -> int:
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return 0


def _write_seq(path: Path, seq: int) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(str(seq))
    temporary.replace(path)


def _plane_dir(repo_id: str) -> str:
    return repo_key(repo_id).replace("/", "_")


def _remove_tree(path: Path) -> None:
    # A projection: a directory that cannot be deleted costs disk space, not correctness
    # (the next pass of a re-added repository rewrites what it keeps).
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        _log.warning("could not delete the vector plane %s: %s", path, exc)
