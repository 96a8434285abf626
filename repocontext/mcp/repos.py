"""The ``repocontext_list_repos`` tool."""

from __future__ import annotations

from repocontext.auth import current_grant
from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.wire import ListReposResult
from repocontext.workspace import Workspace

__all__ = ["list_repos_tool"]


def list_repos_tool(workspace: Workspace) -> ToolSpec:
    """Return the ``repocontext_list_repos`` tool bound to ``workspace``."""

    @map_errors
    def repocontext_list_repos() -> ListReposResult:
        """List the registered repositories, in ascending repoId order.

        Returns `repos[{repoId, root, files, lastIngestedAt, indexedCommit, vectors}]`:
        `root` is the absolute directory; `files` and `vectors` count what the index holds
        (0 until the first index pass finishes); `lastIngestedAt` (ISO 8601, UTC) and
        `indexedCommit` are null until then. An empty list means nothing is registered.

        Next: pass a `repoId` to repocontext_health to see whether that repository is ready.
        """
        grant = current_grant()
        repos = workspace.list_repos()
        return ListReposResult.of(info for info in repos if grant.allows(info.repo_id))

    return ToolSpec(
        name="repocontext_list_repos",
        fn=repocontext_list_repos,
        title="Registered repositories",
        annotations=READ_ONLY,
    )
