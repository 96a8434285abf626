"""``lattice session new|show|reset|boundary|resume``: the session runs are recorded in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from lattice_runtime.cli.app import RepoOption, app, build_settings, echo_json, fail_cleanly
from lattice_runtime.errors import ConfigError
from lattice_runtime.machine import list_runs
from lattice_runtime.session import (
    BOUNDARY_KINDS,
    Journal,
    Session,
    SessionStore,
    check_enabled,
    continuity_projection,
)

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


@session_app.command("boundary")
def boundary(
    kind: Annotated[str, typer.Argument(help="compaction or resume.")],
    session_id: Annotated[str | None, typer.Argument(help="Session id (default: current).")] = None,
    repo: RepoOption = Path(),
) -> None:
    """Record a compaction or resume boundary in the session journal (LATTICE_CONTROL)."""
    with fail_cleanly():
        mode = build_settings().control
        check_enabled(mode)
        if kind not in BOUNDARY_KINDS or kind == "delegation":
            raise ConfigError(
                f"unknown boundary {kind[:40]!r}",
                hint="Use compaction or resume (a delegation goes through lattice_boundary).",
            )
        target = session_id or SessionStore(repo).current(create=False).id
        entry = Journal(repo, mode=mode).boundary(
            target, "compaction" if kind == "compaction" else "resume"
        )
    typer.echo(f"Recorded {kind} boundary #{entry.sequence} in {entry.session_id}")


@session_app.command("record")
def record(
    kind: Annotated[str, typer.Argument(help="human_message, plan_approved or todo_list.")],
    session_id: Annotated[str | None, typer.Argument(help="Session id (default: current).")] = None,
    repo: RepoOption = Path(),
    message_id: Annotated[str | None, typer.Option("--message-id", help="Message id.")] = None,
    plan_id: Annotated[str | None, typer.Option("--plan-id", help="Plan id.")] = None,
    text: Annotated[str | None, typer.Option("--text", help="Message or plan text.")] = None,
    items: Annotated[list[str] | None, typer.Option("--item", help="A to-do item.")] = None,
) -> None:
    """Record a human message, an approved plan or the to-do list in the session journal."""
    with fail_cleanly():
        mode = build_settings().control
        journal = Journal(repo, mode=mode)
        target = session_id or SessionStore(repo).current(create=False).id
        if kind == "todo_list":
            entry = journal.set_todos(target, tuple(items or ()))
        elif kind in ("human_message", "plan_approved") and text is not None:
            label = message_id if kind == "human_message" else plan_id
            if not label:
                raise ConfigError(f"{kind} needs an id", hint="Pass --message-id or --plan-id.")
            recorded = journal.record_message if kind == "human_message" else journal.approve_plan
            entry = recorded(target, label, text)
        else:
            raise ConfigError(
                f"cannot record {kind[:40]!r} with these options",
                hint="Use human_message --message-id --text, plan_approved --plan-id --text, "
                "or todo_list --item ... (delegated results go through lattice_record).",
            )
    typer.echo(f"Recorded {kind} #{entry.sequence} in {entry.session_id}")


@session_app.command("resume")
def resume(
    session_id: Annotated[str | None, typer.Argument(help="Session id (default: current).")] = None,
    repo: RepoOption = Path(),
    as_json: Annotated[bool, typer.Option("--json", help="Print the projection's JSON.")] = False,
) -> None:
    """Print the continuity projection frozen at the session's latest boundary."""
    with fail_cleanly():
        mode = build_settings().control
        check_enabled(mode)
        target = session_id or SessionStore(repo).current(create=False).id
        projection = continuity_projection(Journal(repo, mode=mode), target, mode=mode)
    if as_json:
        typer.echo(projection.canonical().decode())
        return
    wire = projection.to_wire()
    typer.echo(f"Session: {projection.session_id}")
    if projection.boundary_kind is None:
        typer.echo("No boundary yet: nothing to add.")
        return
    typer.echo(f"Boundary: {projection.boundary_kind} (#{projection.boundary_sequence})")
    sections = wire["sections"]
    assert isinstance(sections, dict)  # to_wire builds a map
    for name, body in sections.items():
        note = "  (omitted: over the cap)" if name in projection.omitted else ""
        typer.echo(f"{name}:{note} {json.dumps(body, ensure_ascii=False)[:2000]}")


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
