"""Repository commands: ``repocontext repos list|remove|reset``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from repocontext.cli._index import (
    DataDir,
    JsonOption,
    StoreUrl,
    emit_wire,
    open_workspace,
    print_wire,
)
from repocontext.wire import ListReposResult, RemoveRepoResult, ResetIndexResult
from repocontext.workspace import RepoInfo

__all__ = ["register"]

RepoIdArgument = Annotated[
    str, typer.Argument(help="Repository id (see `repocontext repos list`).")
]


def register(app: typer.Typer, settings_for: Any, fail_cleanly: Any) -> None:
    """Add the ``repos`` command group to ``app``."""
    repos = typer.Typer(
        help="Registered repositories: list, remove, reset the index.", no_args_is_help=True
    )
    app.add_typer(repos, name="repos")

    @repos.command("list")
    def list_(
        data_dir: DataDir = None, store_url: StoreUrl = None, as_json: JsonOption = False
    ) -> None:
        """List the registered repositories in ascending id order."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            listed = workspace.list_repos()
            if as_json:
                print_wire(ListReposResult.of(listed))
            else:
                typer.echo(_list_text(listed))

    @repos.command()
    def remove(
        repo_id: RepoIdArgument,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Unregister a repository and delete all its records (memory too); files stay.

        An unknown id changes nothing. Refused while an index run of it is in progress.
        """
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            removal = workspace.remove_repo(repo_id)
            emit_wire(RemoveRepoResult.of(removal), as_json, _remove_text)

    @repos.command()
    def reset(
        repo_id: RepoIdArgument,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Drop a repository's code index; keep its memory and registration.

        `repocontext index PATH` indexes it again. Refused while an index run is in progress.
        """
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            reset = workspace.reset_index(repo_id)
            emit_wire(ResetIndexResult.of(reset), as_json, _reset_text)


def _list_text(repos: list[RepoInfo]) -> str:
    if not repos:
        return "no repository is registered"
    return "\n".join(
        f"{r.repo_id}  {r.root}  files {r.files}  vectors {r.vectors}  "
        f"indexed {r.indexed_at or 'never'}"
        for r in repos
    )


def _remove_text(report: dict[str, Any]) -> str:
    if not report["existed"] and not report["totalRemoved"]:
        return f"{report['repoId']}: not registered; nothing removed"
    counts = ", ".join(f"{tree} {n}" for tree, n in report["removed"].items() if n)
    return f"{report['repoId']}: removed {report['totalRemoved']} records ({counts or 'none'})"


def _reset_text(report: dict[str, Any]) -> str:
    counts = ", ".join(f"{tree} {n}" for tree, n in report["removed"].items() if n)
    return (
        f"{report['repoId']}: deleted {report['entriesDeleted']} index records "
        f"({counts or 'none'}); memory kept"
    )
