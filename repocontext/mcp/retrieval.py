"""Retrieval tools: search, context (token-budgeted bundles) and stats."""

from __future__ import annotations

from typing import Annotated, Any, Final

from mcp.types import CallToolResult, TextContent
from pydantic import Field, JsonValue

from repocontext.mcp._gate import READ_ONLY, ToolSpec, WireModel, map_errors
from repocontext.mcp._params import Id, Name, RepoId, Text
from repocontext.pack.bundle import wire_json
from repocontext.pack.request import (
    DEFAULT_BUDGET,
    DEFAULT_TOP,
    MAX_BUDGET,
    MAX_TOP,
    MIN_BUDGET,
    MIN_TOP,
    ContextRequest,
)
from repocontext.pack.stats import MAX_WINDOW_S
from repocontext.search.request import DEFAULT_K, MAX_K, MIN_K, SearchRequest
from repocontext.search.service import SearchResult
from repocontext.workspace import Workspace

__all__ = ["retrieval_tools"]

MAX_SEEN: Final = 10_000
"""Receipts (or known files) one call may name."""


class SearchHitWire(WireModel):
    """One hit of ``repocontext_search``."""

    key: str
    path: str | None = None
    score: float
    reasons: list[str]
    entry: dict[str, JsonValue]
    lines: list[int] | None = None


class SearchResultWire(WireModel):
    """Result of ``repocontext_search``."""

    mode: str
    retrieval_path: str
    hits: list[SearchHitWire]
    freshness: dict[str, JsonValue]

    @classmethod
    def of(cls, result: SearchResult) -> SearchResultWire:
        """Build the wire form of a :class:`SearchResult`."""
        return cls(
            mode=result.mode,
            retrieval_path=result.retrieval_path,
            hits=[
                SearchHitWire(
                    key=h.key,
                    path=h.path,
                    score=h.score,
                    reasons=h.reasons,
                    entry=h.entry,
                    lines=list(h.lines) if h.lines else None,
                )
                for h in result.hits
            ],
            freshness=result.freshness,
        )


class ContextResultWire(WireModel):
    """Result of ``repocontext_context`` (see TOOLS.md); entries and reused stay JSON."""

    mode: str
    retrieval_path: str
    detail: str
    budget_tokens: int
    total_tokens: int
    response_tokens: int
    truncated: bool
    retry_budget_tokens: int | None = None
    entries: list[dict[str, JsonValue]]
    reused: list[dict[str, JsonValue]]
    reused_omitted: int | None = None
    session: str | None = None


class StatsResultWire(WireModel):
    """Result of ``repocontext_stats``."""

    calls: int
    response_tokens: int
    reads_replaced_tokens: int
    net_saved_tokens: int
    window_seconds: float


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
    ) -> SearchResultWire:
        """Find the files of a repository that match a query, each with why it matched.

        `reasons`: path-name-match, symbol:<fq name>, content-match, semantic,
        chunk:symbol|file. `lines`: the best-matching symbol's range. `mode` and
        `retrievalPath` say how it was answered (keyword-only until vectors are ready).
        """
        request = SearchRequest.of(repoId, query, k, scope)
        result = workspace.search(request)
        return SearchResultWire.of(result)

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
    ) -> Annotated[CallToolResult, ContextResultWire]:
        """Get the code relevant to a task, packed under an exact token budget.

        The response never costs more than `budgetTokens` (o200k tokens of the JSON as
        sent). Units carry receipts: pass them back in `seen` (or reuse the `session`) and
        they are listed in `reused` instead of sent again. When nothing fits,
        `retryBudgetTokens` says what would.
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
        )
        wire: dict[str, Any] = workspace.context(request).wire
        return CallToolResult(
            content=[TextContent(type="text", text=wire_json(wire))], structured_content=wire
        )

    return ToolSpec("repocontext_context", repocontext_context, "Context bundle", READ_ONLY)


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
        stats = workspace.usage(windowSeconds)
        return StatsResultWire(
            calls=stats.calls,
            response_tokens=stats.response_tokens,
            reads_replaced_tokens=stats.reads_replaced_tokens,
            net_saved_tokens=stats.net_saved_tokens,
            window_seconds=stats.window_seconds,
        )

    return ToolSpec("repocontext_stats", repocontext_stats, "Token stats", READ_ONLY)
