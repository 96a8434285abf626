"""``lattice benchmark``: a fixture task end to end, in a fresh git repository.

Copies a fixture's ``repo/`` into a new directory, commits it, shows the baseline failing
(the task's default verification commands), runs the task with the fixture's mock script,
and runs the commands again on the result. Ends with the line ``Status: passed`` (exit 0) or
``Status: failed`` (exit 1). ``--json`` prints the timings ``bench/lattice.py`` reads.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from lattice_runtime.cli.app import EmbedderOption, app, build_settings, echo_json, fail_cleanly
from lattice_runtime.compile import VerificationCommand, compile_task, default_commands
from lattice_runtime.errors import TaskInvalidError, WorkerError
from lattice_runtime.machine import RunOptions, RunState, run_task
from lattice_runtime.verify import CommandResult, command_env, run_command
from lattice_runtime.workers import MockWorker

__all__ = ["FIXTURES", "PhaseClock", "benchmark", "find_fixture"]

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
"""The fixtures of a source checkout (an installed wheel has none: pass a path)."""

_PHASES = {
    RunState.COMPILED: "index",  # the kernel indexes between COMPILED and INDEXED
    RunState.INDEXED: "grant",
    RunState.CONTEXT_GRANTED: "grant",
    RunState.CONTEXT_FAULT: "grant",
    RunState.WORKER_RUNNING: "worker",
    RunState.RESPONSE_NORMALIZED: "worker",
    RunState.RESPONSE_VALIDATED: "lower",
    RunState.PATCH_LOWERED: "transaction",
    RunState.TRANSACTION_RUNNING: "transaction",
    RunState.VERIFYING: "apply",
}


@dataclass(slots=True)
class PhaseClock:
    """Attributes wall time to run phases from the transition times (an observer)."""

    start: float = field(default_factory=time.monotonic)
    last: float = 0.0
    state: RunState = RunState.CREATED
    seconds: dict[str, float] = field(default_factory=dict)

    def __call__(self, state: RunState, reason: str) -> None:
        """Charge the time since the last transition to the phase of the state left."""
        now = time.monotonic()
        phase = _PHASES.get(self.state, "compile" if self.state is RunState.CREATED else "other")
        self.seconds[phase] = self.seconds.get(phase, 0.0) + now - (self.last or self.start)
        self.last, self.state = now, state
        typer.echo(f"  {state.value:<20} {reason[:150]}", err=True)


def find_fixture(name: str) -> Path:
    """The fixture directory for ``name`` (a fixture name or a path).

    Raises:
        TaskInvalidError: No fixture with ``repo/`` and ``task.json`` is there.
    """
    path = Path(name) if ("/" in name or Path(name).is_dir()) else FIXTURES / name
    if not (path / "repo").is_dir() or not (path / "task.json").is_file():
        raise TaskInvalidError(
            f"{path} is not a fixture (a directory with repo/ and task.json)",
            hint="Use reset-token-py, reset-token-js, or a path to such a directory.",
        )
    return path


@app.command("benchmark")
def benchmark(
    worker: Annotated[str, typer.Option(help="Who proposes the patch: mock.")] = "mock",
    fixture: Annotated[str, typer.Option(help="Fixture name or directory.")] = "reset-token-py",
    workdir: Annotated[
        Path | None, typer.Option(help="Where to make the repository (default: a temp dir).")
    ] = None,
    embedder: EmbedderOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print timings as JSON.")] = False,
) -> None:
    """Run a fixture task end to end in a fresh git repository; end with ``Status: ...``."""
    with fail_cleanly():
        settings = build_settings(embedder=embedder)
        source = find_fixture(fixture)
        if worker != "mock":  # a fixture's answers are its mock script
            raise WorkerError(f"benchmark runs the mock worker, not {worker!r}")
        chosen = MockWorker.from_task_file(source / "task.json")
        goal = _goal(source / "task.json")
        parent = Path(tempfile.mkdtemp(prefix="lattice-bench-")) if workdir is None else workdir
        repo = _fresh_repository(source / "repo", parent / source.name)
        commands = default_commands(compile_task(goal, repo))
        baseline = _run_all(repo, commands)
        _say(as_json, "Baseline: " + _summary(baseline))
        clock = PhaseClock()
        options = RunOptions(
            goal=goal,
            timeout_seconds=settings.command_timeout_seconds,
            embedder=settings.embedder,
        )
        outcome = run_task(repo, options, chosen, observer=clock)
        after = _run_all(repo, commands)
        _say(as_json, "After:    " + _summary(after))
    passed = outcome.passed and bool(after) and all(r.passed for r in after)
    report = {
        "fixture": source.name,
        "repository": str(repo),
        "state": outcome.state.value,
        "reason": outcome.reason,
        "baselineFailed": any(not r.passed for r in baseline),
        "baselineSeconds": sum(r.duration_seconds for r in baseline),
        "phases": {name: round(value, 4) for name, value in clock.seconds.items()},
        "verifySeconds": sum(r.duration_seconds for r in outcome.verification),
        "status": "passed" if passed else "failed",
    }
    if as_json:
        echo_json(report)
    else:
        typer.echo(f"Run: {outcome.record.run_id} -> {outcome.state.value} ({outcome.reason})")
        typer.echo(f"Status: {report['status']}")
    if workdir is None:
        shutil.rmtree(parent, ignore_errors=True)
    if not passed:
        raise typer.Exit(1)


def _goal(task_file: Path) -> str:
    import json

    data = json.loads(task_file.read_text(encoding="utf-8"))
    goal = data.get("goal") if isinstance(data, dict) else None
    if not isinstance(goal, str):
        raise TaskInvalidError(f"{task_file} has no goal", hint="See fixtures/README.md.")
    return goal


def _fresh_repository(source: Path, target: Path) -> Path:
    if target.exists():
        raise TaskInvalidError(f"{target} exists", hint="Pass an empty --workdir.")
    shutil.copytree(source, target)
    identity = ["-c", "user.name=lattice", "-c", "user.email=lattice@localhost"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "fixture"]):
        subprocess.run(["git", *identity, *args], cwd=target, check=True, capture_output=True)
    return target.resolve()


def _run_all(repo: Path, commands: tuple[VerificationCommand, ...]) -> tuple[CommandResult, ...]:
    env = command_env(repo)
    return tuple(run_command(c, repo, env=env) for c in commands)


def _summary(results: tuple[CommandResult, ...]) -> str:
    return ", ".join(
        f"{r.command.display} -> exit {r.exit_code} ({r.duration_seconds:.2f}s)" for r in results
    )


def _say(as_json: bool, text: str) -> None:
    typer.echo(text, err=as_json)
