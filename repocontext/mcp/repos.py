"""The ``repocontext_list_repos`` tool."""

from __future__ import annotations

from repocontext.auth import current_grant
from repocontext.mcp._gate import READ_ONLY, ToolSpec, WireModel, map_errors
from repocontext.workspace import RepoInfo, Workspace

__all__ = ["ListReposResult", "RepoEntry", "list_repos_tool"]


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
        """Build the wire form of a :class:`RepoInfo`."""
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
        return ListReposResult(
            repos=[RepoEntry.of(i) for i in workspace.list_repos() if grant.allows(i.repo_id)]
        )

    return ToolSpec(
        name="repocontext_list_repos",
        fn=repocontext_list_repos,
        title="Registered repositories",
        annotations=READ_ONLY,
    )
