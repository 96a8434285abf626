"""Retrieval tools: search, context (token-budgeted bundles) and stats."""

from __future__ import annotations

from typing import Annotated, Final

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.mcp._params import Id, Name, RepoId, Text
from repocontext.pack import (
    DEFAULT_BUDGET,
    DEFAULT_TOP,
    MAX_BUDGET,
    MAX_TOP,
    MAX_WINDOW_S,
    MIN_BUDGET,
    MIN_TOP,
    ContextRequest,
)
from repocontext.search import DEFAULT_K, MAX_FILTERS, MAX_K, MIN_K, SearchRequest
from repocontext.wire import (
    ContextResultWire,
    SearchResultWire,
    StatsResultWire,
)
from repocontext.workspace import Workspace

__all__ = ["retrieval_tools"]

MODE: Final = (
    "keyword, semantic or hybrid; default: hybrid when vectors are ready, else keyword. An "
    "explicit semantic or hybrid that no vectors can answer is search.vectors_unavailable."
)
MAX_SEEN: Final = 10_000
"""Receipts (or known files) one call may name."""
CONTEXT: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
"""Annotations of ``repocontext_context``: with a ``session`` it records what it sent (the
session's receipts, 6 h); without one it writes nothing."""


def retrieval_tools(workspace: Workspace) -> list[ToolSpec]:
    """Return the retrieval tools bound to ``workspace``."""
    return [_search(workspace), _context(workspace), _stats(workspace)]


def _search(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_search(
        repoId: RepoId,
        query: Annotated[Text, Field(description="What you look for, in words or identifiers.")],
        k: Annotated[int, Field(ge=MIN_K, le=MAX_K, description="Hits to return.")] = DEFAULT_K,
        scope: Annotated[Id, Field(description="code, memory or all (unknown: code).")] = "code",
        mode: Annotated[Id | None, Field(description=MODE)] = None,
        languages: Annotated[
            list[Id] | None,
            Field(max_length=MAX_FILTERS, description="Only files of these languages."),
        ] = None,
        globs: Annotated[
            list[Text] | None,
            Field(max_length=MAX_FILTERS, description="Only paths matching one (src/**)."),
        ] = None,
    ) -> SearchResultWire:
        """Find the files of a repository that match a query, each with why it matched.

        `reasons`: path-name-match, symbol:<fq name>, content-match, semantic,
        chunk:symbol|file. `lines`: the best-matching symbol's range. `mode` and
        `retrievalPath` say how it was answered (keyword-only until vectors are ready);
        `warnings` (only when there are some) say what to fix. `languages` and `globs`
        (gitignore-style) rank only the matching files: the best k of those.
        """
        request = SearchRequest.of(
            repoId, query, k, scope, mode=mode, languages=languages, globs=globs
        )
        return SearchResultWire.of(workspace.search(request))

    return ToolSpec("repocontext_search", repocontext_search, "Search code", READ_ONLY)


def _context(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_context(
        repoId: RepoId,
        task: Annotated[Text, Field(description="The task, in words: what you are about to do.")],
        top: Annotated[
            int, Field(ge=MIN_TOP, le=MAX_TOP, description="Files to consider.")
        ] = DEFAULT_TOP,
        responseBudgetTokens: Annotated[
            int,
            Field(ge=MIN_BUDGET, le=MAX_BUDGET, description="Most tokens this response may cost."),
        ] = DEFAULT_BUDGET,
        detail: Annotated[
            Id, Field(description="paths, outline, slices or auto (unknown: auto).")
        ] = "auto",
        seen: Annotated[
            list[Text] | None,
            Field(max_length=MAX_SEEN, description="Receipts of units you already hold."),
        ] = None,
        known: Annotated[
            list[Text] | None,
            Field(max_length=MAX_SEEN, description="path@contentHash of whole files you hold."),
        ] = None,
        session: Annotated[
            Name | None, Field(description="Session id: receipts are remembered for 6 h.")
        ] = None,
        mode: Annotated[Id | None, Field(description=MODE)] = None,
        jsonCode: Annotated[
            bool, Field(description="Also put each entry's code in the structured result.")
        ] = False,
    ) -> Annotated[CallToolResult, ContextResultWire]:
        """Get the code relevant to a task, packed under an exact token budget.

        The text is the code: per unit a header line `path:start-end  symbol  reason` (reason:
        whole-file, name-match, content-match, semantic, caller, callee, test, enclosing,
        context, outline) and the lines verbatim. The structured result has the metadata:
        entries in rank order with scores and reasons, `units` with ranges and receipts (the
        code itself only with `jsonCode`). The response (text plus structured JSON, counted
        as sent, in o200k tokens) never costs more than `responseBudgetTokens`; larger budgets
        draw on more ranked files than `top`. Pass receipts back in `seen` (or use the same
        `session`) and those units are not sent again but listed in `reused`. When nothing
        fits, `retryBudgetTokens` says what would. A budget below the smallest possible answer
        is refused (`context.budget_too_small`, the hint names the smallest budget).
        Writes only with `session`: its receipts, kept 6 h. Narrow a cut answer with a more
        precise task, or read a unit's neighbourhood with repocontext_read.
        """
        request = ContextRequest.of(
            repoId,
            task,
            top=top,
            budget=responseBudgetTokens,
            detail=detail,
            seen=seen,
            known=known,
            session=session,
            mode=mode,
            json_code=jsonCode,
        )
        bundle = workspace.context(request)
        return CallToolResult(
            content=[TextContent(type="text", text=bundle.text)],
            structured_content=ContextResultWire.of(bundle).wire(),
        )

    return ToolSpec("repocontext_context", repocontext_context, "Context bundle", CONTEXT)


def _stats(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_stats(
        windowSeconds: Annotated[
            float | None,
            Field(ge=1, le=MAX_WINDOW_S, description="Window in seconds (default 3600)."),
        ] = None,
    ) -> StatsResultWire:
        """Token economics of the context bundles this server sent in a recent window.

        `readsReplacedTokens` is what reading the delivered files whole would have cost;
        `netSavedTokens` = readsReplacedTokens - responseTokens (negative when bundles cost
        more than the reads they replaced).
        """
        return StatsResultWire.of(workspace.usage(windowSeconds))

    return ToolSpec("repocontext_stats", repocontext_stats, "Token stats", READ_ONLY)
