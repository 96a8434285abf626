"""What a search returns: ranked hits with their reasons, and how fresh the index was.

Typed values only; :mod:`repocontext.wire.retrieval` turns them into the camelCase wire form
of ``repocontext_search``. A code hit carries the file node and text the search read, so a
context bundle renders it without reading the store again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from repocontext.index.model import FileNode
from repocontext.search.memory_search import NoteEntry

__all__ = ["FileEntry", "Freshness", "NoteEntry", "SearchHit", "SearchResult", "SymbolMatch"]


@dataclass(frozen=True, slots=True)
class SymbolMatch:
    """A defined symbol of a hit that shares terms with the query."""

    fq_name: str
    kind: str
    start_line: int
    end_line: int
    overlap: int


@dataclass(frozen=True, slots=True)
class FileEntry:
    """What a code hit says about its file (compact: the node has the rest).

    Attributes:
        language: Language id, ``None`` for files without a parser.
        token_count: Exact tokens of the whole file.
        lines: Lines of the file.
        is_test: Classified as a test.
    """

    language: str | None
    token_count: int
    lines: int
    is_test: bool
    kind: Literal["file"] = "file"


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked file (or memory entry) with why it was found.

    Attributes:
        key: The store key of the file node or memory entry.
        path: The file's path; ``None`` for a memory entry.
        score: The fused, reranked score (higher is better).
        reasons: Why it was found, in the fixed order of the vocabulary.
        entry: A compact description of the file or entry.
        lines: The range of the best matching symbol (``chunk:symbol``).
        symbols: The file's symbols sharing terms with the query, best first.
        node: The file node the hit was explained from (what a bundle renders).
        text: The file's stored text as the search read it (``None``: none stored).
    """

    key: str
    path: str | None
    score: float
    reasons: tuple[str, ...]
    entry: FileEntry | NoteEntry
    lines: tuple[int, int] | None = None
    symbols: tuple[SymbolMatch, ...] = ()
    node: FileNode | None = field(default=None, repr=False, compare=False)
    text: str | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Freshness:
    """How current the index behind an answer is.

    Attributes:
        indexed_at: When the last index run finished (ISO 8601 UTC).
        last_ingested_at: When the index last took in a change (a run or a refresh).
        indexed_commit: The git HEAD of the last run.
        indexing: Whether a run is in progress.
        store_seq: The store sequence the keyword index reflects.
    """

    indexed_at: str | None
    last_ingested_at: str | None
    indexed_commit: str | None
    indexing: bool
    store_seq: int


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What ``repocontext_search`` returns.

    Attributes:
        mode: ``hybrid``, ``semantic``, ``keyword`` or ``empty``.
        retrieval_path: Which path answered (``hybrid.exact``, ``keyword.no_embedder``, ...).
        hits: The ranked hits, best first.
        freshness: How current the index behind the answer is.
        warnings: What the caller should know about how it was answered (usually nothing;
            e.g. vectors made by another embedder, so keyword only).
    """

    mode: str
    retrieval_path: str
    hits: tuple[SearchHit, ...]
    freshness: Freshness
    warnings: tuple[str, ...] = ()
