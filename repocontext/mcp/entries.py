"""Entry tools: repocontext_recall and repocontext_scan."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, JsonValue

from repocontext.entries import recall, scan
from repocontext.errors import InvalidInputError
from repocontext.mcp._gate import READ_ONLY, ToolSpec, WireModel, map_errors
from repocontext.workspace import Workspace

__all__ = ["entry_tools"]


class EntryResult(WireModel):
    """One entry view (``repocontext_recall``, and each entry of ``repocontext_scan``)."""

    key: str
    exists: bool
    kind: str
    repo_id: str
    path: str | None = None
    fully_qualified_name: str | None = None
    topic: str | None = None
    id: str | None = None
    fields: dict[str, JsonValue] = Field(default_factory=dict)
    tags: list[str] | None = None
    links: dict[str, list[str]] | None = None
    version: int | None = None
    expires_at: float | None = None
    remaining_seconds: float | None = None
    stale: bool | None = None
    stale_links: list[dict[str, str]] | None = None
    claim: dict[str, JsonValue] | None = None


class ScanResult(WireModel):
    """Result of ``repocontext_scan``."""

    entries: list[EntryResult]
    continuation_token: str | None = None


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
        return EntryResult.model_validate(recall(store, key))

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
        entries = [EntryResult.model_validate(entry) for entry in page.entries]
        return ScanResult(entries=entries, continuation_token=page.continuation_token)

    return [
        ToolSpec("repocontext_recall", repocontext_recall, "Recall one entry", READ_ONLY),
        ToolSpec("repocontext_scan", repocontext_scan, "Scan entries", READ_ONLY),
    ]
