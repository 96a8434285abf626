"""The initial set: which pages a task starts with, in order.

1. ``test``: the most relevant tests (at most 3, best first);
2. ``imported by test``: the repository files those tests import;
3. ``import hop``: the repository files those import in turn (one more hop);
4. ``search hit``: every other relevant file, best first.

Within steps 2 and 3 files are ordered by their relevance score (then by the order the
imports were found). A file is listed once, at its first step. Imports are the index's
resolved links (``Workspace.related``: Python ``import``/``from``, JavaScript
``import``/``require`` specifiers and the other languages the index resolves), so no page
text is parsed here. Files outside the scope or without text are skipped. The kernel takes
the list in order while the budget lasts (:mod:`.kernel`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from lattice_runtime.kernel.pages import PageReason, PageRequest
from lattice_runtime.kernel.relevance import FileRelevance, Ranking
from lattice_runtime.kernel.scope import ScopeFilter
from repocontext.index import FileNode

__all__ = ["MAX_TESTS", "Imports", "initial_requests"]

MAX_TESTS: Final = 3

Imports = Callable[[str], Sequence[tuple[str, str]]]
"""A file's imported repository files: ``(path, why)`` pairs."""


def initial_requests(
    ranking: Ranking,
    imports_of: Imports,
    nodes: Mapping[str, FileNode],
    scope: ScopeFilter,
) -> list[PageRequest]:
    """The initial set's page requests, in grant order (module docstring)."""
    listed: dict[str, PageRequest] = {}

    def usable(path: str) -> bool:
        node = nodes.get(path)
        return node is not None and node.has_content and path in scope and path not in listed

    tests = [f for f in ranking.files if f.is_test and f.relevant][:MAX_TESTS]
    for test in tests:
        listed[test.path] = _request(test.path, "test", nodes, ranking, ())
    sources = [test.path for test in tests]
    hops: tuple[PageReason, ...] = ("imported by test", "import hop")
    for reason in hops:
        found = _imported(sources, imports_of, usable, ranking)
        for path, why in found:
            listed[path] = _request(path, reason, nodes, ranking, (why,))
        sources = [path for path, _ in found]
    for other in ranking.files:
        if other.relevant and usable(other.path):
            listed[other.path] = _request(other.path, "search hit", nodes, ranking, ())
    return list(listed.values())


def _imported(
    sources: Iterable[str],
    imports_of: Imports,
    usable: Callable[[str], bool],
    ranking: Ranking,
) -> list[tuple[str, str]]:
    """The usable files ``sources`` import, best relevance first, with why."""
    found: dict[str, str] = {}
    for source in sources:
        for path, why in imports_of(source):
            if path != source and path not in found and usable(path):
                found[path] = f"imported by {source} ({why})"
    scores = {path: _score(ranking.get(path)) for path in found}
    return sorted(found.items(), key=lambda item: -scores[item[0]])


def _score(relevance: FileRelevance | None) -> float:
    return relevance.score if relevance is not None else 0.0


def _request(
    path: str,
    reason: PageReason,
    nodes: Mapping[str, FileNode],
    ranking: Ranking,
    why: tuple[str, ...],
) -> PageRequest:
    relevance = ranking.get(path)
    evidence = relevance.evidence if relevance is not None else ()
    return PageRequest(
        path=path,
        reason=reason,
        is_test=nodes[path].is_test,
        focus=relevance.lines if relevance is not None else None,
        symbol=relevance.symbol if relevance is not None else None,
        provenance=(*why, *evidence),
    )
