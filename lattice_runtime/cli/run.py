"""``lattice run``: one task, from goal to verdict."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import typer

from lattice_runtime.cli.app import (
    EmbedderOption,
    RepoOption,
    app,
    build_settings,
    echo_json,
    fail_cleanly,
)
from lattice_runtime.errors import WorkerError
from lattice_runtime.machine import Observer, RunOptions, RunOutcome, RunState, run_task
from lattice_runtime.workers import DEFAULT_ENV_ALLOWLIST, CommandWorker, MockWorker, Worker

__all__ = ["print_outcome", "progress_printer", "run"]

WorkerChoice = Literal["mock"]


def progress_printer() -> Observer:
    """An observer printing each transition to stderr with the time since the run began."""
    start = time.monotonic()

    def observe(state: RunState, reason: str) -> None:
        elapsed = time.monotonic() - start
        typer.echo(f"[{elapsed:6.2f}s] {state.value:<20} {reason[:160]}", err=True)

    return observe


def build_worker(
    worker: str,
    script: Path | None,
    *,
    command: CommandOptions | None = None,
    repo: Path = Path(),
) -> Worker:
    """The worker named on the command line.

    Raises:
        WorkerError: The worker is unknown, the mock has no script, or the command worker
            has no command.
    """
    if worker == "command":
        if command is None or not command.line:
            raise WorkerError(
                "the command worker runs an agent program and none was given",
                hint='Pass --worker-command "<program> <args>" (see docs/cli.md).',
            )
        return CommandWorker.from_command_line(
            command.line,
            cwd=repo.resolve(),
            turn_timeout_seconds=command.turn_timeout_seconds,
            env_allowlist=DEFAULT_ENV_ALLOWLIST | set(command.env_names),
        )
    if worker != "mock":
        raise WorkerError(f"unknown worker {worker!r}", hint="This version has: mock, command.")
    if script is None:
        raise WorkerError(
            "the mock worker replays a script and none was given",
            hint="Pass --script FILE (a fixture's task.json; see fixtures/README.md).",
        )
    return MockWorker.from_task_file(script)


@dataclass(frozen=True, slots=True)
class CommandOptions:
    """The command worker's flags: the agent's command line, extra variables, turn deadline."""

    line: str | None
    env_names: tuple[str, ...] = ()
    turn_timeout_seconds: float = 600


@app.command("run")
def run(
    task: Annotated[str, typer.Argument(help="The goal, in words.")],
    worker: Annotated[str, typer.Option(help="Who proposes the patch: mock, command.")] = "mock",
    script: Annotated[
        Path | None, typer.Option(help="The mock worker's script (a fixture's task.json).")
    ] = None,
    worker_command: Annotated[
        str | None, typer.Option(help="The command worker's agent program and arguments.")
    ] = None,
    worker_env: Annotated[
        list[str] | None,
        typer.Option(help="An extra variable the agent program may see (repeatable)."),
    ] = None,
    turn_timeout: Annotated[
        float, typer.Option(help="Each command-worker turn's deadline in seconds.")
    ] = 600,
    repo: RepoOption = Path(),
    no_apply: Annotated[
        bool, typer.Option("--no-apply", help="Stop after verification; print the diff.")
    ] = False,
    session: Annotated[str | None, typer.Option(help="Session id (default: current).")] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            help="Each verification command's deadline in seconds "
            "(env LATTICE_COMMAND_TIMEOUT_SECONDS; default 300)."
        ),
    ] = None,
    embedder: EmbedderOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Run TASK: grant context, take worker turns, verify in a worktree, apply if it passes."""
    with fail_cleanly():
        settings = build_settings(command_timeout_seconds=timeout, embedder=embedder)
        command = CommandOptions(worker_command, tuple(worker_env or ()), turn_timeout)
        chosen = build_worker(worker, script, command=command, repo=repo)
        options = RunOptions(
            goal=task,
            apply=not no_apply,
            session_id=session,
            timeout_seconds=settings.command_timeout_seconds,
            embedder=settings.embedder,
        )
        observer = None if as_json else progress_printer()
        outcome = run_task(repo, options, chosen, observer=observer)
    print_outcome(outcome, as_json=as_json)
    if not outcome.passed:
        raise typer.Exit(1)


def print_outcome(outcome: RunOutcome, *, as_json: bool) -> None:
    """Print a run's outcome (``--json``: the wire form)."""
    if as_json:
        echo_json(outcome.to_wire())
        return
    telemetry = outcome.record.telemetry
    typer.echo(f"Run: {outcome.record.run_id} (task {outcome.task.id}, risk {outcome.task.risk})")
    typer.echo(
        f"Turns: {len(telemetry.turns)}  pages: {telemetry.pages_granted}  "
        f"faults: {telemetry.context_faults}  tokens/turn: {list(telemetry.tokens_per_turn)}"
    )
    for result in outcome.verification:
        status = "timed out" if result.timed_out else f"exit {result.exit_code}"
        typer.echo(f"Verify: {result.command.display} -> {status} ({result.duration_seconds:.2f}s)")
    for refused in outcome.refused_commands:
        typer.echo(f"Refused command (never ran): {refused}")
    if outcome.diff and not outcome.applied:
        typer.echo(outcome.diff.rstrip("\n"))
    if outcome.applied:
        typer.echo("Applied to the working tree.")
    typer.echo(f"Reason: {outcome.reason}")
    typer.echo(f"Status: {outcome.state.value.lower()}")
