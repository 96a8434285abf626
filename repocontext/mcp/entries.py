"""Entry tools: repocontext_recall and repocontext_scan."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from repocontext.arguments import MAX_PATH_CHARS, quoted
from repocontext.entries import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, SCOPES, recall, scan
from repocontext.errors import InvalidInputError
from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.mcp._params import Id, OptionalTopic, RecordKey, RepoId, Text
from repocontext.wire import EntryResult, ScanResult
from repocontext.workspace import Workspace

__all__ = ["entry_tools"]


def entry_tools(workspace: Workspace) -> list[ToolSpec]:
    """Return the recall and scan tools bound to ``workspace``."""
    store = workspace.store

    @map_errors
    def repocontext_recall(
        key: RecordKey,
    ) -> EntryResult:
        """Return the entry stored under one key.

        Keys: `repo/{repoId}`, `repo/{repoId}/file/{path}`, `repo/{repoId}/pkg/{dir}`,
        `repo/{repoId}/symbol/{fqName}` (`/` in a name written `%2F`),
        `repo/{repoId}/mem/{topic}/{id}`. `exists` is false for absent, deleted or expired
        keys. A memory entry has `links` and `stale`/`staleLinks` (`changed` or `missing`
        targets). File entries count their symbols: use repocontext_outline for those.
        """
        return EntryResult.of(recall(store, key))

    @map_errors
    def repocontext_scan(
        repoId: RepoId,
        scope: Annotated[Id, Field(description="files, packages, symbols, memory, memoryTopic")],
        topic: OptionalTopic = None,
        pathPrefix: Annotated[
            str | None,
            Field(
                max_length=MAX_PATH_CHARS,
                description="Path (files, packages) or name (symbols) prefix.",
            ),
        ] = None,
        pageSize: Annotated[int, Field(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
        continuationToken: Text | None = None,
    ) -> ScanResult:
        """List the entries of a repository in key order, one page at a time.

        Pass back `continuationToken` for the next page; it is absent on the last page.
        Deleted and expired entries are skipped. Unknown scope: `input.invalid`.
        """
        if scope not in SCOPES:
            raise InvalidInputError(
                f"unknown scope {quoted(scope)}",
                hint="Use files, packages, symbols, memory or memoryTopic.",
            )
        page = scan(
            store,
            repoId,
            scope,  # type: ignore[arg-type]  # checked against the Literal just above
            topic=topic,
            path_prefix=pathPrefix,
            page_size=pageSize,
            token=continuationToken,
        )
        return ScanResult.of(page)

    return [
        ToolSpec("repocontext_recall", repocontext_recall, "Recall one entry", READ_ONLY),
        ToolSpec("repocontext_scan", repocontext_scan, "Scan entries", READ_ONLY),
    ]
