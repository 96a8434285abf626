"""Index tools: bootstrap, index_status, outline, related, changed."""

from __future__ import annotations

from typing import Annotated, Final

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from repocontext.index.walk import WalkOptions
from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.mcp.retrieval import sent
from repocontext.wire.retrieval import (
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

RepoId = Annotated[str, Field(description="Repository id (see repocontext_list_repos).")]
RepoPath = Annotated[str, Field(description="File path relative to the repository root.")]


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
        repoRoot: Annotated[str, Field(description="Repository directory inside the workspace.")],
        repoId: Annotated[str | None, Field(description="Id; default: the directory name.")] = None,
        includeGlobs: list[str] | None = None,
        excludeGlobs: list[str] | None = None,
        respectGitignore: bool = True,
        excludeBinary: bool = True,
    ) -> IndexStatusResult:
        """Register a repository and index it in the background; returns at once.

        `repoRoot` must resolve inside the server's workspace root (symlinks resolved),
        else `path.outside_workspace`; `/` and the home directory are refused. Globs are
        gitignore-style and kept with the repository: a later call without filters reuses
        them (pass `includeGlobs: []` to drop kept ones). Returns the progress snapshot of the
        run (`status`, `phase`, `counters`). Calling it again for the same repository starts
        an incremental run.

        Next: poll repocontext_index_status until `status` is `completed`, then use
        repocontext_outline / repocontext_related / repocontext_scan.
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
    def repocontext_index_status(repoId: RepoId) -> Annotated[CallToolResult, IndexStatusResult]:
        """Report the last or current index run of a repository.

        `status`: `none` (never indexed), `running`, `completed` or `failed` (with
        `error{code, message}`; `index.interrupted` when the indexing process died).
        `phase`: `walking`, `parsing`, `applying`. `counters`: filesSeen, filesUnchanged,
        filesRead, filesAdded, filesUpdated, filesTouched (same bytes, new stat),
        filesRemoved, filesSkipped, symbols, projectionWrites, projectionDeletes, chunks.
        `issues` lists up to 50 skipped paths with the reason (vanished, unreadable,
        symlink_outside...). Unknown repoId: `repo.not_found`.
        """
        return sent(IndexStatusResult.of(workspace.index.status(repoId)))

    return ToolSpec("repocontext_index_status", repocontext_index_status, "Index status", READ_ONLY)


def _outline(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_outline(
        repoId: RepoId,
        path: RepoPath,
        maxSymbols: Annotated[
            int, Field(ge=1, le=MAX_OUTLINE_SYMBOLS, description="At most this many symbols.")
        ] = DEFAULT_OUTLINE_SYMBOLS,
    ) -> Annotated[CallToolResult, OutlineResult]:
        """Return a file's outline from the index, without reading the file.

        `symbols[{kind, name, fullyQualifiedName, signature, startLine, endLine, children?}]`
        (1-based inclusive lines), `language` (null for unknown languages, which have no
        symbols) and `tokenCount` (exact o200k tokens of the whole file). `syntaxErrors`: the
        parser met a syntax error (or a construct its grammar misreads), so the outline may miss
        definitions after it; read the file itself where it matters. `exists` is false when the
        path is not indexed (check the spelling with repocontext_scan scope=files). A file with
        more than `maxSymbols` symbols (generated code) returns the first ones depth-first,
        with `truncated` true; `symbolCount` is its total.
        """
        view = workspace.index.outline(repoId, path, max_symbols=maxSymbols)
        return sent(OutlineResult.of(view))

    return ToolSpec("repocontext_outline", repocontext_outline, "File outline", READ_ONLY)


def _related(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_related(
        repoId: RepoId, path: RepoPath
    ) -> Annotated[CallToolResult, RelatedResult]:
        """Return what a file imports and references, who depends on it, which tests cover it.

        Each of `imports`, `references`, `dependents`, `coveringTests` is a list of
        `{path, reason, names?}`; `reason` says why the link was made (e.g.
        `python import pkg.util`, `naming test_util.py`, `test imports src/util.py`).
        Imports of packages outside the repository are not listed.

        Next: repocontext_outline on a related file, or repocontext_changed to see what a
        change impacts.
        """
        return sent(RelatedResult.of(workspace.index.related(repoId, path)))

    return ToolSpec("repocontext_related", repocontext_related, "Related files", READ_ONLY)


def _changed(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_changed(
        repoId: RepoId,
        path: Annotated[str | None, Field(description="Limit to this file or directory.")] = None,
    ) -> Annotated[CallToolResult, ChangedResult]:
        """Compare the working tree with the index: what was added, updated, removed.

        Stat first, then content digest, so untouched files are not read. `impacted` lists
        dependents and covering tests of the changes with the reason. `path` narrows the
        check to a file or directory inside the repository (outside:
        `path.outside_workspace`). Nothing is written; re-run repocontext_bootstrap (or wait
        for the live reconcile) to bring the index up to date.
        """
        return sent(ChangedResult.of(workspace.index.changed(repoId, path)))

    return ToolSpec("repocontext_changed", repocontext_changed, "Drift since indexing", READ_ONLY)
