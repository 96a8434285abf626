"""The read tool: ``repocontext_read``, a file or a line range as on disk (a :class:`Page`)."""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field

from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.pack import MAX_PATH_CHARS
from repocontext.wire import ReadResult
from repocontext.workspace import Workspace

__all__ = ["read_tool"]

MAX_READ_BUDGET: Final = 200_000
MAX_LINE: Final = 10_000_000
MAX_REPO_ID_CHARS: Final = 256


def read_tool(workspace: Workspace) -> ToolSpec:
    """Return ``repocontext_read`` bound to ``workspace``."""

    @map_errors
    def repocontext_read(
        repoId: Annotated[str, Field(max_length=MAX_REPO_ID_CHARS, description="Repository id.")],
        path: Annotated[
            str,
            Field(
                max_length=MAX_PATH_CHARS, description="File path relative to the repository root."
            ),
        ],
        startLine: Annotated[
            int, Field(ge=1, le=MAX_LINE, description="First line, 1-based (default 1).")
        ] = 1,
        endLine: Annotated[
            int | None,
            Field(
                ge=1,
                le=MAX_LINE,
                description="Last line, inclusive; past the end reads to the end (default).",
            ),
        ] = None,
        budgetTokens: Annotated[
            int | None,
            Field(ge=1, le=MAX_READ_BUDGET, description="Most tokens of text to return."),
        ] = None,
    ) -> ReadResult:
        """Read a file of a repository, whole or a line range, exactly as it is on disk now.

        `text` is the file's lines with their line endings, no header. `blobId` is the git
        blob id of the whole file (`git hash-object`): the fingerprint to check an edit
        against. `fresh` is true when the index holds that version (a changed file is
        re-indexed first: the only write, to the index's own record of the file). With
        `budgetTokens` the page is cut at whole lines and `continuation` is the `startLine`
        of the next page; a first line over the budget is refused with the budget it needs.
        Ignored files, paths leading out of the repository and binary or non-UTF-8 files are
        refused.
        """
        page = workspace.page(repoId, path, (startLine, endLine), budget_tokens=budgetTokens)
        return ReadResult.of(page)

    return ToolSpec("repocontext_read", repocontext_read, "Read a file", READ_ONLY)
