"""Memory commands: ``repocontext memory remember|recall|update|forget|topics|neighbors``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from repocontext.arguments import checked_range
from repocontext.cli._index import (
    DataDir,
    JsonOption,
    RepoIdOption,
    emit,
    open_workspace,
    pick_repo,
)
from repocontext.errors import InvalidInputError
from repocontext.memory.service import MAX_DEPTH, MAX_NODES

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
        as_json: JsonOption = False,
    ) -> None:
        """Store a memory entry (a new one, or merged into --id)."""
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            view = workspace.memory.remember(
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
            emit(view, as_json, _entry_text)

    @memory.command()
    def recall(
        key: Annotated[str, typer.Argument(help="repo/{repoId}/mem/{topic}/{id}")],
        data_dir: DataDir = None,
        as_json: JsonOption = False,
    ) -> None:
        """Show one memory entry, with its links and whether they are stale."""
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            emit(workspace.memory.recall(key), as_json, _entry_text)

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
        as_json: JsonOption = False,
    ) -> None:
        """Merge changes into an existing entry."""
        fields: dict[str, Any] = {
            k: v for k, v in (("title", title), ("body", body), ("kind", kind)) if v
        }
        if status is not None:
            fields["status"] = status or None  # an empty --status clears it
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            view = workspace.memory.update(
                key,
                fields=fields,
                add_tags=tag,
                remove_tags=untag,
                add_links=_links(link),
                remove_links=_links(unlink),
                ttl_seconds=ttl,
                fencing_token=fencing_token,
            )
            emit(view, as_json, _entry_text)

    @memory.command()
    def forget(
        key: Annotated[str, typer.Argument(help="repo/{repoId}/mem/{topic}/{id}")],
        lapse: Annotated[
            float | None, typer.Option(help="Expire in this many seconds instead of now.")
        ] = None,
        fencing_token: TokenOption = None,
        data_dir: DataDir = None,
        as_json: JsonOption = False,
    ) -> None:
        """Delete an entry (or let it lapse)."""
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            result = workspace.memory.forget(
                key, lapse=lapse is not None, lapse_seconds=lapse, fencing_token=fencing_token
            )
            emit(result, as_json, lambda r: f"{r['key']}: forgotten={r['forgotten']}")

    @memory.command()
    def topics(
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        as_json: JsonOption = False,
    ) -> None:
        """List memory topics and their live entry counts."""
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            found = workspace.memory.list_topics(pick_repo(workspace, repo_id))
            emit(
                {"topics": found},
                as_json,
                lambda r: (
                    "\n".join(f"{t['topic']}\t{t['count']}" for t in r["topics"]) or "(no topics)"
                ),
            )

    @memory.command()
    def neighbors(
        key: Annotated[str, typer.Argument(help="repo/{repoId}/mem/{topic}/{id}")],
        relation: Annotated[str | None, typer.Option(help="Follow only this relation.")] = None,
        depth: Annotated[int, typer.Option(help=f"1..{MAX_DEPTH}.")] = 1,
        max_nodes: Annotated[int, typer.Option("--max-nodes", help=f"1..{MAX_NODES}.")] = 50,
        data_dir: DataDir = None,
        as_json: JsonOption = False,
    ) -> None:
        """Walk an entry's links breadth first."""
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            checked_range("depth", depth, 1, MAX_DEPTH)
            checked_range("max-nodes", max_nodes, 1, MAX_NODES)
            result = workspace.memory.neighbors(
                key, relation=relation, depth=depth, max_nodes=max_nodes
            )
            emit(result, as_json, _neighbors_text)


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


def _entry_text(view: dict[str, Any]) -> str:
    if not view.get("exists"):
        return f"{view['key']}: no such entry"
    fields = view.get("fields") or {}
    lines = [f"{view['key']} [{fields.get('kind', 'note')}]"]
    if fields.get("title"):
        lines.append(f"  {fields['title']}")
    if fields.get("body"):
        lines += [f"  {line}" for line in str(fields["body"]).splitlines()]
    if view.get("tags"):
        lines.append(f"  tags: {', '.join(view['tags'])}")
    for relation, keys in (view.get("links") or {}).items():
        lines += [f"  {relation} -> {key}" for key in keys]
    for stale in view.get("staleLinks") or []:
        lines.append(f"  stale: {stale['relation']} -> {stale['key']} ({stale['reason']})")
    if view.get("remainingSeconds") is not None:
        lines.append(f"  expires in {view['remainingSeconds']:.0f} s")
    return "\n".join(lines)


def _neighbors_text(result: dict[str, Any]) -> str:
    lines = [
        f"{'  ' * node['depth']}{node['via']} -> {node['key']}"
        + ("" if node["exists"] else " (missing)")
        + (" (stale)" if node.get("stale") else "")
        for node in result["nodes"]
    ]
    if result["truncated"]:
        lines.append("(truncated)")
    return "\n".join(lines) or "(no links)"
