"""A search request, checked once: the limits every edge (MCP, HTTP, CLI) shares.

:meth:`SearchRequest.of` refuses a ``k`` out of range and an over-long query with
``input.invalid`` naming the field and its range, maps an unknown scope to ``code`` (the
documented fallback), and refuses an unknown mode, language or unusable glob with
``input.invalid`` naming the allowed values, so the tool, the route and the command accept
exactly the same requests.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from repocontext.arguments import MAX_TEXT_CHARS, checked_range, quoted
from repocontext.arguments import repo_id as checked_repo_id
from repocontext.errors import InvalidInputError
from repocontext.search.filters import FileFilter
from repocontext.search.modes import SearchMode, checked_mode
from repocontext.search.service import SearchScope

__all__ = ["DEFAULT_K", "MAX_K", "MIN_K", "SCOPES", "SearchRequest"]

MIN_K: Final = 1
MAX_K: Final = 100
DEFAULT_K: Final = 10
SCOPES: Final[tuple[SearchScope, ...]] = ("code", "memory", "all")


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search, already checked (build it with :meth:`of`).

    Attributes:
        repo_id: The repository searched.
        query: What is looked for, in words or identifiers.
        k: How many hits to return, ``MIN_K..MAX_K``.
        scope: ``code`` (files), ``memory`` (memory entries) or ``all`` (both).
        mode: ``keyword``, ``semantic`` or ``hybrid``; ``None``: hybrid when vectors can
            answer, else keyword (:mod:`repocontext.search.modes`).
        files: Only files of these languages and globs are ranked (``None``: all).
    """

    repo_id: str
    query: str
    k: int = DEFAULT_K
    scope: SearchScope = "code"
    mode: SearchMode | None = None
    files: FileFilter | None = None

    @classmethod
    def of(
        cls,
        repo_id: str,
        query: str,
        k: int = DEFAULT_K,
        scope: str | None = "code",
        *,
        mode: str | None = None,
        languages: Iterable[str] | None = None,
        globs: Iterable[str] | None = None,
    ) -> SearchRequest:
        """Check a caller's search and return it; an unknown or missing scope means ``code``.

        Raises:
            InvalidInputError: ``k`` is out of range, the query is too long, the
                repository id is malformed, the mode, a language or a glob is unknown, or
                files are filtered in a search of memory entries only.
        """
        if len(query) > MAX_TEXT_CHARS:
            raise InvalidInputError(
                f"the query {quoted(query)} is too long",
                hint=f"Ask in at most {MAX_TEXT_CHARS} characters.",
            )
        checked_scope: SearchScope = next((s for s in SCOPES if s == scope), "code")
        files = FileFilter.of(languages, globs)
        if files is not None and checked_scope == "memory":
            raise InvalidInputError(
                "languages and globs filter files, and scope memory ranks memory entries only",
                hint="Drop the filters, or search scope code (or all: the filters narrow "
                "its files, not its entries).",
            )
        return cls(
            repo_id=checked_repo_id(repo_id),
            query=query,
            k=int(checked_range("k", k, MIN_K, MAX_K)),
            scope=checked_scope,
            mode=checked_mode(mode),
            files=files,
        )
