"""``lattice handoff validate`` and ``lattice continue``: the manual worker's two commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lattice_runtime.cli.app import RepoOption, app, echo_json, fail_cleanly
from lattice_runtime.cli.run import hand_off, progress_printer
from lattice_runtime.errors import LatticeError
from lattice_runtime.machine import RunEngine, check_answer
from lattice_runtime.workers.handoff import read_answer, waiting_handoff

__all__ = ["continue_run", "handoff_app", "validate"]

handoff_app = typer.Typer(help="Check the answer to a manual handoff.")
app.add_typer(handoff_app, name="handoff")

JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
TaskArgument = Annotated[str, typer.Argument(help="The task id (task-…) of the handoff.")]


@handoff_app.command("validate")
def validate(task_id: TaskArgument, repo: RepoOption = Path(), as_json: JsonOption = False) -> None:
    """Check the waiting handoff's answer without acting on it; exit 1 when it is refused."""
    with fail_cleanly():
        handoff = waiting_handoff(repo, task_id)
        raw = read_answer(handoff)
    try:
        checked = check_answer(repo, handoff.run_id, raw)
    except LatticeError as exc:
        reason = getattr(exc, "reason", exc.code)
        if as_json:
            echo_json({"valid": False, "reason": reason, "message": exc.message})
        else:
            typer.echo(f"invalid ({reason}): {exc.message}")
        raise typer.Exit(1) from None
    if as_json:
        echo_json({"valid": True, "kind": checked.kind, "summary": checked.summary})
    else:
        typer.echo(f"valid {checked.kind}: {checked.summary}")


@app.command("continue")
def continue_run(
    task_id: TaskArgument, repo: RepoOption = Path(), as_json: JsonOption = False
) -> None:
    """Take the waiting handoff's answer and carry the run on (to a verdict or a new request)."""
    with fail_cleanly():
        handoff = waiting_handoff(repo, task_id)
        raw = read_answer(handoff)
        observer = None if as_json else progress_printer()
        with RunEngine.resume(repo, handoff.run_id, observer=observer) as engine:
            engine.submit(raw)
            hand_off(engine, repo, as_json=as_json)
