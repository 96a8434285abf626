"""A search request, checked once: the limits every edge (MCP, HTTP, CLI) shares.

:meth:`SearchRequest.of` refuses a ``k`` out of range and an over-long query with
``input.invalid`` naming the field and its range, and maps an unknown scope to ``code`` (the
documented fallback), so the tool, the route and the command accept exactly the same
requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from repocontext.arguments import MAX_TEXT_CHARS, checked_range, quoted
from repocontext.arguments import repo_id as checked_repo_id
from repocontext.errors import InvalidInputError
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
    """

    repo_id: str
    query: str
    k: int = DEFAULT_K
    scope: SearchScope = "code"

    @classmethod
    def of(
        cls, repo_id: str, query: str, k: int = DEFAULT_K, scope: str | None = "code"
    ) -> SearchRequest:
        """Check a caller's search and return it; an unknown or missing scope means ``code``.

        Raises:
            InvalidInputError: ``k`` is out of range, the query is too long or the
                repository id is malformed.
        """
        if len(query) > MAX_TEXT_CHARS:
            raise InvalidInputError(
                f"the query {quoted(query)} is too long",
                hint=f"Ask in at most {MAX_TEXT_CHARS} characters.",
            )
        return cls(
            repo_id=checked_repo_id(repo_id),
            query=query,
            k=int(checked_range("k", k, MIN_K, MAX_K)),
            scope=next((s for s in SCOPES if s == scope), "code"),
        )
