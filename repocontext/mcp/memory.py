"""Memory tools: remember, update, forget, list topics, walk links."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Final

from mcp.types import ToolAnnotations
from pydantic import Field, JsonValue

from repocontext.arguments import MAX_FENCING_TOKEN, MAX_KEY_CHARS
from repocontext.auth import visible
from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.mcp._params import Id, MemoryKey, RepoId, Topic
from repocontext.memory import (
    MAX_CHARS,
    MAX_DEPTH,
    MAX_NODES,
    MAX_TAG_CHARS,
    MAX_TAGS_PER_CALL,
)
from repocontext.wire import EntryResult, ForgetResult, NeighborsResult, TopicsResult
from repocontext.workspace import Workspace

__all__ = ["memory_tools"]

MEMORY_WRITE: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)

Links = Annotated[
    dict[Id, list[Annotated[str, Field(max_length=MAX_KEY_CHARS)]]] | None,
    Field(description='{relation: [keys]}, e.g. {"anchoredTo": ["repo/r/file/src/app.py"]}.'),
]
Tags = Annotated[
    list[Annotated[str, Field(max_length=MAX_TAG_CHARS)]] | None,
    Field(max_length=MAX_TAGS_PER_CALL, description="Tags."),
]
FencingToken = Annotated[
    int | None,
    Field(ge=0, le=MAX_FENCING_TOKEN, description="Your claim's token, when the entry is claimed."),
]
Ttl = Annotated[
    float | None, Field(gt=0, description="Seconds to expiry (cut to 10 years); omit: durable.")
]


def memory_tools(workspace: Workspace) -> list[ToolSpec]:
    """Return the memory tools bound to ``workspace``."""
    memory = workspace

    @map_errors
    def repocontext_remember(
        repoId: RepoId,
        topic: Annotated[Topic, Field(description="decisions, gotchas, conventions, todo, ...")],
        id: Annotated[Id | None, Field(description="Entry id; omit for a new one.")] = None,
        kind: Annotated[Id | None, Field(description="note (default), decision, memory")] = None,
        title: Annotated[str | None, Field(max_length=MAX_CHARS["title"])] = None,
        body: Annotated[str | None, Field(max_length=MAX_CHARS["body"])] = None,
        author: Annotated[str | None, Field(max_length=MAX_CHARS["author"])] = None,
        provenance: Annotated[
            str | None, Field(max_length=MAX_CHARS["provenance"], description="Its source.")
        ] = None,
        tags: Tags = None,
        addLinks: Links = None,
        ttlSeconds: Ttl = None,
        fencingToken: FencingToken = None,
    ) -> EntryResult:
        """Store a memory entry under `repo/{repoId}/mem/{topic}/{id}`; returns its view.

        Without `id` a new entry is made (ids sort by creation); an existing id merges the
        given fields, tags and links. Links to files or symbols remember the target's
        version, so recall can tell when it drifted. Errors: `repo.not_found`,
        `input.invalid`.
        """
        return EntryResult.of(
            memory.remember(
                repoId,
                topic,
                entry_id=id,
                kind=kind,
                title=title,
                body=body,
                author=author,
                provenance=provenance,
                tags=tags,
                add_links=addLinks,
                ttl_seconds=ttlSeconds,
                fencing_token=fencingToken,
            )
        )

    @map_errors
    def repocontext_update(
        key: MemoryKey,
        fields: Annotated[
            dict[str, JsonValue] | None,
            Field(description="kind, status (open, done), title, body, author, provenance."),
        ] = None,
        addTags: Tags = None,
        removeTags: Tags = None,
        addLinks: Links = None,
        removeLinks: Links = None,
        ttlSeconds: Annotated[
            float | None, Field(gt=0, description="Applies only if it ends later.")
        ] = None,
        fencingToken: FencingToken = None,
    ) -> EntryResult:
        """Merge changes into an existing entry; returns its view.

        Concurrent updates merge (nothing is lost); `null` clears a field (not `kind`). A
        claimed entry needs the holder's `fencingToken` (`claim.*` errors). Errors:
        `memory.not_found`, `memory.wrong_family`, `input.invalid`.
        """
        return EntryResult.of(
            memory.update(
                key,
                fields=fields,  # type: ignore[arg-type]  # JSON values are store values
                add_tags=addTags,
                remove_tags=removeTags,
                add_links=addLinks,
                remove_links=removeLinks,
                ttl_seconds=ttlSeconds,
                fencing_token=fencingToken,
            )
        )

    @map_errors
    def repocontext_forget(
        key: MemoryKey,
        lapse: Annotated[bool, Field(description="Expire soon instead of deleting now.")] = False,
        lapseSeconds: Annotated[
            float | None, Field(gt=0, description="Default 60; cut to 10 years.")
        ] = None,
        fencingToken: FencingToken = None,
    ) -> ForgetResult:
        """Delete a memory entry, or with `lapse` let it expire in `lapseSeconds`.

        A lapse never shortens a later expiry. `forgotten` is false when no live entry has
        the key (forgetting twice is harmless). Errors: `memory.wrong_family`.
        """
        return ForgetResult.of(
            memory.forget(key, lapse=lapse, lapse_seconds=lapseSeconds, fencing_token=fencingToken)
        )

    @map_errors
    def repocontext_list_topics(
        repoId: RepoId,
    ) -> TopicsResult:
        """List the memory topics of a repository with their number of live entries."""
        return TopicsResult.of(memory.list_topics(repoId))

    @map_errors
    def repocontext_neighbors(
        key: MemoryKey,
        relation: Annotated[Id | None, Field(description="Follow only this relation.")] = None,
        depth: Annotated[int, Field(ge=1, le=MAX_DEPTH)] = 1,
        maxNodes: Annotated[int, Field(ge=1, le=MAX_NODES)] = 50,
    ) -> NeighborsResult:
        """Walk the links of a memory entry breadth first.

        Each node says how it was reached (`via` relation, `from` key), its `depth`, whether
        it `exists`, and `stale` when its file or symbol changed since it was linked.
        `truncated` is true when `maxNodes` cut the walk. Errors: `memory.not_found`,
        `memory.wrong_family`.
        """
        walk = memory.neighbors(key, relation=relation, depth=depth, max_nodes=maxNodes)
        # Keys of repositories outside the caller's grant are cut.
        seen = tuple(node for node in walk.nodes if visible(node.key))
        return NeighborsResult.of(dataclasses.replace(walk, nodes=seen))

    return [
        ToolSpec("repocontext_list_topics", repocontext_list_topics, "List topics", READ_ONLY),
        ToolSpec("repocontext_neighbors", repocontext_neighbors, "Walk links", READ_ONLY),
        ToolSpec(
            "repocontext_remember", repocontext_remember, "Remember", MEMORY_WRITE, writes=True
        ),
        ToolSpec(
            "repocontext_update", repocontext_update, "Update memory", MEMORY_WRITE, writes=True
        ),
        ToolSpec(
            "repocontext_forget", repocontext_forget, "Forget memory", MEMORY_WRITE, writes=True
        ),
    ]
