"""Workspace administration tools: add_repo, remove_repo, reset_index.

Offered only by a server started with ``--workspace-root`` (``mode="workspace"``), with writes
enabled and a grant that may write. Removal and reset never touch files on disk.
"""

from __future__ import annotations

from typing import Annotated, Final

from mcp.types import ToolAnnotations
from pydantic import Field

from repocontext.index.removal import IndexReset, RepoRemoval
from repocontext.mcp._gate import ToolSpec, WireModel, map_errors
from repocontext.mcp.index import INDEX_WRITE, walk_options
from repocontext.wire.retrieval import IndexStatusResult
from repocontext.workspace import Workspace

__all__ = ["RemoveRepoResult", "ResetIndexResult", "workspace_tools"]

DROP: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)

RepoId = Annotated[str, Field(description="Repository id (see repocontext_list_repos).")]


class RemoveRepoResult(WireModel):
    """Result of ``repocontext_remove_repo``."""

    repo_id: str
    existed: bool
    removed: dict[str, int]
    total_removed: int
    elapsed_ms: int

    @classmethod
    def of(cls, removal: RepoRemoval) -> RemoveRepoResult:
        """Build the wire form of a :class:`RepoRemoval`."""
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
        """Build the wire form of an :class:`IndexReset`."""
        return cls(
            repo_id=reset.repo_id,
            entries_deleted=reset.entries_deleted,
            trees_swept=list(reset.trees_swept),
            removed=dict(reset.removed),
            memory_preserved=reset.memory_preserved,
            elapsed_ms=reset.elapsed_ms,
        )


def workspace_tools(workspace: Workspace) -> list[ToolSpec]:
    """Return the workspace administration tools bound to ``workspace``."""
    return [_add_repo(workspace), _remove_repo(workspace), _reset_index(workspace)]


def _add_repo(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_add_repo(
        path: Annotated[str, Field(description="Repository directory inside the workspace.")],
        repoId: Annotated[
            str | None, Field(description="Id; default: the last path segment.")
        ] = None,
        includeGlobs: Annotated[
            list[str] | None, Field(description="Only paths matching (gitignore-style).")
        ] = None,
        excludeGlobs: Annotated[
            list[str] | None, Field(description="Skip paths matching (gitignore-style).")
        ] = None,
        respectGitignore: bool = True,
        excludeBinary: bool = True,
    ) -> IndexStatusResult:
        """Register a repository of the workspace and index it in the background.

        `path` must resolve inside the server's workspace root (symlinks and `..`
        resolved), else `path.outside_workspace`; `/` and the home directory are refused
        (`path.dangerous_root`), a missing directory is `path.not_found`, an id taken by
        another directory `repo.conflict`. Returns at once with the run's progress
        snapshot (`status`, `phase`, `counters`, as repocontext_index_status). Calling it
        again for the same path starts an incremental run; after repocontext_reset_index
        it indexes the repository afresh.

        Next: poll repocontext_index_status until `status` is `completed`.
        """
        options = walk_options(
            workspace, includeGlobs, excludeGlobs, respectGitignore, excludeBinary
        )
        return IndexStatusResult.of(workspace.bootstrap(path, repoId, options))

    return ToolSpec(
        "repocontext_add_repo",
        repocontext_add_repo,
        "Add a repository",
        INDEX_WRITE,
        writes=True,
        mode="workspace",
    )


def _remove_repo(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_remove_repo(repoId: RepoId) -> RemoveRepoResult:
        """Unregister a repository and delete everything stored for it. Cannot be undone.

        Deletes its code index, memory entries (claims included), context sessions and
        vectors, and its search projections; files on disk are never touched. Returns
        `{repoId, existed, removed{tree: count}, totalRemoved, elapsedMs}` with a count for
        every store tree (`structural`, `symbol`, `content`, `xref`, `memory`, `session`,
        `vector-membership`, `vector-payload`, `vector-metadata`). An unknown repoId is a
        no-op: `existed` false, every count 0. While an index run of the repository is in
        progress nothing is deleted and the error is `index.running`: wait for
        repocontext_index_status to leave `running`, then call again.

        To drop only the code index and keep memory, use repocontext_reset_index.
        """
        return RemoveRepoResult.of(workspace.remove_repo(repoId))

    return ToolSpec(
        "repocontext_remove_repo",
        repocontext_remove_repo,
        "Remove a repository",
        DROP,
        writes=True,
        mode="workspace",
    )


def _reset_index(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_reset_index(repoId: RepoId) -> ResetIndexResult:
        """Drop a repository's code index; keep its memory and its registration.

        Deletes file, package, symbol, content, cross-reference and vector records and the
        search projections, and clears the index status, so repocontext_health reports the
        repository as `building` and code search finds nothing until it is indexed again.
        Memory entries (`repo/{repoId}/mem/...`) and sessions are kept
        (`memoryPreserved: true`); files on disk are never touched. Returns
        `{repoId, entriesDeleted, treesSwept[], removed{tree: count}, memoryPreserved,
        elapsedMs}`. Errors: `repo.not_found` (unknown repoId), `index.running` (a run is
        in progress; nothing was deleted: wait for it, then call again).

        Next: repocontext_add_repo with the repository's path re-indexes it.
        """
        return ResetIndexResult.of(workspace.reset_index(repoId))

    return ToolSpec(
        "repocontext_reset_index",
        repocontext_reset_index,
        "Reset a repository's index",
        DROP,
        writes=True,
        mode="workspace",
    )
