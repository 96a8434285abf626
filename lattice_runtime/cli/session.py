"""``lattice session new|show|reset``: the session runs are recorded in."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lattice_runtime.cli.app import RepoOption, app, echo_json, fail_cleanly
from lattice_runtime.machine import list_runs
from lattice_runtime.session import Session, SessionStore

__all__ = ["session_app"]

session_app = typer.Typer(help="Create, show or reset the session runs are recorded in.")
app.add_typer(session_app, name="session")

JsonOption = Annotated[bool, typer.Option("--json", help="Print the session as JSON.")]


@session_app.command("new")
def new(repo: RepoOption = Path(), as_json: JsonOption = False) -> None:
    """Start a session and make it the current one."""
    with fail_cleanly():
        session = SessionStore(repo).new()
    _print(session, repo, as_json)


@session_app.command("show")
def show(
    session_id: Annotated[str | None, typer.Argument(help="Session id (default: current).")] = None,
    repo: RepoOption = Path(),
    as_json: JsonOption = False,
) -> None:
    """Show a session: its epoch, risk floor and runs with their states."""
    with fail_cleanly():
        store = SessionStore(repo)
        session = store.get(session_id) if session_id else store.current(create=False)
    _print(session, repo, as_json)


@session_app.command("reset")
def reset(
    session_id: Annotated[str | None, typer.Argument(help="Session id (default: current).")] = None,
    repo: RepoOption = Path(),
    as_json: JsonOption = False,
) -> None:
    """Start a new grant epoch: no handle issued before it lowers any more."""
    with fail_cleanly():
        store = SessionStore(repo)
        target = session_id or store.current(create=False).id
        session = store.reset(target)
    _print(session, repo, as_json)


def _print(session: Session, repo: Path, as_json: bool) -> None:
    states = {record.run_id: record for record in list_runs(repo.resolve())}
    if as_json:
        wire = session.to_wire()
        wire["runStates"] = {run: states[run].state.value for run in session.runs if run in states}
        echo_json(wire)
        return
    typer.echo(f"Session: {session.id} (created {session.created_at})")
    typer.echo(
        f"Epoch: {session.epoch}  risk floor: {session.risk_floor}  resets: {session.resets}"
    )
    for run in session.runs:
        record = states.get(run)
        state = record.state.value if record else "missing"
        reason = (record.outcome_reason or "") if record else ""
        typer.echo(f"  {run}  {state:<12} {reason[:100]}")
