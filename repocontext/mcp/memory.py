"""Memory tools: remember, update, forget, list topics, walk links."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Final

from mcp.types import ToolAnnotations
from pydantic import Field, JsonValue

from repocontext.auth import visible
from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors
from repocontext.wire.entries import EntryResult
from repocontext.wire.memory import ForgetResult, NeighborsResult, TopicsResult
from repocontext.workspace import Workspace

__all__ = ["memory_tools"]

MEMORY_WRITE: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)

Links = Annotated[
    dict[str, list[str]] | None,
    Field(description='{relation: [keys]}, e.g. {"anchoredTo": ["repo/r/file/src/app.py"]}.'),
]
Tags = Annotated[list[str] | None, Field(description="Tags (at most 32 per call).")]
FencingToken = Annotated[
    int | None, Field(description="Your claim's token, when the entry is claimed.")
]
Ttl = Annotated[
    float | None, Field(description="Seconds to expiry (positive, cut to 10 years); omit: durable.")
]


def memory_tools(workspace: Workspace) -> list[ToolSpec]:
    """Return the memory tools bound to ``workspace``."""
    memory = workspace.memory

    @map_errors
    def repocontext_remember(
        repoId: Annotated[str, Field(description="Repository id.")],
        topic: Annotated[str, Field(description="decisions, gotchas, conventions, todo, ...")],
        id: Annotated[str | None, Field(description="Entry id; omit for a new one.")] = None,
        kind: Annotated[str | None, Field(description="note (default), decision, memory")] = None,
        title: str | None = None,
        body: Annotated[str | None, Field(description="At most 64,000 characters.")] = None,
        author: str | None = None,
        provenance: Annotated[str | None, Field(description="Where it comes from.")] = None,
        tags: Tags = None,
        addLinks: Links = None,
        ttlSeconds: Ttl = None,
        fencingToken: FencingToken = None,
    ) -> EntryResult:
        """Store a memory entry under `repo/{repoId}/mem/{topic}/{id}`; returns its view.

        Without `id` a new entry is made (ids sort by creation). With the id of an existing
        entry, the given fields, tags and links are merged into it; the id of an entry that
        expired or was forgotten gets a new entry with only what this call sends. Links to
        files or symbols remember the target's current version, so recall can tell when it
        drifted. A new entry without `ttlSeconds` gets the repository's default TTL, if set.
        Errors: `repo.not_found`, `input.invalid` (topic, kind, sizes, links, TTL).
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
        key: Annotated[str, Field(description="repo/{repoId}/mem/{topic}/{id}")],
        fields: Annotated[
            dict[str, JsonValue] | None,
            Field(description="kind, status (open, done), title, body, author, provenance."),
        ] = None,
        addTags: Tags = None,
        removeTags: Tags = None,
        addLinks: Links = None,
        removeLinks: Links = None,
        ttlSeconds: Annotated[
            float | None, Field(description="Applies only if it ends later than the current.")
        ] = None,
        fencingToken: FencingToken = None,
    ) -> EntryResult:
        """Merge changes into an existing entry; returns its view.

        Concurrent updates merge: no field, tag or link is lost; `null` clears a field (not
        `kind`). The remaining TTL is kept unless `ttlSeconds` ends later. A claimed entry
        needs the holder's `fencingToken`. Errors: `memory.not_found`, `memory.wrong_family`,
        `input.invalid`, `claim.required`, `claim.stale_token`, `claim.unissued_token`,
        `claim.released`.
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
        key: Annotated[str, Field(description="repo/{repoId}/mem/{topic}/{id}")],
        lapse: Annotated[bool, Field(description="Expire soon instead of deleting now.")] = False,
        lapseSeconds: Annotated[
            float | None, Field(description="Default 60; cut to 10 years.")
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
        repoId: Annotated[str, Field(description="Repository id.")],
    ) -> TopicsResult:
        """List the memory topics of a repository with their number of live entries."""
        return TopicsResult.of(memory.list_topics(repoId))

    @map_errors
    def repocontext_neighbors(
        key: Annotated[str, Field(description="A memory key to start from.")],
        relation: Annotated[str | None, Field(description="Follow only this relation.")] = None,
        depth: Annotated[int, Field(description="1..3 (1).")] = 1,
        maxNodes: Annotated[int, Field(description="1..100 (50).")] = 50,
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
