"""The ``repocontext_map`` tool: a repository's files ranked by references, within a budget."""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field

from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.wire import RepoMapResult
from repocontext.workspace import Workspace

__all__ = ["MAX_MAP_BUDGET", "MIN_MAP_BUDGET", "map_tool"]

MIN_MAP_BUDGET: Final = 64
MAX_MAP_BUDGET: Final = 16_000
MAX_QUERY_CHARS: Final = 4_000
MAX_EXCLUDED: Final = 5_000
MAX_PATH_CHARS: Final = 4_096


def map_tool(workspace: Workspace) -> ToolSpec:
    """Return the ``repocontext_map`` tool bound to ``workspace``."""

    @map_errors
    def repocontext_map(
        repoId: Annotated[str, Field(max_length=200, description="Repository id.")],
        budgetTokens: Annotated[
            int,
            Field(
                ge=MIN_MAP_BUDGET,
                le=MAX_MAP_BUDGET,
                description="Most tokens the rendered map may cost, 64..16000.",
            ),
        ] = 1024,
        query: Annotated[
            str | None,
            Field(
                max_length=MAX_QUERY_CHARS,
                description="Task words: files and symbols sharing them rank higher.",
            ),
        ] = None,
        exclude: Annotated[
            list[Annotated[str, Field(max_length=MAX_PATH_CHARS)]] | None,
            Field(
                max_length=MAX_EXCLUDED,
                description="Paths to leave out (files you already hold); they steer the "
                "ranking towards their neighbours.",
            ),
        ] = None,
    ) -> RepoMapResult:
        """Map a repository: its most important files, each with its most used symbols.

        Files are ranked by PageRank over import and reference links (modules many files
        depend on first), personalised by `query` and by the `exclude`d files when given;
        each entry lists up to 8 symbols (`Type.member` for members), most used first.
        `tokenCount` is the exact cost of the map rendered as one `path: sym1, sym2` line per
        entry, never above `budgetTokens`; `truncated` says ranked files were left out
        (`files` counts them all). An index still building gives a shorter map.

        Next: read a file with repocontext_outline or repocontext_context; raise
        `budgetTokens` or pass `query` to see more of what matters to your task.
        """
        return RepoMapResult.of(
            workspace.repo_map(repoId, budgetTokens, exclude=exclude or (), query=query)
        )

    return ToolSpec("repocontext_map", repocontext_map, "Repository map", READ_ONLY)
