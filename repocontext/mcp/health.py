"""The ``repocontext_health`` tool."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from repocontext.auth import check_repo, current_grant
from repocontext.mcp._gate import READ_ONLY, ToolSpec, WireModel, map_errors
from repocontext.mcp._params import OptionalRepoId
from repocontext.workspace import HealthReport, RepositoryHealth, RetrievalPhase, Verdict, Workspace

__all__ = ["HealthResult", "RepositoryResult", "health_tool"]


class RepositoryResult(WireModel):
    """Retrieval health of one repository."""

    verdict: Verdict
    reason: str
    files: int
    vectors_indexed: int
    indexed_at: str | None

    @classmethod
    def of(cls, health: RepositoryHealth) -> RepositoryResult:
        """Build the wire form of a :class:`RepositoryHealth`."""
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
        """Build the wire form of a :class:`HealthReport`."""
        return cls(
            available=report.available,
            group="repocontext",
            status=report.status,
            retrieval_ready=report.retrieval_ready,
            retrieval_phase=report.retrieval_phase,
            repositories=report.repositories,
            repository=RepositoryResult.of(report.repository) if report.repository else None,
        )


RepoIdParam = Annotated[
    OptionalRepoId,
    Field(description="Also report on this repository (see repocontext_list_repos)."),
]


def health_tool(workspace: Workspace) -> ToolSpec:
    """Return the ``repocontext_health`` tool bound to ``workspace``."""

    @map_errors
    def repocontext_health(repoId: RepoIdParam = None) -> HealthResult:
        """Check that repocontext answers and whether retrieval is ready. Call this first.

        `retrievalPhase` (over the repositories this caller may see): `nothing_registered`,
        `building` (an index is not finished: results would be incomplete, call again
        later; the only phase not ready), `keyword_only` (no vectors yet) or `serving`.
        With `repoId`, also `repository{verdict, ...}`; verdict `unknown` means not
        registered (not an error).

        Next: repocontext_list_repos for the registered repositories and their ids.
        """
        grant = current_grant()
        if repoId is not None:
            check_repo(repoId, grant)
        return HealthResult.of(workspace.health(repoId, visible=grant.allows))

    return ToolSpec(
        name="repocontext_health",
        fn=repocontext_health,
        title="Service and retrieval health",
        annotations=READ_ONLY,
    )
