"""Entry tools: repocontext_recall and repocontext_scan."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from repocontext.entries import recall, scan
from repocontext.errors import InvalidInputError
from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.wire.entries import EntryResult, ScanResult
from repocontext.workspace import Workspace

__all__ = ["entry_tools"]


def entry_tools(workspace: Workspace) -> list[ToolSpec]:
    """Return the recall and scan tools bound to ``workspace``."""
    store = workspace.store

    @map_errors
    def repocontext_recall(
        key: Annotated[str, Field(description="A stored key, e.g. repo/r/file/src/app.py.")],
    ) -> EntryResult:
        """Return the entry stored under one key.

        Keys: `repo/{repoId}`, `repo/{repoId}/file/{path}`, `repo/{repoId}/pkg/{dir}`,
        `repo/{repoId}/symbol/{fqName}` (with `/` in opaque parts written `%2F`),
        `repo/{repoId}/mem/{topic}/{id}`. The view is `{key, exists, kind, repoId, path?,
        fullyQualifiedName?, topic?, id?, fields{}, tags?, version, expiresAt?}`;
        `exists` is false for absent, deleted or expired keys. A memory entry also has
        `links{relation: [keys]}`, `remainingSeconds` (with a TTL) and `stale` with
        `staleLinks[{relation, key, reason}]` (`changed`: the file or symbol differs from
        when it was linked; `missing`: it is gone). File entries count their
        symbols instead of listing them: use repocontext_outline for those.
        """
        return EntryResult.of(recall(store, key))

    @map_errors
    def repocontext_scan(
        repoId: Annotated[str, Field(description="Repository id.")],
        scope: Annotated[str, Field(description="files, packages, symbols, memory, memoryTopic")],
        topic: str | None = None,
        pathPrefix: Annotated[
            str | None, Field(description="Path (files, packages) or name (symbols) prefix.")
        ] = None,
        pageSize: int = 100,
        continuationToken: str | None = None,
    ) -> ScanResult:
        """List the entries of a repository in key order, one page at a time.

        `pageSize` is clamped to 1..500. Pass back `continuationToken` for the next page;
        it is absent on the last page. Deleted and expired entries are skipped. Unknown
        scope: `input.invalid`.
        """
        if scope not in ("files", "packages", "symbols", "memory", "memoryTopic"):
            raise InvalidInputError(
                f"unknown scope {scope!r}",
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
