"""The vector plane of one repository in one embedding space, persisted next to the store.

``<data_dir>/vectors/<repo>/<space>/`` holds ``vectors.npy`` (float32 rows, L2-normalized,
memory-mapped when read), ``chunks.msgpack`` (what each row is: path, kind, lines, symbol)
and ``files.msgpack`` (the blob id each file was embedded at). Writes go to temporary files
renamed into place, ``files.msgpack`` last, so a crash leaves either the old or the new plane
(a plane whose parts disagree in length is discarded and rebuilt). Like the keyword index it
is a projection: deleting the directory only costs a rebuild.

Several processes may serve one data directory (``serve --workers N``): a rewrite holds an
exclusive ``flock`` on ``swap.lock`` while it replaces the files and a load a shared one, so
a process never reads half a rewrite; a process notices another's rewrite by the identity of
``files.msgpack`` (inode, modification time, size) and loads it (:meth:`VectorPlane.reload`).

Queries scan exactly (one matrix product) below :data:`ANN_THRESHOLD` rows; above it a
usearch HNSW index (cosine, persisted as ``ann.usearch`` and memory-mapped) answers, and
``approximate`` says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import threading
from collections.abc import Iterator, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgpack
import numpy as np
import numpy.typing as npt

from repocontext.search.embed import Chunk, EmbeddingSpace, Vectors

__all__ = ["ANN_THRESHOLD", "ChunkHit", "VectorPlane"]

ANN_THRESHOLD: Final = 50_000
_FEW: Final = 8
"""A filter that keeps under 1/_FEW of the rows has them scanned alone (a gather and a
product of that many rows cost less than an ANN query asked for _FEW times more rows)."""


@dataclass(frozen=True, slots=True)
class ChunkHit:
    """A chunk near the query, with its cosine similarity."""

    path: str
    kind: str
    start_line: int
    end_line: int
    symbol: str | None
    score: float


class VectorPlane:
    """Vectors and chunk metadata of one repository in one space."""

    def __init__(
        self, directory: Path, space: EmbeddingSpace, *, ann_threshold: int = ANN_THRESHOLD
    ) -> None:
        """Open (or start empty) the plane in ``directory``; ANN from ``ann_threshold`` rows."""
        self.directory = directory
        self.ann_threshold = ann_threshold
        self.space = space
        self._lock = threading.Lock()  # serializes rewrites; readers use the current snapshot
        self._state = _Snapshot(np.zeros((0, space.dimension), dtype=np.float32), [], {}, None)
        self._loaded: tuple[int, int, int] | None = None  # files.msgpack when last loaded
        self._load()

    @property
    def size(self) -> int:
        """How many vectors the plane holds."""
        return len(self._state.chunks)

    @property
    def files(self) -> dict[str, str | None]:
        """Path -> blob id (or text digest) of what the plane embedded."""
        return self._state.files

    @property
    def on_disk(self) -> bool:
        """True once a written plane was loaded (this data directory holds one)."""
        return self._loaded is not None

    def reload(self) -> bool:
        """Load the plane again when another process rewrote it; return whether it did.

        One ``stat`` when nothing changed (a search may call it every time).
        """
        if _identity(self.directory / "files.msgpack") == self._loaded:
            return False
        self._load()
        return True

    @property
    def approximate(self) -> bool:
        """True when queries go through the ANN index."""
        return self._state.ann is not None

    def rows_of(self, keep: set[str]) -> tuple[Vectors, list[list[Any]]]:
        """The vectors and chunk rows of the files in ``keep`` (to carry into a rewrite)."""
        state = self._state
        picked = [i for i, row in enumerate(state.chunks) if row[0] in keep]
        return np.asarray(state.vectors[picked], dtype=np.float32), [
            state.chunks[i] for i in picked
        ]

    def replace(
        self, vectors: Vectors, chunks: list[Chunk | list[Any]], files: dict[str, str | None]
    ) -> None:
        """Write a new plane (all rows) and switch to it."""
        rows = [
            [c.path, c.kind, c.start_line, c.end_line, c.symbol] if isinstance(c, Chunk) else c
            for c in chunks
        ]
        if len(rows) != len(vectors):
            raise ValueError("one vector per chunk")
        self.directory.mkdir(parents=True, exist_ok=True)
        ann = self.directory / "ann.usearch"
        with _flocked(self.directory, fcntl.LOCK_EX):
            _write(self.directory / "vectors.npy", lambda f: np.save(f, vectors))
            _write(self.directory / "chunks.msgpack", lambda f: f.write(msgpack.packb(rows)))
            if len(rows) >= self.ann_threshold:
                _build_ann(vectors, ann)
            elif ann.exists():
                ann.unlink()
            _write(self.directory / "files.msgpack", lambda f: f.write(msgpack.packb(files)))
        self._load()

    def search(self, query: Vectors, limit: int, within: Set[str] | None = None) -> list[ChunkHit]:
        """Return the ``limit`` chunks most similar to ``query`` (one normalized row).

        ``within``: only chunks of these paths count — the best ``limit`` of those. When
        they are few (under an eighth of the rows) only they are scanned, exactly; otherwise
        the plane is searched as without a filter — the exact scan with the other rows
        masked out, or the ANN index asked for enough rows to hold ``limit`` kept ones (and
        more until it does). Asked for at least every kept row, the answer is every kept row:
        the exact scan gives that, an approximate index does not promise it.
        """
        state = self._state  # one consistent snapshot; a rewrite swaps in a new one
        if not state.chunks or limit <= 0:
            return []
        mask = state.rows_in(within) if within is not None else None
        kept = len(state.chunks) if mask is None else int(mask.sum())
        if kept == 0:
            return []
        if state.ann is not None and kept * _FEW >= len(state.chunks) and limit < kept:
            pairs = _ann_pairs(state, query, limit, mask, kept)
        else:
            pairs = _exact_pairs(state, query, limit, mask, kept)
        pairs.sort(key=lambda pair: -pair[1])
        rows = [(state.chunks[i], score) for i, score in pairs]
        return [
            ChunkHit(
                path=row[0],
                kind=row[1],
                start_line=row[2],
                end_line=row[3],
                symbol=row[4],
                score=round(score, 4),
            )
            for row, score in rows
        ]

    def _load(self) -> None:
        if not (self.directory / "files.msgpack").exists():
            return  # nothing written yet (no lock file made for a plane that is not there)
        with self._lock, _flocked(self.directory, fcntl.LOCK_SH):
            identity = _identity(self.directory / "files.msgpack")
            try:
                files = msgpack.unpackb((self.directory / "files.msgpack").read_bytes())
                chunks = msgpack.unpackb((self.directory / "chunks.msgpack").read_bytes())
                vectors = np.load(self.directory / "vectors.npy", mmap_mode="r")
            except (OSError, ValueError, msgpack.UnpackException):
                return  # a broken plane: start empty, rebuild
            if len(chunks) != len(vectors) or vectors.shape[1:] != (self.space.dimension,):
                return
            ann = _open_ann(self.directory / "ann.usearch", self.space.dimension)
            self._state = _Snapshot.of(vectors, chunks, files, ann)
            self._loaded = identity


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """What a plane serves, swapped whole when the plane is rewritten."""

    vectors: Vectors
    chunks: list[list[Any]]
    files: dict[str, str | None]
    ann: Any
    paths: list[str] = field(default_factory=list)
    """The distinct paths of the rows, in first-row order."""
    row_path: npt.NDArray[np.intp] = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    """Each row's index into :attr:`paths` (so a path filter is one lookup per path)."""
    masks: list[tuple[Set[str], npt.NDArray[np.bool_]]] = field(default_factory=list)
    """The last path set asked for and its row mask."""

    @classmethod
    def of(
        cls, vectors: Vectors, chunks: list[list[Any]], files: dict[str, str | None], ann: Any
    ) -> _Snapshot:
        number: dict[str, int] = {}
        row_path = np.fromiter(
            (number.setdefault(row[0], len(number)) for row in chunks), np.intp, len(chunks)
        )
        return cls(vectors, chunks, files, ann, list(number), row_path)

    def rows_in(self, within: Set[str]) -> npt.NDArray[np.bool_]:
        """Which rows belong to a path in ``within``.

        The answer for the last set asked is kept (the same set object: a search service
        asks the same filter's set query after query).
        """
        last = self.masks[:1]
        if last and last[0][0] is within:
            return last[0][1]
        kept = np.fromiter((path in within for path in self.paths), bool, len(self.paths))
        mask = kept[self.row_path]
        self.masks[:] = [(within, mask)]
        return mask


def _exact_pairs(
    state: _Snapshot,
    query: Vectors,
    limit: int,
    mask: npt.NDArray[np.bool_] | None,
    kept: int,
) -> list[tuple[int, float]]:
    """Row and similarity of the ``limit`` nearest kept rows, by one matrix product."""
    vector = query.reshape(-1)
    if mask is not None and kept * _FEW < len(mask):  # few kept: multiply only those rows
        rows = np.flatnonzero(mask)
        scores = np.asarray(state.vectors[rows] @ vector)
    else:
        rows = None
        scores = state.vectors @ vector
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
    top = min(limit, kept)
    best = np.argpartition(-scores, top - 1)[:top]
    found = best if rows is None else rows[best]
    return [(int(row), float(scores[at])) for row, at in zip(found, best, strict=True)]


def _ann_pairs(
    state: _Snapshot,
    query: Vectors,
    limit: int,
    mask: npt.NDArray[np.bool_] | None,
    kept: int,
) -> list[tuple[int, float]]:
    """Row and similarity of the nearest kept rows the ANN index finds.

    It is asked for as many rows as should hold ``limit`` kept ones (twice the share the
    filter leaves out), and four times more while it did not.
    """
    size = len(state.chunks)
    asked = min(size, max(limit, math.ceil(2 * limit * size / kept)))
    while True:
        found = state.ann.search(query.reshape(-1), asked)
        pairs = [
            (int(k), 1.0 - float(d))
            for k, d in zip(found.keys, found.distances, strict=True)
            if mask is None or mask[int(k)]
        ]
        if len(pairs) >= limit or asked >= size:
            return sorted(pairs, key=lambda pair: -pair[1])[:limit]
        asked = min(size, asked * 4)


def _identity(path: Path) -> tuple[int, int, int] | None:
    """What tells one written file from the next (``None``: there is none)."""
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)


@contextlib.contextmanager
def _flocked(directory: Path, mode: int) -> Iterator[None]:
    """Hold ``flock`` ``mode`` on the plane's ``swap.lock`` (released with its holder)."""
    try:
        fd = os.open(directory / "swap.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # (a read-only data directory: nobody rewrites it)
        yield
        return
    try:
        fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)  # (closing drops the lock)


def _write(path: Path, fill: Any) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    with temporary.open("wb") as handle:
        fill(handle)
        handle.flush()
        os.fsync(handle.fileno())
    temporary.replace(path)


def _build_ann(vectors: Vectors, path: Path) -> None:
    from usearch.index import Index

    index = Index(ndim=vectors.shape[1], metric="cos", dtype="f32")
    # One thread: the same rows always give the same graph, so approximate answers repeat
    # (a multi-threaded build inserts in a racy order; 2 cores gain little from it).
    index.add(np.arange(len(vectors)), vectors, threads=1)
    temporary = path.with_suffix(".tmp")
    index.save(str(temporary))
    temporary.replace(path)


def _open_ann(path: Path, dimension: int) -> Any:
    if not path.exists():
        return None
    from usearch.index import Index

    return Index.restore(str(path), view=True)
