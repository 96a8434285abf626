"""What the kernel hands out, and the budget it hands it out of.

A :class:`ContextGrant` is one answer of the kernel (the initial grant or one fault's): the
pages it added, the repository map of what is still ungranted, and the run's totals so far.
The :class:`PageLedger` counts every page granted over the run against the task's budget;
the initial grant leaves a reserve for faults (a quarter of the tokens and one page per
allowed fault, at most a quarter of the pages) so a worker's first ``context_request`` can be
served.
"""

from __future__ import annotations

from dataclasses import dataclass

from lattice_runtime.compile.task import Budget
from lattice_runtime.kernel.pages import ContextPage, page_id
from lattice_runtime.kernel.repomap import MapEntry
from lattice_runtime.protocol.messages import ContextRequestItem

__all__ = ["ContextGrant", "FaultRecord", "PageLedger"]


@dataclass(frozen=True, slots=True)
class ContextGrant:
    """One answer of the kernel.

    Attributes:
        pages: The pages this grant adds, in grant order.
        repo_map: The map of the in-scope files no page covers yet (at most 12,000
            characters, 8 symbols per file).
        faults_used: Context faults served so far in the run.
        tokens_used: Tokens of every page granted so far in the run (this grant's included).
        refused: What this grant could not serve, each ``<request>: <why>``.
        map_entries: The repository map as entries (path and symbols), in map order.
    """

    pages: tuple[ContextPage, ...]
    repo_map: str
    faults_used: int
    tokens_used: int
    refused: tuple[str, ...] = ()
    map_entries: tuple[MapEntry, ...] = ()

    @property
    def page_tokens(self) -> int:
        """Tokens of this grant's pages alone."""
        return sum(page.token_count for page in self.pages)


@dataclass(frozen=True, slots=True)
class FaultRecord:
    """One served ``context_request``, as the run record keeps it.

    Attributes:
        number: 1 for the run's first fault, 2 for the next...
        requests: What the worker asked for.
        granted: The ids of the pages granted for it.
        refused: What was not granted, each ``<request>: <why>``.
    """

    number: int
    requests: tuple[ContextRequestItem, ...]
    granted: tuple[str, ...]
    refused: tuple[str, ...]


class PageLedger:
    """The pages granted over a run, counted against the task's budget."""

    def __init__(self, budget: Budget) -> None:
        """Start an empty ledger for ``budget``."""
        self.budget = budget
        self._pages: dict[str, ContextPage] = {}
        self.tokens = 0

    @property
    def pages(self) -> tuple[ContextPage, ...]:
        """Every granted page, in grant order."""
        return tuple(self._pages.values())

    @property
    def paths(self) -> frozenset[str]:
        """The paths some granted page covers (whole or in part)."""
        return frozenset(page.path for page in self._pages.values())

    def get(self, page_id: str) -> ContextPage | None:
        """The granted page ``page_id``, if any."""
        return self._pages.get(page_id)

    def holding(self, page: ContextPage) -> str | None:
        """The id of a granted page that already holds ``page``'s content, if any.

        That is the same page, or the whole file it is a slice of (the same fingerprint).
        """
        if page.id in self._pages:
            return page.id
        whole = page_id(page.path, page.fingerprint)
        return whole if whole in self._pages else None

    def pages_left(self, *, initial: bool = False) -> int:
        """Pages that may still be granted (``initial``: keeping the fault reserve)."""
        limit = self.budget.pages
        if initial:
            limit -= min(self.budget.context_faults, self.budget.pages // 4)
        return max(limit - len(self._pages), 0)

    def tokens_left(self, *, initial: bool = False) -> int:
        """Tokens that may still be granted (``initial``: keeping the fault reserve)."""
        limit = self.budget.context_tokens
        if initial and self.budget.context_faults > 0:
            limit -= self.budget.context_tokens // 4
        return max(limit - self.tokens, 0)

    def add(self, page: ContextPage) -> None:
        """Count ``page`` as granted."""
        self._pages[page.id] = page
        self.tokens += page.token_count
