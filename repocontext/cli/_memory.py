"""Memory commands: ``repocontext memory remember|recall|update|forget|topics|neighbors``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from repocontext.arguments import checked_range
from repocontext.cli._index import (
    DataDir,
    JsonOption,
    RepoIdOption,
    StoreUrl,
    open_workspace,
    pick_repo,
    show_wire,
)
from repocontext.errors import InvalidInputError
from repocontext.memory import MAX_DEPTH, MAX_NODES, MemoryEntry, Neighbors
from repocontext.store import Value
from repocontext.wire import EntryResult, ForgetResult, NeighborsResult, TopicsResult

__all__ = ["register"]

TagOption = Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")]
LinkOption = Annotated[
    list[str] | None,
    typer.Option("--link", help="relation=key, e.g. anchoredTo=repo/r/file/app.py (repeatable)."),
]
TtlOption = Annotated[float | None, typer.Option("--ttl", help="Seconds until it expires.")]
TokenOption = Annotated[
    int | None,
    typer.Option("--fencing-token", help="The token of the claim you hold on the entry."),
]


def register(app: typer.Typer, settings_for: Any, fail_cleanly: Any) -> None:
    """Add the ``memory`` command group to ``app``."""
    memory = typer.Typer(help="Agent memory: notes with TTL and typed links.", no_args_is_help=True)
    app.add_typer(memory, name="memory")

    @memory.command()
    def remember(
        topic: Annotated[str, typer.Argument(help="decisions, gotchas, todo, ...")],
        title: Annotated[str | None, typer.Option(help="Title.")] = None,
        body: Annotated[str | None, typer.Option(help="Body text.")] = None,
        kind: Annotated[str | None, typer.Option(help="note, decision or memory.")] = None,
        entry_id: Annotated[str | None, typer.Option("--id", help="Entry id (merge).")] = None,
        author: Annotated[str | None, typer.Option(help="Author.")] = None,
        provenance: Annotated[str | None, typer.Option(help="Where it comes from.")] = None,
        tag: TagOption = None,
        link: LinkOption = None,
        ttl: TtlOption = None,
        fencing_token: TokenOption = None,
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Store a memory entry (a new one, or merged into --id)."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            view = workspace.remember(
                pick_repo(workspace, repo_id),
                topic,
                entry_id=entry_id,
                kind=kind,
                title=title,
                body=body,
                author=author,
                provenance=provenance,
                tags=tag,
                add_links=_links(link),
                ttl_seconds=ttl,
                fencing_token=fencing_token,
            )
            show_wire(EntryResult.of(view), as_json, _entry_text(view))

    @memory.command()
    def recall(
        key: Annotated[str, typer.Argument(help="repo/{repoId}/mem/{topic}/{id}")],
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Show one memory entry, with its links and whether they are stale."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            view = workspace.recall_note(key)
            show_wire(EntryResult.of(view), as_json, _entry_text(view))

    @memory.command()
    def update(
        key: Annotated[str, typer.Argument(help="repo/{repoId}/mem/{topic}/{id}")],
        title: Annotated[str | None, typer.Option(help="New title.")] = None,
        body: Annotated[str | None, typer.Option(help="New body.")] = None,
        kind: Annotated[str | None, typer.Option(help="note, decision or memory.")] = None,
        status: Annotated[str | None, typer.Option(help="open or done ('' clears it).")] = None,
        tag: TagOption = None,
        untag: Annotated[list[str] | None, typer.Option(help="Remove a tag (repeatable).")] = None,
        link: LinkOption = None,
        unlink: Annotated[
            list[str] | None, typer.Option(help="Remove relation=key (repeatable).")
        ] = None,
        ttl: TtlOption = None,
        fencing_token: TokenOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Merge changes into an existing entry."""
        fields: dict[str, Value] = {
            k: v for k, v in (("title", title), ("body", body), ("kind", kind)) if v
        }
        if status is not None:
            fields["status"] = status or None  # an empty --status clears it
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            view = workspace.update(
                key,
                fields=fields,
                add_tags=tag,
                remove_tags=untag,
                add_links=_links(link),
                remove_links=_links(unlink),
                ttl_seconds=ttl,
                fencing_token=fencing_token,
            )
            show_wire(EntryResult.of(view), as_json, _entry_text(view))

    @memory.command()
    def forget(
        key: Annotated[str, typer.Argument(help="repo/{repoId}/mem/{topic}/{id}")],
        lapse: Annotated[
            float | None, typer.Option(help="Expire in this many seconds instead of now.")
        ] = None,
        fencing_token: TokenOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Delete an entry (or let it lapse)."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            result = workspace.forget(
                key, lapse=lapse is not None, lapse_seconds=lapse, fencing_token=fencing_token
            )
            text = f"{result.key}: forgotten={result.forgotten}"
            show_wire(ForgetResult.of(result), as_json, text)

    @memory.command()
    def topics(
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """List memory topics and their live entry counts."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            found = workspace.list_topics(pick_repo(workspace, repo_id))
            text = "\n".join(f"{t.topic}\t{t.count}" for t in found) or "(no topics)"
            show_wire(TopicsResult.of(found), as_json, text)

    @memory.command()
    def neighbors(
        key: Annotated[str, typer.Argument(help="repo/{repoId}/mem/{topic}/{id}")],
        relation: Annotated[str | None, typer.Option(help="Follow only this relation.")] = None,
        depth: Annotated[int, typer.Option(help=f"1..{MAX_DEPTH}.")] = 1,
        max_nodes: Annotated[int, typer.Option("--max-nodes", help=f"1..{MAX_NODES}.")] = 50,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Walk an entry's links breadth first."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            checked_range("depth", depth, 1, MAX_DEPTH)
            checked_range("max-nodes", max_nodes, 1, MAX_NODES)
            result = workspace.neighbors(key, relation=relation, depth=depth, max_nodes=max_nodes)
            show_wire(NeighborsResult.of(result), as_json, _neighbors_text(result))


def _links(values: list[str] | None) -> dict[str, list[str]] | None:
    if not values:
        return None
    links: dict[str, list[str]] = {}
    for value in values:
        relation, sep, key = value.partition("=")
        if not sep or not relation or not key:
            raise InvalidInputError(
                f"--link {value!r} is not relation=key", hint="Write anchoredTo=repo/r/file/a.py"
            )
        links.setdefault(relation, []).append(key)
    return links


def _entry_text(view: MemoryEntry) -> str:
    if not view.exists:
        return f"{view.key}: no such entry"
    lines = [f"{view.key} [{view.kind or 'note'}]"]
    if view.title:
        lines.append(f"  {view.title}")
    if view.body:
        lines += [f"  {line}" for line in view.body.splitlines()]
    if view.tags:
        lines.append(f"  tags: {', '.join(view.tags)}")
    for relation, keys in view.links.items():
        lines += [f"  {relation} -> {key}" for key in keys]
    for stale in view.stale_links:
        lines.append(f"  stale: {stale.relation} -> {stale.key} ({stale.reason})")
    if view.remaining_seconds is not None:
        lines.append(f"  expires in {view.remaining_seconds:.0f} s")
    return "\n".join(lines)


def _neighbors_text(walk: Neighbors) -> str:
    lines = [
        f"{'  ' * node.depth}{node.via} -> {node.key}"
        + ("" if node.exists else " (missing)")
        + (" (stale)" if node.stale else "")
        for node in walk.nodes
    ]
    if walk.truncated:
        lines.append("(truncated)")
    return "\n".join(lines) or "(no links)"
