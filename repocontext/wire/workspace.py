"""The wire form of workspace answers: health, the repository list, removal and reset.

The results of ``repocontext_health``, ``repocontext_list_repos``,
``repocontext_remove_repo`` and ``repocontext_reset_index`` (``repocontext_add_repo`` and
``repocontext_bootstrap`` answer with :class:`~repocontext.wire.IndexStatusResult`); the
CLI's ``repos list|remove|reset --json`` prints the same objects.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from repocontext.index import IndexReset, RepoRemoval
from repocontext.wire._base import WireModel
from repocontext.workspace import HealthReport, RepoInfo, RepositoryHealth, RetrievalPhase, Verdict

__all__ = [
    "HealthResult",
    "ListReposResult",
    "RemoveRepoResult",
    "RepoEntry",
    "RepositoryResult",
    "ResetIndexResult",
]


class RepositoryResult(WireModel):
    """Retrieval health of one repository."""

    verdict: Verdict
    reason: str
    files: int
    vectors_indexed: int
    indexed_at: str | None

    @classmethod
    def of(cls, health: RepositoryHealth) -> RepositoryResult:
        """Build the wire form of a :class:`~repocontext.workspace.RepositoryHealth`."""
        return cls(
            verdict=health.verdict,
            reason=health.reason,
            files=health.files,
            vectors_indexed=health.vectors_indexed,
            indexed_at=health.indexed_at,
        )


class HealthResult(WireModel):
    """Result of ``repocontext_health``."""

    available: bool
    group: Literal["repocontext"]
    status: str
    retrieval_ready: bool
    retrieval_phase: RetrievalPhase
    repositories: int
    repository: RepositoryResult | None = None

    @classmethod
    def of(cls, report: HealthReport) -> HealthResult:
        """Build the wire form of a :class:`~repocontext.workspace.HealthReport`."""
        return cls(
            available=report.available,
            group="repocontext",
            status=report.status,
            retrieval_ready=report.retrieval_ready,
            retrieval_phase=report.retrieval_phase,
            repositories=report.repositories,
            repository=RepositoryResult.of(report.repository) if report.repository else None,
        )


class RepoEntry(WireModel):
    """One registered repository."""

    repo_id: str
    root: str
    files: int
    last_ingested_at: str | None
    indexed_commit: str | None
    vectors: int

    @classmethod
    def of(cls, info: RepoInfo) -> RepoEntry:
        """Build the wire form of a :class:`~repocontext.workspace.RepoInfo`."""
        return cls(
            repo_id=info.repo_id,
            root=info.root,
            files=info.files,
            last_ingested_at=info.last_ingested_at,
            indexed_commit=info.indexed_commit,
            vectors=info.vectors,
        )


class ListReposResult(WireModel):
    """Result of ``repocontext_list_repos``."""

    repos: list[RepoEntry]

    @classmethod
    def of(cls, repos: Iterable[RepoInfo]) -> ListReposResult:
        """Build the wire form of registered repositories (in the order given)."""
        return cls(repos=[RepoEntry.of(info) for info in repos])


class RemoveRepoResult(WireModel):
    """Result of ``repocontext_remove_repo``."""

    repo_id: str
    existed: bool
    removed: dict[str, int]
    total_removed: int
    elapsed_ms: int

    @classmethod
    def of(cls, removal: RepoRemoval) -> RemoveRepoResult:
        """Build the wire form of a :class:`~repocontext.index.RepoRemoval`."""
        return cls(
            repo_id=removal.repo_id,
            existed=removal.existed,
            removed=dict(removal.removed),
            total_removed=removal.total,
            elapsed_ms=removal.elapsed_ms,
        )


class ResetIndexResult(WireModel):
    """Result of ``repocontext_reset_index``."""

    repo_id: str
    entries_deleted: int
    trees_swept: list[str]
    removed: dict[str, int]
    memory_preserved: bool
    elapsed_ms: int

    @classmethod
    def of(cls, reset: IndexReset) -> ResetIndexResult:
        """Build the wire form of an :class:`~repocontext.index.IndexReset`."""
        return cls(
            repo_id=reset.repo_id,
            entries_deleted=reset.entries_deleted,
            trees_swept=list(reset.trees_swept),
            removed=dict(reset.removed),
            memory_preserved=reset.memory_preserved,
            elapsed_ms=reset.elapsed_ms,
        )
