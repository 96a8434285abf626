"""Index tools: bootstrap, index_status, outline, related, changed."""

from __future__ import annotations

from typing import Annotated, Final

from mcp.types import ToolAnnotations
from pydantic import Field

from repocontext.index import MAX_RELATED_PAGE, RELATED_PAGE, WalkOptions
from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.mcp._params import (
    NewRepoId,
    OptionalRelPath,
    RelPath,
    RepoId,
    Text,
    WorkspacePath,
)
from repocontext.wire import (
    ChangedResult,
    IndexStatusResult,
    OutlineResult,
    RelatedResult,
)
from repocontext.workspace import Workspace

__all__ = ["index_tools"]

INDEX_WRITE: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
"""Annotations of the tools that register and index a repository (bootstrap, add_repo):
they only add and refresh derived records, never drop anything a caller wrote."""

MAX_GLOBS: Final = 1000
Globs = Annotated[
    list[Text] | None,
    Field(max_length=MAX_GLOBS, description="gitignore-style; kept for later runs."),
]


DEFAULT_OUTLINE_SYMBOLS: Final = 2000
"""Symbols an outline returns unless asked for more (a generated file may hold 10,000)."""
MAX_OUTLINE_SYMBOLS: Final = 50_000


def index_tools(workspace: Workspace) -> list[ToolSpec]:
    """Return the index tools bound to ``workspace``."""
    return [
        _bootstrap(workspace),
        _index_status(workspace),
        _outline(workspace),
        _related(workspace),
        _changed(workspace),
    ]


def walk_options(
    workspace: Workspace,
    include_globs: list[str] | None,
    exclude_globs: list[str] | None,
    respect_gitignore: bool,
    exclude_binary: bool,
) -> WalkOptions | None:
    """Return the walk filters a bootstrap or add_repo call asked for (size cap: settings).

    ``None`` when the call names none (no globs, both flags at their defaults): the filters
    kept with the repository apply again, as for the CLI. An empty list clears a kept one.
    """
    if include_globs is None and exclude_globs is None and respect_gitignore and exclude_binary:
        return None
    return WalkOptions(
        include_globs=tuple(include_globs or ()),
        exclude_globs=tuple(exclude_globs or ()),
        respect_gitignore=respect_gitignore,
        exclude_binary=exclude_binary,
        max_file_bytes=workspace.settings.max_file_bytes,
    )


def _bootstrap(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_bootstrap(
        repoRoot: WorkspacePath,
        repoId: NewRepoId = None,
        includeGlobs: Globs = None,
        excludeGlobs: Globs = None,
        respectGitignore: bool = True,
        excludeBinary: bool = True,
    ) -> IndexStatusResult:
        """Register a repository and index it in the background; returns at once.

        `repoRoot` must resolve inside the workspace root (symlinks resolved), else
        `path.outside_workspace`; `/` and the home directory are refused. The id (a plain
        name) defaults to the directory name; a directory has one id (`repo.conflict` for a
        second). Globs are kept: a later call without filters reuses them (`includeGlobs:
        []` drops them). Calling again starts an incremental run.

        Next: poll repocontext_index_status until `status` is `completed`.
        """
        options = walk_options(
            workspace, includeGlobs, excludeGlobs, respectGitignore, excludeBinary
        )
        return IndexStatusResult.of(workspace.bootstrap(repoRoot, repoId, options))

    return ToolSpec(
        "repocontext_bootstrap",
        repocontext_bootstrap,
        "Index a repository",
        INDEX_WRITE,
        writes=True,
        mode="single_repo",
    )


def _index_status(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_index_status(repoId: RepoId) -> IndexStatusResult:
        """Report the last or current index run of a repository.

        `status`: `none`, `running`, `completed` or `failed` (with `error{code, message}`;
        `index.interrupted` when the indexing process died). `issues` lists up to 50
        skipped paths with the reason. Unknown repoId: `repo.not_found`.
        """
        return IndexStatusResult.of(workspace.index_status(repoId))

    return ToolSpec("repocontext_index_status", repocontext_index_status, "Index status", READ_ONLY)


def _outline(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_outline(
        repoId: RepoId,
        path: RelPath,
        maxSymbols: Annotated[
            int, Field(ge=1, le=MAX_OUTLINE_SYMBOLS, description="At most this many symbols.")
        ] = DEFAULT_OUTLINE_SYMBOLS,
    ) -> OutlineResult:
        """Return a file's outline from the index, without reading the file.

        Lines are 1-based inclusive; `tokenCount` is the whole file's (o200k). `syntaxErrors`:
        the outline may miss definitions after a parse error, so read the file where it
        matters. `exists` false: not indexed (check with repocontext_scan scope=files). Over
        `maxSymbols` symbols: the first ones depth-first, `truncated` true.
        """
        view = workspace.outline(repoId, path, max_symbols=maxSymbols)
        return OutlineResult.of(view)

    return ToolSpec("repocontext_outline", repocontext_outline, "File outline", READ_ONLY)


def _related(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_related(
        repoId: RepoId,
        path: RelPath,
        offset: Annotated[int, Field(ge=0, description="Skip this many items of each list.")] = 0,
        limit: Annotated[
            int, Field(ge=1, le=MAX_RELATED_PAGE, description="Items per list.")
        ] = RELATED_PAGE,
    ) -> RelatedResult:
        """Return what a file imports and references, who depends on it, which tests cover it.

        Each of `imports`, `references`, `dependents`, `coveringTests` is a list of
        `{path, reason, names?}` (`reason`: why the link was made, e.g. `python import
        pkg.util`, `naming test_util.py`). Each list holds at most `limit` items; `truncated`
        says one holds more: call again with `offset` = `nextOffset`.
        """
        view = workspace.related(repoId, path, offset=offset, limit=limit)
        return RelatedResult.of(view)

    return ToolSpec("repocontext_related", repocontext_related, "Related files", READ_ONLY)


def _changed(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_changed(
        repoId: RepoId,
        path: Annotated[
            OptionalRelPath, Field(description="Limit to this file or directory.")
        ] = None,
    ) -> ChangedResult:
        """Compare the working tree with the index: what was added, updated, removed.

        Stat first, then git blob id; nothing is written. `impacted`: dependents and
        covering tests of the changes, with the reason. `path` narrows the check to a file
        or directory of the repository.
        """
        return ChangedResult.of(workspace.changed(repoId, path))

    return ToolSpec("repocontext_changed", repocontext_changed, "Drift since indexing", READ_ONLY)
