"""Claim commands: ``repocontext claims claim|next|renew|release|status``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from repocontext import claims as domain
from repocontext.arguments import checked_range
from repocontext.claims import MAX_WAIT_SECONDS as MAX_WAIT
from repocontext.cli._index import (
    DataDir,
    JsonOption,
    RepoIdOption,
    StoreUrl,
    open_workspace,
    pick_repo,
    show_wire,
)
from repocontext.wire import ClaimResult, ClaimStatusResult, ReleaseResult, RenewResult

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
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Claim an entry; prints its fencing token."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            if wait is not None:
                checked_range("wait", wait, 0, MAX_WAIT)
            result = workspace.claim(key, owner, lease_seconds=lease, max_wait_seconds=wait)
            show_wire(ClaimResult.of(result), as_json, _claim_text(result))

    @claims.command(name="next")
    def claim_next(
        topic: Annotated[str, typer.Argument(help="The backlog topic.")],
        owner: Annotated[str, typer.Option(help="Who claims.")],
        lease: LeaseOption = None,
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Claim the oldest open, unclaimed entry of a topic."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            result = workspace.claim_next(
                pick_repo(workspace, repo_id), topic, owner, lease_seconds=lease
            )
            show_wire(ClaimResult.of(result), as_json, _claim_text(result))

    @claims.command()
    def renew(
        key: KeyArgument,
        token: TokenArgument,
        lease: LeaseOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Extend a claim's lease (superseded: stop working on the entry)."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            renewed = workspace.renew_claim(key, token, lease_seconds=lease)
            text = _outcome_text(key, "granted", renewed.granted, renewed.reason)
            show_wire(RenewResult.of(renewed), as_json, text)

    @claims.command()
    def release(
        key: KeyArgument,
        token: TokenArgument,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Release a claim."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            released = workspace.release_claim(key, token)
            text = _outcome_text(key, "released", released.released, released.reason)
            show_wire(ReleaseResult.of(released), as_json, text)

    @claims.command()
    def status(
        key: KeyArgument,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Show who holds an entry (advisory)."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            found = workspace.claim_status(key)
            show_wire(ClaimStatusResult.of(found), as_json, _status_text(found))


def _claim_text(result: domain.ClaimResult) -> str:
    if result.grant is not None:
        return f"{result.key}: granted, token {result.grant.fencing_token}"
    return f"{result.key or '-'}: not granted ({result.reason})"


def _outcome_text(key: str, flag: str, done: bool, reason: str | None) -> str:
    return f"{key}: {flag}={done}" + ("" if done else f" ({reason})")


def _status_text(status: domain.ClaimStatus) -> str:
    if not status.exists:
        return f"{status.key}: no such entry"
    if status.claimed:
        return f"{status.key}: held by {status.owner}, token {status.fencing_token}"
    return f"{status.key}: not claimed"
