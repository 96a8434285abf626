"""Retrieval: identifier-aware BM25, embedders, vector index, hybrid ranking, reasons.

The face of search for the layers above: the request a search is asked with
(:class:`SearchRequest`, its limits checked once), the typed answer (:class:`SearchResult`
of :class:`SearchHit`), and the repository map (:class:`RepoMap`, PageRank over the
reference graph), and grep (:class:`GrepRequest` -> :class:`GrepPage`: a literal or regular
expression over the indexed files). See ``docs/retrieval.md``.
"""

from repocontext.search.filters import MAX_FILTERS, FileFilter
from repocontext.search.grep import (
    DEFAULT_CONTEXT_LINES,
    DEFAULT_GREP_PAGE,
    MAX_CONTEXT_LINES,
    MAX_GREP_PAGE,
    MAX_LINE_CHARS,
    GrepMatch,
    GrepPage,
    GrepRequest,
)
from repocontext.search.hits import (
    FileEntry,
    Freshness,
    NoteEntry,
    SearchHit,
    SearchResult,
    SymbolMatch,
)
from repocontext.search.modes import SEARCH_MODES, SearchMode
from repocontext.search.pattern import MAX_PATTERN_CHARS
from repocontext.search.repo_map import MAX_SYMBOLS, RepoMap, RepoMapEntry
from repocontext.search.request import DEFAULT_K, MAX_K, MIN_K, SCOPES, SearchRequest
from repocontext.search.semantic import EmbedReport
from repocontext.search.service import SearchScope, SearchService

__all__ = [
    "DEFAULT_CONTEXT_LINES",
    "DEFAULT_GREP_PAGE",
    "DEFAULT_K",
    "MAX_CONTEXT_LINES",
    "MAX_FILTERS",
    "MAX_GREP_PAGE",
    "MAX_K",
    "MAX_LINE_CHARS",
    "MAX_PATTERN_CHARS",
    "MAX_SYMBOLS",
    "MIN_K",
    "SCOPES",
    "SEARCH_MODES",
    "EmbedReport",
    "FileEntry",
    "FileFilter",
    "Freshness",
    "GrepMatch",
    "GrepPage",
    "GrepRequest",
    "NoteEntry",
    "RepoMap",
    "RepoMapEntry",
    "SearchHit",
    "SearchMode",
    "SearchRequest",
    "SearchResult",
    "SearchScope",
    "SearchService",
    "SymbolMatch",
]
