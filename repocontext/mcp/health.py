"""The ``repocontext_health`` tool."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from repocontext.auth import check_repo, current_grant
from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.mcp._params import OptionalRepoId
from repocontext.wire import HealthResult
from repocontext.workspace import Workspace

__all__ = ["health_tool"]


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
