"""Claim commands: ``repocontext claims claim|next|renew|release|status``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from repocontext.arguments import checked_range
from repocontext.claims.service import MAX_WAIT_SECONDS as MAX_WAIT
from repocontext.cli._index import (
    DataDir,
    JsonOption,
    RepoIdOption,
    emit,
    open_workspace,
    pick_repo,
)

__all__ = ["register"]

KeyArgument = Annotated[str, typer.Argument(help="repo/{repoId}/mem/{topic}/{id}")]
LeaseOption = Annotated[float | None, typer.Option("--lease", help="Lease seconds.")]
TokenArgument = Annotated[int, typer.Argument(help="The fencing token of the claim.")]


def register(app: typer.Typer, settings_for: Any, fail_cleanly: Any) -> None:
    """Add the ``claims`` command group to ``app``."""
    claims = typer.Typer(help="Leased, fenced claims over memory entries.", no_args_is_help=True)
    app.add_typer(claims, name="claims")

    @claims.command()
    def claim(
        key: KeyArgument,
        owner: Annotated[str, typer.Option(help="Who claims.")],
        lease: LeaseOption = None,
        wait: Annotated[
            float | None, typer.Option(help=f"Wait up to this many seconds, 0..{MAX_WAIT:g}.")
        ] = None,
        data_dir: DataDir = None,
        as_json: JsonOption = False,
    ) -> None:
        """Claim an entry; prints its fencing token."""
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            if wait is not None:
                checked_range("wait", wait, 0, MAX_WAIT)
            result = workspace.claims.claim(key, owner, lease_seconds=lease, max_wait_seconds=wait)
            emit(result, as_json, _claim_text)

    @claims.command(name="next")
    def claim_next(
        topic: Annotated[str, typer.Argument(help="The backlog topic.")],
        owner: Annotated[str, typer.Option(help="Who claims.")],
        lease: LeaseOption = None,
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        as_json: JsonOption = False,
    ) -> None:
        """Claim the oldest open, unclaimed entry of a topic."""
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            result = workspace.claims.claim_next(
                pick_repo(workspace, repo_id), topic, owner, lease_seconds=lease
            )
            emit(result, as_json, _claim_text)

    @claims.command()
    def renew(
        key: KeyArgument,
        token: TokenArgument,
        lease: LeaseOption = None,
        data_dir: DataDir = None,
        as_json: JsonOption = False,
    ) -> None:
        """Extend a claim's lease (superseded: stop working on the entry)."""
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            result = workspace.claims.renew(key, token, lease_seconds=lease)
            emit(result, as_json, _outcome_text("granted"))

    @claims.command()
    def release(
        key: KeyArgument,
        token: TokenArgument,
        data_dir: DataDir = None,
        as_json: JsonOption = False,
    ) -> None:
        """Release a claim."""
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            emit(workspace.claims.release(key, token), as_json, _outcome_text("released"))

    @claims.command()
    def status(key: KeyArgument, data_dir: DataDir = None, as_json: JsonOption = False) -> None:
        """Show who holds an entry (advisory)."""
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            emit(workspace.claims.status(key), as_json, _status_text)


def _claim_text(result: dict[str, Any]) -> str:
    if result["granted"]:
        return f"{result['key']}: granted, token {result['fencingToken']}"
    return f"{result.get('key') or '-'}: not granted ({result.get('reason')})"


def _outcome_text(flag: str) -> Any:
    def text(result: dict[str, Any]) -> str:
        reason = "" if result[flag] else f" ({result.get('reason')})"
        return f"{result['key']}: {flag}={result[flag]}{reason}"

    return text


def _status_text(result: dict[str, Any]) -> str:
    if not result["exists"]:
        return f"{result['key']}: no such entry"
    if result["claimed"]:
        return f"{result['key']}: held by {result['owner']}, token {result['fencingToken']}"
    return f"{result['key']}: not claimed"
