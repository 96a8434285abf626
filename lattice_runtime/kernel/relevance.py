"""Relevance: how much each repository file matters to a task's goal.

Per file, the kernel's own score (the goal's terms and identifiers: :mod:`.goal`)::

    kernel = 8 * path_match + 5 * symbol_match + 2 * reference_match + 2 * is_test

* ``path_match``: a goal term appears in the path (a part of one of its segments);
* ``symbol_match``: a goal identifier or terms name a symbol of the file's stored outline
  (:meth:`GoalTerms.symbol_strength` > 0);
* ``reference_match``: the file imports or references a path- or symbol-matched file (its
  ``dependents`` in ``Workspace.related``, for the 30 best matched files);
* ``is_test``: the index classifies the file as a test.

Each signal counts once. The kernel score is fused with repocontext's own ranking of the goal
(``Workspace.search``: hybrid when the workspace has vectors, else keyword BM25)::

    score = kernel + 10 * hit.score / top_hit.score      (0 for a file that is no hit)

A file is *relevant* when its score without the test bonus is above 0. Files outside the
task's scope, and files without text (binary, oversized), are never ranked. Ties: by path.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from lattice_runtime.kernel.goal import GoalTerms
from lattice_runtime.kernel.scope import ScopeFilter
from repocontext.arguments import MAX_TEXT_CHARS
from repocontext.errors import InvalidInputError
from repocontext.index import FileNode, Symbol
from repocontext.search import SearchHit, SearchRequest
from repocontext.workspace import Workspace

__all__ = [
    "PATH_MATCH",
    "REFERENCE_MATCH",
    "SEARCH_WEIGHT",
    "SYMBOL_MATCH",
    "TEST_BONUS",
    "FileRelevance",
    "Ranking",
    "flat_symbols",
    "rank_files",
]

PATH_MATCH: Final = 8
SYMBOL_MATCH: Final = 5
REFERENCE_MATCH: Final = 2
TEST_BONUS: Final = 2
SEARCH_WEIGHT: Final = 10.0
SEARCH_K: Final = 50
"""Hits asked of ``Workspace.search``."""
REFERENCE_SOURCES: Final = 30
"""Matched files whose dependents are read for the reference signal."""


@dataclass(frozen=True, slots=True)
class FileRelevance:
    """Why one file matters to the goal.

    Attributes:
        path: Repository-relative path.
        score: The fused score (module docstring).
        kernel_score: The kernel's part (8/5/2/2 signals).
        is_test: The index classifies it as a test.
        lines: The best-matching lines (the matched symbol's, else the search hit's).
        symbol: The matched symbol's qualified name, if any.
        evidence: Each signal that counted, in words (a page's provenance).
    """

    path: str
    score: float
    kernel_score: int
    is_test: bool
    lines: tuple[int, int] | None = None
    symbol: str | None = None
    evidence: tuple[str, ...] = ()

    @property
    def relevant(self) -> bool:
        """Whether anything but the test bonus counted."""
        return self.score - (TEST_BONUS if self.is_test else 0) > 0


@dataclass(frozen=True, slots=True)
class Ranking:
    """The ranked files of a repository for one goal.

    Attributes:
        files: Every ranked file, best first.
        retrieval: How repocontext answered the search (``keyword.no_embedder``, ...).
    """

    files: tuple[FileRelevance, ...]
    retrieval: str
    _by_path: Mapping[str, FileRelevance] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, files: Sequence[FileRelevance], retrieval: str) -> Ranking:
        """Rank ``files`` best first (ties by path)."""
        ranked = tuple(sorted(files, key=lambda f: (-f.score, f.path)))
        return cls(ranked, retrieval, MappingProxyType({f.path: f for f in ranked}))

    def get(self, path: str) -> FileRelevance | None:
        """The relevance of ``path``, if it was ranked."""
        return self._by_path.get(path)


@dataclass(frozen=True, slots=True)
class _Signals:
    """The kernel signals of one file, before fusing."""

    path_terms: tuple[str, ...] = ()
    symbol: Symbol | None = None
    referenced: str | None = None


def rank_files(
    workspace: Workspace,
    repo_id: str,
    goal: str,
    nodes: Sequence[FileNode],
    scope: ScopeFilter,
) -> Ranking:
    """Rank the in-scope files of ``nodes`` for ``goal`` (formula: module docstring).

    Raises:
        RepoContextError: The search or the index could not be read.
    """
    terms = GoalTerms.of(goal)
    readable = {n.path: n for n in nodes if n.has_content and n.path in scope}
    signals = {path: _match(node, terms) for path, node in readable.items()}
    _add_references(workspace, repo_id, signals)
    hits, retrieval = _search(workspace, repo_id, goal, readable)
    top = max((hit.score for hit in hits.values()), default=0.0)
    ranked = [
        _fuse(readable[path], signals[path], hits.get(path), top)
        for path in readable
        if path in hits or _any(signals[path])
    ]
    return Ranking.of(ranked, retrieval)


def _any(signal: _Signals) -> bool:
    return bool(signal.path_terms or signal.symbol or signal.referenced)


def _match(node: FileNode, terms: GoalTerms) -> _Signals:
    best: tuple[int, int, Symbol] | None = None
    for order, symbol in enumerate(flat_symbols(node.symbols)):
        strength = terms.symbol_strength(symbol.name)
        if strength and (best is None or strength > best[0]):
            best = (strength, order, symbol)
    return _Signals(terms.path_terms(node.path), best[2] if best else None)


def flat_symbols(symbols: Sequence[Symbol]) -> Iterator[Symbol]:
    """Every symbol of an outline, a parent before its children."""
    for symbol in symbols:
        yield symbol
        yield from flat_symbols(symbol.children)


def _add_references(workspace: Workspace, repo_id: str, signals: dict[str, _Signals]) -> None:
    """Mark the dependents of the best matched files (in place)."""
    strength = {
        path: PATH_MATCH * bool(s.path_terms) + SYMBOL_MATCH * (s.symbol is not None)
        for path, s in signals.items()
    }
    matched = sorted((p for p, v in strength.items() if v), key=lambda p: (-strength[p], p))
    for source in matched[:REFERENCE_SOURCES]:
        for link in workspace.related(repo_id, source).dependents:
            current = signals.get(link.path)
            if current is not None and current.referenced is None and link.path != source:
                signals[link.path] = _Signals(current.path_terms, current.symbol, source)


def _search(
    workspace: Workspace, repo_id: str, goal: str, readable: Mapping[str, FileNode]
) -> tuple[dict[str, SearchHit], str]:
    """The goal's search hits among the readable files, by path, and the retrieval path."""
    try:
        request = SearchRequest.of(repo_id, goal[:MAX_TEXT_CHARS], k=SEARCH_K)
        result = workspace.search(request)
    except InvalidInputError:  # (a goal without a searchable word)
        return {}, "none"
    hits = {h.path: h for h in result.hits if h.path is not None and h.path in readable}
    return hits, result.retrieval_path


def _fuse(node: FileNode, signal: _Signals, hit: SearchHit | None, top: float) -> FileRelevance:
    evidence: list[str] = []
    kernel = 0
    if signal.path_terms:
        kernel += PATH_MATCH
        evidence.append(f"path matches {', '.join(signal.path_terms)}")
    if signal.symbol is not None:
        kernel += SYMBOL_MATCH
        evidence.append(f"defines {signal.symbol.fq_name}")
    if signal.referenced is not None:
        kernel += REFERENCE_MATCH
        evidence.append(f"imports or references {signal.referenced}")
    if node.is_test:
        kernel += TEST_BONUS
        evidence.append("test file")
    search = 0.0
    if hit is not None and top > 0:
        search = SEARCH_WEIGHT * hit.score / top
        evidence.append(f"search: {' '.join(hit.reasons)}")
    lines, symbol = _focus(signal, hit)
    return FileRelevance(
        path=node.path,
        score=round(kernel + search, 6),
        kernel_score=kernel,
        is_test=node.is_test,
        lines=lines,
        symbol=symbol,
        evidence=tuple(evidence),
    )


def _focus(signal: _Signals, hit: SearchHit | None) -> tuple[tuple[int, int] | None, str | None]:
    """The best-matching lines and symbol: the kernel's matched symbol, else the hit's."""
    if signal.symbol is not None:
        return (signal.symbol.start_line, signal.symbol.end_line), signal.symbol.fq_name
    if hit is None:
        return None, None
    symbol = hit.symbols[0].fq_name if hit.symbols else None
    return hit.lines, symbol
