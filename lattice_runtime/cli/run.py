"""``lattice run``: one task, from goal to verdict."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from lattice_runtime.cli.app import (
    EmbedderOption,
    RepoOption,
    app,
    build_settings,
    echo_json,
    fail_cleanly,
)
from lattice_runtime.cli.workers import (
    WORKERS,
    CommandOptions,
    ProviderOptions,
    WorkerFlags,
    build_worker,
)
from lattice_runtime.machine import (
    Observer,
    RunEngine,
    RunOptions,
    RunOutcome,
    RunState,
    run_task,
)
from lattice_runtime.session import Journal
from lattice_runtime.workers.handoff import write_request

__all__ = ["print_outcome", "progress_printer", "run"]


def progress_printer() -> Observer:
    """An observer printing each transition to stderr with the time since the run began."""
    start = time.monotonic()

    def observe(state: RunState, reason: str) -> None:
        elapsed = time.monotonic() - start
        typer.echo(f"[{elapsed:6.2f}s] {state.value:<20} {reason[:160]}", err=True)

    return observe


@app.command("run")
def run(
    task: Annotated[str, typer.Argument(help="The goal, in words.")],
    worker: Annotated[
        str, typer.Option(help=f"Who proposes the patch: {', '.join(WORKERS)}.")
    ] = "mock",
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
    model: Annotated[str | None, typer.Option(help="Provider workers: the model.")] = None,
    effort: Annotated[
        str | None, typer.Option(help="Provider workers: effort low|medium|high.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Provider workers: the API base URL.")
    ] = None,
    max_output_tokens: Annotated[
        int, typer.Option(help="Provider workers: most output tokens per turn.")
    ] = 8192,
    adaptive_model: Annotated[
        bool,
        typer.Option(
            "--adaptive-model", help="Provider workers: the task's risk picks model and effort."
        ),
    ] = False,
    budget_increase: Annotated[
        float | None,
        typer.Option(
            help="Provider workers: the window share (points) the run may take; the budget "
            "guard checks the provider's rate-limit window first."
        ),
    ] = None,
    cache: Annotated[
        bool, typer.Option("--cache", help="Reuse and keep verified patches (opt-in).")
    ] = False,
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
        options = RunOptions(
            goal=task,
            apply=not no_apply,
            session_id=session,
            timeout_seconds=settings.command_timeout_seconds,
            embedder=settings.embedder,
            use_cache=cache,
        )
        observer = None if as_json else progress_printer()
        if worker == "manual":  # the run waits in files; `lattice continue` takes it on
            with RunEngine.begin(repo, options, worker="manual", observer=observer) as engine:
                hand_off(engine, repo, as_json=as_json)
            return
        flags = WorkerFlags(
            script=script,
            command=CommandOptions(worker_command, tuple(worker_env or ()), turn_timeout),
            provider=ProviderOptions(
                model, effort, base_url, max_output_tokens, adaptive_model, budget_increase
            ),
        )
        chosen = build_worker(worker, flags, repo=repo, goal=task)
        journal = None if settings.control == "off" else Journal(repo, mode=settings.control)
        outcome = run_task(repo, options, chosen, observer=observer, journal=journal)
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


def hand_off(engine: RunEngine, repo: Path, *, as_json: bool) -> None:
    """Write the engine's next turn as a handoff request, or print the run's outcome.

    Raises:
        typer.Exit: With code 1 when the run ended without passing.
    """
    turn = engine.next_turn()
    if turn is None:
        outcome = engine.outcome()
        print_outcome(outcome, as_json=as_json)
        if not outcome.passed:
            raise typer.Exit(1)
        return
    handoff = write_request(repo, engine.run_id, turn)
    if as_json:
        echo_json(
            {
                "runId": engine.run_id,
                "taskId": handoff.task_id,
                "state": engine.state.value,
                "status": "waiting",
                "request": str(handoff.request),
                "respondIn": str(handoff.response),
            }
        )
        return
    typer.echo(f"Run: {engine.run_id} (task {handoff.task_id}) waits for turn {turn.number}.")
    typer.echo(f"Request: {handoff.request}")
    typer.echo(f"Answer in: {handoff.response}")
    typer.echo(
        f"Then: lattice handoff validate {handoff.task_id}; lattice continue {handoff.task_id}"
    )
    typer.echo("Status: waiting")
