"""Repository commands: ``repocontext repos list|remove|reset``."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

import typer

from repocontext.cli._index import DataDir, JsonOption, emit, open_workspace, to_wire

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
    def list_(data_dir: DataDir = None, as_json: JsonOption = False) -> None:
        """List the registered repositories in ascending id order."""
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            emit({"repos": workspace.list_repos()}, as_json, _list_text)

    @repos.command()
    def remove(
        repo_id: RepoIdArgument, data_dir: DataDir = None, as_json: JsonOption = False
    ) -> None:
        """Unregister a repository and delete all its records (memory too); files stay.

        An unknown id changes nothing. Refused while an index run of it is in progress.
        """
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            removal = workspace.remove_repo(repo_id)
            if as_json:
                emit({**to_wire(removal), "total": removal.total}, True, _remove_text)
            else:
                emit({**dataclasses.asdict(removal), "total": removal.total}, False, _remove_text)

    @repos.command()
    def reset(
        repo_id: RepoIdArgument, data_dir: DataDir = None, as_json: JsonOption = False
    ) -> None:
        """Drop a repository's code index; keep its memory and registration.

        `repocontext index PATH` indexes it again. Refused while an index run is in progress.
        """
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            emit(workspace.reset_index(repo_id), as_json, _reset_text)


def _list_text(report: dict[str, Any]) -> str:
    if not report["repos"]:
        return "no repository is registered"
    return "\n".join(
        f"{r['repo_id']}  {r['root']}  files {r['files']}  vectors {r['vectors']}  "
        f"indexed {r['indexed_at'] or 'never'}"
        for r in report["repos"]
    )


def _remove_text(report: dict[str, Any]) -> str:
    if not report["existed"] and not report["total"]:
        return f"{report['repo_id']}: not registered; nothing removed"
    counts = ", ".join(f"{tree} {n}" for tree, n in report["removed"].items() if n)
    return f"{report['repo_id']}: removed {report['total']} records ({counts or 'none'})"


def _reset_text(report: dict[str, Any]) -> str:
    counts = ", ".join(f"{tree} {n}" for tree, n in report["removed"].items() if n)
    return (
        f"{report['repo_id']}: deleted {report['entries_deleted']} index records "
        f"({counts or 'none'}); memory kept"
    )
