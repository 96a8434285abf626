r"""Context faults: what a worker's ``context_request`` item names, resolved to a page request.

* **Path hint.** Normalised (``./`` and leading ``/`` dropped, ``\`` read as ``/``), then the
  first of: the exact path; the shortest path ending in ``/<hint>``; the shortest path whose
  file name is the hint's; the shortest path containing the hint (case-insensitively); the
  closest path or file name by edit similarity (``difflib``, ratio >= 0.6). Ties by path.
* **Symbol.** With a resolved path hint, a definition in that file whose qualified name is the
  symbol or ends in ``.<symbol>``; else ``Workspace.symbols`` (qualified names and their
  dotted tails, ``path::name``), in-scope definitions first; else a definition of that name
  in any indexed file (case-insensitive). The page is centred on the definition's lines.
* **Refusals** name the request and why (no file matches, no definition found); the kernel
  adds budget, scope and staleness refusals.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from lattice_runtime.kernel.pages import PageRequest
from lattice_runtime.kernel.relevance import Ranking, flat_symbols
from lattice_runtime.kernel.scope import ScopeFilter
from lattice_runtime.protocol.messages import ContextRequestItem
from repocontext.errors import RepoContextError
from repocontext.index import FileNode
from repocontext.workspace import Workspace

__all__ = ["Refusal", "describe", "resolve_item", "resolve_path_hint"]

_SIMILARITY: Final = 0.6


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request item gets no page (``describe(item)`` + ``: `` + ``why``)."""

    why: str


@dataclass(frozen=True, slots=True)
class _Definition:
    path: str
    lines: tuple[int, int]
    fq_name: str


def describe(item: ContextRequestItem) -> str:
    """The request item in words, for a refusal or a record."""
    parts = []
    if item.symbol:
        parts.append(f"symbol {item.symbol!r}")
    if item.path_hint:
        parts.append(f"path {item.path_hint!r}")
    return " in ".join(parts) or "an empty request"


def resolve_item(
    workspace: Workspace,
    repo_id: str,
    item: ContextRequestItem,
    *,
    nodes: Mapping[str, FileNode],
    ranking: Ranking,
    scope: ScopeFilter,
) -> PageRequest | Refusal:
    """Resolve one request item to the page to read, or say why there is none.

    Raises:
        RepoContextError: The index could not be read.
    """
    path = resolve_path_hint(item.path_hint, nodes) if item.path_hint else None
    asked = f"context_request ({item.reason})" if item.reason else "context_request"
    if item.symbol:
        found = _find_symbol(workspace, repo_id, item.symbol, path, nodes, scope)
        if found is None:
            return Refusal(f"no definition of {item.symbol!r} is indexed")
        return PageRequest(
            path=found.path,
            reason="requested symbol",
            is_test=nodes[found.path].is_test if found.path in nodes else False,
            focus=found.lines,
            symbol=found.fq_name,
            provenance=(asked, f"defined in {found.path}"),
        )
    if not item.path_hint:
        return Refusal("the request names neither a path nor a symbol")
    if path is None:
        return Refusal("no indexed file matches the path")
    relevance = ranking.get(path)
    exact = "" if path == item.path_hint else f" (best match for {item.path_hint!r})"
    return PageRequest(
        path=path,
        reason="requested path",
        is_test=nodes[path].is_test,
        focus=relevance.lines if relevance is not None else None,
        symbol=relevance.symbol if relevance is not None else None,
        provenance=(asked, f"path {path}{exact}"),
    )


def resolve_path_hint(hint: str, nodes: Mapping[str, FileNode]) -> str | None:
    """The indexed path a hint names best (module docstring), or ``None``."""
    wanted = hint.strip().replace("\\", "/").removeprefix("./").lstrip("/")
    if not wanted:
        return None
    if wanted in nodes:
        return wanted
    paths = sorted(nodes)
    name = wanted.rsplit("/", 1)[-1]
    lowered = wanted.lower()
    for test in (
        lambda p: p.endswith(f"/{wanted}"),
        lambda p: p.rsplit("/", 1)[-1] == name,
        lambda p: lowered in p.lower(),
    ):
        found = [p for p in paths if test(p)]
        if found:
            return min(found, key=lambda p: (len(p), p))
    return _closest(wanted, name, paths)


def _closest(wanted: str, name: str, paths: Sequence[str]) -> str | None:
    close = difflib.get_close_matches(wanted, paths, n=1, cutoff=_SIMILARITY)
    if close:
        return close[0]
    names: dict[str, str] = {}
    for path in paths:
        names.setdefault(path.rsplit("/", 1)[-1], path)
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=_SIMILARITY)
    return names[close[0]] if close else None


def _find_symbol(
    workspace: Workspace,
    repo_id: str,
    symbol: str,
    path: str | None,
    nodes: Mapping[str, FileNode],
    scope: ScopeFilter,
) -> _Definition | None:
    if path is not None:
        found = _in_file(nodes[path], symbol)
        if found is not None:
            return found
    try:
        sources = workspace.symbols(repo_id, [symbol]).symbols
    except RepoContextError:  # (a malformed name: the lookup below still tries it)
        sources = ()
    ordered = sorted(sources, key=lambda s: s.path not in scope)  # in scope first, stable
    if ordered:
        best = ordered[0]
        return _Definition(best.path, (best.start_line, best.end_line), best.fq_name)
    candidates = sorted(nodes.values(), key=lambda n: (n.path not in scope, n.path))
    return next((d for n in candidates if (d := _in_file(n, symbol, fold=True)) is not None), None)


def _in_file(node: FileNode, symbol: str, *, fold: bool = False) -> _Definition | None:
    wanted = symbol.replace("::", ".").lower() if fold else symbol.replace("::", ".")
    for item in flat_symbols(node.symbols):
        fq = item.fq_name.lower() if fold else item.fq_name
        if fq == wanted or fq.endswith(f".{wanted}"):
            return _Definition(node.path, (item.start_line, item.end_line), item.fq_name)
    return None
