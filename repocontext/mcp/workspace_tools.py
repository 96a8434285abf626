"""Workspace administration tools: add_repo, remove_repo, reset_index.

Offered only by a server started with ``--workspace-root`` (``mode="workspace"``), with writes
enabled and a grant that may write. Removal and reset never touch files on disk.
"""

from __future__ import annotations

from typing import Annotated, Final

from mcp.types import ToolAnnotations
from pydantic import Field

from repocontext.mcp._gate import ToolSpec, map_errors
from repocontext.mcp._params import NewRepoId, RepoId, Text, WorkspacePath
from repocontext.mcp.index import INDEX_WRITE, walk_options
from repocontext.wire import IndexStatusResult, RemoveRepoResult, ResetIndexResult
from repocontext.workspace import Workspace

__all__ = ["workspace_tools"]

DROP: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)

MAX_GLOBS: Final = 1000
Globs = Annotated[
    list[Text] | None,
    Field(max_length=MAX_GLOBS, description="gitignore-style; kept for later runs."),
]


def workspace_tools(workspace: Workspace) -> list[ToolSpec]:
    """Return the workspace administration tools bound to ``workspace``."""
    return [_add_repo(workspace), _remove_repo(workspace), _reset_index(workspace)]


def _add_repo(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_add_repo(
        path: WorkspacePath,
        repoId: NewRepoId = None,
        includeGlobs: Globs = None,
        excludeGlobs: Globs = None,
        respectGitignore: bool = True,
        excludeBinary: bool = True,
    ) -> IndexStatusResult:
        """Register a repository of the workspace and index it in the background.

        `path` must resolve inside the workspace root (symlinks and `..` resolved), else
        `path.outside_workspace`; `/` and the home directory are `path.dangerous_root`. The
        id (a plain name) defaults to the last path segment; a directory has one id
        (`repo.conflict` for a second). Returns the run's progress snapshot at once; calling
        again starts an incremental run.

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

        Deletes its code index, memory entries (claims included), sessions, vectors and
        search projections, with a count per store tree; files on disk are never touched.
        An unknown repoId is a no-op (`existed` false). During an index run of it nothing is
        deleted (`index.running`): wait for repocontext_index_status, then call again. To
        keep memory, use repocontext_reset_index.
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

        The repository then reads as `building` and code search finds nothing until it is
        indexed again; memory entries and sessions stay, files on disk are never touched.
        Errors: `repo.not_found`, `index.running` (nothing was deleted: wait, call again).

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
