"""The ``map`` command: a repository's files ranked by references, within a token budget."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from repocontext.cli._index import (
    DataDir,
    JsonOption,
    StoreUrl,
    open_workspace,
    pick_repo,
    print_wire,
)
from repocontext.errors import InvalidInputError
from repocontext.search import RepoMap
from repocontext.wire import RepoMapResult

__all__ = ["register"]

MIN_BUDGET = 64
MAX_BUDGET = 16_000


def register(app: typer.Typer, settings_for: Any, fail_cleanly: Any) -> None:
    """Add the ``map`` command to ``app``."""

    @app.command("map")
    def repo_map(
        repo_id: Annotated[
            str | None,
            typer.Argument(help="Repository id; default: the only registered one."),
        ] = None,
        budget: Annotated[
            int, typer.Option("--budget", help="Most tokens the map may cost, 64..16000.")
        ] = 1024,
        query: Annotated[
            str | None, typer.Option("--query", help="Task words that steer the ranking.")
        ] = None,
        exclude: Annotated[
            list[str] | None,
            typer.Option("--exclude", help="Leave this path out (repeatable)."),
        ] = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Print the repository map: most referenced files first, each with its top symbols."""
        with fail_cleanly():
            if not MIN_BUDGET <= budget <= MAX_BUDGET:
                raise InvalidInputError(
                    f"--budget must be within {MIN_BUDGET}..{MAX_BUDGET}, got {budget}",
                    hint="1024 shows the central files of most repositories.",
                )
            with open_workspace(settings_for, data_dir, store_url) as workspace:
                result = workspace.repo_map(
                    pick_repo(workspace, repo_id), budget, exclude=exclude or (), query=query
                )
            if as_json:
                print_wire(RepoMapResult.of(result))
            else:
                typer.echo(_text(result))


def _text(result: RepoMap) -> str:
    head = (
        f"# {result.repo_id}: {len(result.entries)} of {result.files} files, "
        f"{result.token_count}/{result.budget_tokens} tokens"
        + (" (truncated: raise --budget for more)" if result.truncated else "")
    )
    return f"{head}\n{result.text}" if result.entries else head
