"""The wire form of what is read from a repository: a page of a file, the repository map.

The results of ``repocontext_read`` (:class:`ReadResult`, from a :class:`~repocontext.pack.Page`)
and ``repocontext_map`` (:class:`RepoMapResult`, from a :class:`~repocontext.search.RepoMap`);
the CLI's ``read --json`` and ``map --json`` print the same objects.
"""

from __future__ import annotations

from repocontext.pack import Page
from repocontext.search import RepoMap, RepoMapEntry
from repocontext.wire._base import WireModel

__all__ = ["ReadResult", "RepoMapEntryResult", "RepoMapResult"]


class ReadResult(WireModel):
    """Result of ``repocontext_read``."""

    path: str
    start_line: int
    end_line: int
    text: str
    blob_id: str
    token_count: int
    fresh: bool
    continuation: int | None = None

    @classmethod
    def of(cls, page: Page) -> ReadResult:
        """Build the wire form of a :class:`~repocontext.pack.Page`."""
        return cls(
            path=page.path,
            start_line=page.start_line,
            end_line=page.end_line,
            text=page.text,
            blob_id=page.blob_id,
            token_count=page.token_count,
            fresh=page.fresh,
            continuation=page.continuation,
        )


class RepoMapEntryResult(WireModel):
    """One file of a map."""

    path: str
    symbols: list[str]

    @classmethod
    def of(cls, entry: RepoMapEntry) -> RepoMapEntryResult:
        """Build the wire form of a :class:`~repocontext.search.RepoMapEntry`."""
        return cls(path=entry.path, symbols=list(entry.symbols))


class RepoMapResult(WireModel):
    """Result of ``repocontext_map``."""

    repo_id: str
    budget_tokens: int
    token_count: int
    files: int
    truncated: bool
    entries: list[RepoMapEntryResult]

    @classmethod
    def of(cls, repo_map: RepoMap) -> RepoMapResult:
        """Build the wire form of a :class:`~repocontext.search.RepoMap`."""
        return cls(
            repo_id=repo_map.repo_id,
            budget_tokens=repo_map.budget_tokens,
            token_count=repo_map.token_count,
            files=repo_map.files,
            truncated=repo_map.truncated,
            entries=[RepoMapEntryResult.of(entry) for entry in repo_map.entries],
        )
