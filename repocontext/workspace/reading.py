"""The reads beside ranked search: pages, symbols, grep and the repository map.

A mixin of :class:`~repocontext.workspace.facade.Workspace` (which provides the store, the
index service and the settings): each method delegates to its domain module. Split from the
facade by concept: these are the agent's direct reads of a repository, with the same path
guard and grants as the rest.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from repocontext.index.service import IndexService
from repocontext.pack.page import LineRange, Page, read_page
from repocontext.pack.symbols import SymbolSources, read_symbols
from repocontext.search.grep import GrepPage, GrepRequest, grep
from repocontext.search.repo_map import RepoMap, build_repo_map
from repocontext.settings import Settings
from repocontext.store import Store

__all__ = ["Reading"]


class Reading:
    """Direct reads of a repository (mixed into the workspace facade)."""

    settings: Settings
    _store: Store
    _index: IndexService

    def page(
        self,
        repo_id: str,
        path: str,
        lines: LineRange | None = None,
        *,
        budget_tokens: int | None = None,
    ) -> Page:
        """Read a file, or lines ``(start, end)`` of it, from disk (see :mod:`.pack.page`).

        Raises:
            RepoContextError: As :func:`~repocontext.pack.page.read_page`: ``repo.not_found``,
                ``path.outside_workspace``, ``path.not_found``, ``input.invalid``.
        """
        return read_page(
            self._store, self._index, repo_id, path, lines, budget_tokens=budget_tokens
        )

    def symbols(
        self, repo_id: str, names: Sequence[str], *, budget_tokens: int | None = None
    ) -> SymbolSources:
        """Serve definitions by name, their source from disk (see :mod:`.pack.symbols`).

        Raises:
            RepoContextError: ``repo.not_found``, ``input.invalid`` (no or malformed names).
        """
        return read_symbols(self._store, self._index, repo_id, names, budget_tokens=budget_tokens)

    def grep(self, request: GrepRequest) -> GrepPage:
        """Search the indexed files for a literal or regex, a page of lines (``.search.grep``).

        Raises:
            RepoContextError: ``repo.not_found``, ``input.invalid`` (a bad pattern or glob),
                ``store.invalid_continuation``, ``path.root_changed``.
        """
        return grep(self._store, request)

    def repo_map(
        self,
        repo_id: str,
        budget_tokens: int,
        exclude: Collection[str] = (),
        query: str | None = None,
    ) -> RepoMap:
        """Rank the repository's files by references (PageRank) and list them within a budget.

        See :mod:`repocontext.search.repo_map`; ``exclude`` paths are left out of the map.

        Raises:
            NotFoundError: The repository is not registered.
            InvalidInputError: ``budget_tokens`` is below 1.
        """
        encoding = self.settings.token_encoding
        return build_repo_map(
            self._store, repo_id, budget_tokens, exclude=exclude, query=query, encoding=encoding
        )
