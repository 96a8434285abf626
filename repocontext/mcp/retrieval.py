"""Retrieval tools: search, context (token-budgeted bundles) and stats."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.pack.bundle import ContextRequest, wire_json
from repocontext.wire.retrieval import (
    ContextResultWire,
    SearchResultWire,
    StatsResultWire,
    WireResult,
)
from repocontext.workspace import Workspace

__all__ = ["retrieval_tools", "sent"]

MAX_K: Final = 100
MAX_TOP: Final = 50
MAX_BUDGET: Final = 200_000
DETAILS: Final = ("paths", "outline", "slices", "auto")
CONTEXT: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
"""Annotations of ``repocontext_context``: with a ``session`` it records what it sent (the
session's receipts, 6 h); without one it writes nothing."""


def sent(result: WireResult) -> CallToolResult:
    """A tool result: the wire object as structured content, and as compact JSON text.

    (The SDK renders a returned model's text indented: about 1.4 times the tokens.)
    """
    wire = result.wire()
    return CallToolResult(
        content=[TextContent(type="text", text=wire_json(wire))], structured_content=wire
    )


def retrieval_tools(workspace: Workspace) -> list[ToolSpec]:
    """Return the retrieval tools bound to ``workspace``."""
    return [_search(workspace), _context(workspace), _stats(workspace)]


def _search(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_search(
        repoId: Annotated[str, Field(description="Repository id.")],
        query: Annotated[str, Field(description="What you look for, in words or identifiers.")],
        k: Annotated[int, Field(description="Hits to return, 1..100 (clamped).")] = 10,
        scope: Annotated[str, Field(description="code, memory or all (unknown: code).")] = "code",
    ) -> Annotated[CallToolResult, SearchResultWire]:
        """Find the files of a repository that match a query, each with why it matched.

        Reasons come from a fixed vocabulary in a fixed order: path-name-match,
        symbol:<fully.qualified.name>, content-match, semantic, chunk:symbol|file. `lines` is
        the line range of the best-matching symbol. `mode` and `retrievalPath` say how the
        answer was produced (keyword-only until vectors are ready); `freshness` says when the
        index last took in changes.
        """
        picked: Literal["code", "memory", "all"] = (
            "memory" if scope == "memory" else "all" if scope == "all" else "code"
        )
        k = min(max(k, 1), MAX_K)
        return sent(SearchResultWire.of(workspace.search.search(repoId, query, k, picked)))

    return ToolSpec("repocontext_search", repocontext_search, "Search code", READ_ONLY)


def _context(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_context(
        repoId: Annotated[str, Field(description="Repository id.")],
        task: Annotated[str, Field(description="The task, in words: what you are about to do.")],
        top: Annotated[int, Field(description="Files to consider, 1..50 (clamped).")] = 10,
        responseBudgetTokens: Annotated[
            int, Field(description="Most tokens this response may cost, 1..200000 (clamped).")
        ] = 8192,
        detail: Annotated[
            str, Field(description="paths, outline, slices or auto (unknown: auto).")
        ] = "auto",
        seen: Annotated[
            list[str] | None, Field(description="Receipts of units you already hold.")
        ] = None,
        known: Annotated[
            list[str] | None, Field(description="path@contentHash of whole files you hold.")
        ] = None,
        session: Annotated[
            str | None, Field(description="Session id: receipts are remembered for 6 h.")
        ] = None,
    ) -> Annotated[CallToolResult, ContextResultWire]:
        """Get the code relevant to a task, packed under an exact token budget.

        The response never costs more than `budgetTokens` (its JSON, counted as sent, in
        o200k tokens). Entries come in rank order with their reasons; `units` carry receipts:
        pass them back in `seen` (or use the same `session`) and they are not sent again but
        listed in `reused`. When nothing fits, `retryBudgetTokens` says what would. A budget
        below the smallest possible answer is refused (`context.budget_too_small`, the hint
        names the smallest budget). Writes only with `session`: its receipts, kept 6 h.
        """
        request = ContextRequest(
            repo_id=repoId,
            task=task,
            top=min(max(top, 1), MAX_TOP),
            budget=min(max(responseBudgetTokens, 1), MAX_BUDGET),
            detail=detail if detail in DETAILS else "auto",  # type: ignore[arg-type]
            seen=frozenset(seen or ()),
            known=tuple(known or ()),
            session=session or None,
        )
        return sent(ContextResultWire.of(workspace.context(request)))

    return ToolSpec("repocontext_context", repocontext_context, "Context bundle", CONTEXT)


def _stats(workspace: Workspace) -> ToolSpec:
    @map_errors
    def repocontext_stats(
        windowSeconds: Annotated[
            float | None, Field(description="Window in seconds (default 3600, at most a week).")
        ] = None,
    ) -> Annotated[CallToolResult, StatsResultWire]:
        """Token economics of the context bundles this server sent in a recent window.

        `readsReplacedTokens` is what reading the delivered files whole would have cost;
        `netSavedTokens` = readsReplacedTokens - responseTokens (negative when bundles cost
        more than the reads they replaced).
        """
        return sent(StatsResultWire.of(workspace.call_stats.window(windowSeconds)))

    return ToolSpec("repocontext_stats", repocontext_stats, "Token stats", READ_ONLY)
