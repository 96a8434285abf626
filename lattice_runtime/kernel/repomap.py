"""The repository map a grant carries: the files the worker was not given, ranked.

Built from ``Workspace.repo_map`` (files ranked by PageRank over the reference graph, focused
on the goal's terms) with every granted path excluded and out-of-scope files dropped. One line
per file, ``path: sym1, sym2, ...`` with at most 8 symbols, most important file first, cut at
a whole line so the text never exceeds 12,000 characters.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from lattice_runtime.kernel.scope import ScopeFilter
from repocontext.workspace import Workspace

__all__ = ["MAP_CHARS", "MAP_SYMBOLS", "MapEntry", "RepoMapView", "render_repo_map"]

MAP_CHARS: Final = 12_000
MAP_SYMBOLS: Final = 8
_MAP_TOKENS: Final = 6_000
"""Tokens asked of ``Workspace.repo_map``: more than 12,000 characters' worth, so the cut is
the character cap's."""


@dataclass(frozen=True, slots=True)
class MapEntry:
    """One file of the map.

    Attributes:
        path: Repository-relative path.
        symbols: Its most important symbols (at most :data:`MAP_SYMBOLS`).
    """

    path: str
    symbols: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RepoMapView:
    """The map as the prompt shows it (``text``) and as structured data (``entries``)."""

    text: str
    entries: tuple[MapEntry, ...]


def render_repo_map(
    workspace: Workspace,
    repo_id: str,
    *,
    granted: Collection[str],
    scope: ScopeFilter,
    query: str | None = None,
) -> RepoMapView:
    """The map of the in-scope files not in ``granted`` (module docstring).

    Raises:
        RepoContextError: The index could not be read.
    """
    ranked = workspace.repo_map(repo_id, _MAP_TOKENS, exclude=granted, query=query)
    lines: list[str] = []
    entries: list[MapEntry] = []
    size = 0
    for entry in ranked.entries:
        if entry.path not in scope:
            continue
        symbols = entry.symbols[:MAP_SYMBOLS]
        line = f"{entry.path}: {', '.join(symbols)}" if symbols else entry.path
        cost = len(line) + (1 if lines else 0)
        if size + cost > MAP_CHARS:
            break
        lines.append(line)
        entries.append(MapEntry(entry.path, tuple(symbols)))
        size += cost
    return RepoMapView("\n".join(lines), tuple(entries))
