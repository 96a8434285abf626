"""The read tools: a page of a file, definitions by name, a pattern over the indexed files.

``repocontext_read`` (a :class:`~repocontext.pack.Page`), ``repocontext_symbol``
(:class:`~repocontext.pack.SymbolSources`) and ``repocontext_grep``
(a :class:`~repocontext.search.GrepPage`): all read from disk as it is now.
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field

from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.pack import MAX_NAMES, MAX_PATH_CHARS
from repocontext.search import (
    DEFAULT_CONTEXT_LINES,
    DEFAULT_GREP_PAGE,
    MAX_CONTEXT_LINES,
    MAX_GREP_PAGE,
    MAX_PATTERN_CHARS,
    GrepRequest,
)
from repocontext.wire import GrepResult, ReadResult, SymbolSourcesResult
from repocontext.workspace import Workspace

__all__ = ["reading_tools"]

MAX_READ_BUDGET: Final = 200_000
MAX_LINE: Final = 10_000_000
MAX_REPO_ID_CHARS: Final = 256
MAX_NAME_CHARS: Final = 1_000
MAX_TOKEN_CHARS: Final = 8_192

RepoId = Annotated[str, Field(max_length=MAX_REPO_ID_CHARS, description="Repository id.")]


def reading_tools(workspace: Workspace) -> list[ToolSpec]:
    """Return ``repocontext_read``, ``repocontext_symbol`` and ``repocontext_grep``."""
    return [read_tool(workspace), symbol_tool(workspace), grep_tool(workspace)]


def read_tool(workspace: Workspace) -> ToolSpec:
    """Return ``repocontext_read`` bound to ``workspace``."""

    @map_errors
    def repocontext_read(
        repoId: RepoId,
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


def symbol_tool(workspace: Workspace) -> ToolSpec:
    """Return ``repocontext_symbol`` bound to ``workspace``."""

    @map_errors
    def repocontext_symbol(
        repoId: RepoId,
        names: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]],
            Field(
                min_length=1,
                max_length=MAX_NAMES,
                description="Fully qualified names (src.pkg.mod.Class.method), dotted tails "
                "of them (Class.method) or path::name (src/pkg/mod.py::Class.method); "
                f"1..{MAX_NAMES}.",
            ),
        ],
        budgetTokens: Annotated[
            int | None,
            Field(
                ge=1,
                le=MAX_READ_BUDGET,
                description="Most tokens of source (and enclosing headers) in the answer.",
            ),
        ] = None,
    ) -> SymbolSourcesResult:
        """Get the source of symbols by name: each definition's lines as on disk now.

        Per definition: `path`, `fullyQualifiedName`, `kind`, `startLine`/`endLine`
        (decorators included), `signature`, `text` (those lines exactly), `tokenCount`,
        `blobId` of the file and `fresh`; for a member, `enclosing` holds the header lines
        of each enclosing class (or namespace, module...), outermost first. A dotted tail
        (`Flask.run`) matches every qualified name ending in it: a name serves
        up to 10 definitions and `ambiguous` says how many it matched (qualify it, or
        use path::name). A name that matches nothing, or whose file cannot be read, is listed
        in `missing` with the reason and close names as `suggestions`; the others are
        still served. With `budgetTokens` whole definitions are served in the order asked
        while they fit; `omitted` lists the rest with their sizes (raise the budget, or read
        a part with repocontext_read). Changed files are re-indexed first, as
        repocontext_read does.

        Next: repocontext_read for the lines around a definition; repocontext_outline for a
        file's names; repocontext_grep for where a name is used.
        """
        sources = workspace.symbols(repoId, names, budget_tokens=budgetTokens)
        return SymbolSourcesResult.of(sources)

    return ToolSpec("repocontext_symbol", repocontext_symbol, "Symbol source", READ_ONLY)


def grep_tool(workspace: Workspace) -> ToolSpec:
    """Return ``repocontext_grep`` bound to ``workspace``."""

    @map_errors
    def repocontext_grep(
        repoId: RepoId,
        pattern: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_PATTERN_CHARS,
                description="Text to find in a line; a regular expression with regex=true.",
            ),
        ],
        regex: Annotated[
            bool, Field(description="Read pattern as a regular expression (RE2 syntax).")
        ] = False,
        caseSensitive: Annotated[bool, Field(description="Letters must match in case.")] = True,
        glob: Annotated[
            str | None,
            Field(
                max_length=MAX_PATH_CHARS,
                description="Only files whose path matches (gitignore style: *.py, src/**).",
            ),
        ] = None,
        contextLines: Annotated[
            int,
            Field(ge=0, le=MAX_CONTEXT_LINES, description="Lines shown before and after a match."),
        ] = DEFAULT_CONTEXT_LINES,
        pageSize: Annotated[
            int, Field(ge=1, le=MAX_GREP_PAGE, description="Most matches returned.")
        ] = DEFAULT_GREP_PAGE,
        continuationToken: Annotated[
            str | None,
            Field(max_length=MAX_TOKEN_CHARS, description="From the previous page."),
        ] = None,
    ) -> GrepResult:
        """Search the repository's files for a text or a regular expression, line by line.

        Searches the files the index holds (ignored and binary files never), read from disk
        now, in path order. Each match: `path`, `line`, `column` (of its first match),
        `text` (the line, cut at 300 characters, marked …), `before` and `after`
        (context lines; a line is shown once per page, so context stops at a neighbouring
        match). Patterns match within one line; regular expressions use RE2 syntax (no
        backreferences or look-around; linear time). `truncated` means more matches exist:
        pass `continuationToken` back with the same query for the next page. An invalid
        pattern or glob is refused with `input.invalid`.

        Next: repocontext_read with startLine near a match; repocontext_symbol for the
        definition it is in.
        """
        request = GrepRequest(
            repo_id=repoId,
            pattern=pattern,
            regex=regex,
            case_sensitive=caseSensitive,
            glob=glob,
            context_lines=contextLines,
            page_size=pageSize,
            token=continuationToken,
        )
        return GrepResult.of(workspace.grep(request))

    return ToolSpec("repocontext_grep", repocontext_grep, "Grep", READ_ONLY)
