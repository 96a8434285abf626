"""Building the worker ``lattice run`` names: mock, command, anthropic, openai.

(The manual worker is not built here: a manual run waits in files, see :mod:`.handoff`.)
Provider keys are read here, at the edge, from ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from lattice_runtime.compile import compile_task
from lattice_runtime.errors import BudgetRefusedError, ConfigError, WorkerError
from lattice_runtime.workers import DEFAULT_ENV_ALLOWLIST, CommandWorker, MockWorker, Worker
from lattice_runtime.workers.providers import build_provider_worker, preflight

__all__ = ["WORKERS", "CommandOptions", "ProviderOptions", "WorkerFlags", "build_worker"]

WORKERS = ("mock", "manual", "command", "anthropic", "openai")
_KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


@dataclass(frozen=True, slots=True)
class CommandOptions:
    """The command worker's flags: the agent's command line, extra variables, turn deadline."""

    line: str | None = None
    env_names: tuple[str, ...] = ()
    turn_timeout_seconds: float = 600


@dataclass(frozen=True, slots=True)
class ProviderOptions:
    """The provider workers' flags.

    Attributes:
        model: ``--model`` (wins over the policy).
        effort: ``--effort`` (``low``, ``medium``, ``high``).
        base_url: ``--base-url`` (a proxy or a compatible server).
        max_output_tokens: ``--max-output-tokens`` per turn.
        adaptive: ``--adaptive-model``: the task's risk picks model and effort where no flag
            does.
        budget_increase: ``--budget-increase``: the share of the provider's rate-limit window
            (points, 0-100) the run could take; the budget guard checks it before the run.
    """

    model: str | None = None
    effort: str | None = None
    base_url: str | None = None
    max_output_tokens: int = 8192
    adaptive: bool = False
    budget_increase: float | None = None


@dataclass(frozen=True, slots=True)
class WorkerFlags:
    """Everything ``lattice run`` says about its worker."""

    script: Path | None = None
    command: CommandOptions = field(default_factory=CommandOptions)
    provider: ProviderOptions = field(default_factory=ProviderOptions)


def build_worker(worker: str, flags: WorkerFlags, *, repo: Path, goal: str) -> Worker:
    """The worker named on the command line.

    Raises:
        WorkerError: The worker is unknown, the mock has no script, or the command worker has
            no command.
        ConfigError: A provider worker without its API key, or with a bad model or effort.
    """
    if worker == "command":
        command = flags.command
        if not command.line:
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
    if worker in _KEY_VARIABLES:
        return _provider(worker, flags.provider, repo=repo, goal=goal)
    if worker != "mock":
        raise WorkerError(f"unknown worker {worker!r}", hint=f"Workers: {', '.join(WORKERS)}.")
    if flags.script is None:
        raise WorkerError(
            "the mock worker replays a script and none was given",
            hint="Pass --script FILE (a fixture's task.json; see fixtures/README.md).",
        )
    return MockWorker.from_task_file(flags.script)


def _provider(provider: str, options: ProviderOptions, *, repo: Path, goal: str) -> Worker:
    variable = _KEY_VARIABLES[provider]
    api_key = os.environ.get(variable, "")
    if not api_key:
        raise ConfigError(
            f"the {provider} worker needs an API key and {variable} is not set",
            hint=f"Export {variable}, or use --worker command with your own agent.",
        )
    risk = compile_task(goal, repo.resolve()).risk if options.adaptive else None
    worker = build_provider_worker(
        provider,
        model=options.model,
        api_key=api_key,
        base_url=options.base_url,
        effort=options.effort,
        risk=risk,
        max_tokens=options.max_output_tokens,
    )
    if options.budget_increase is not None:
        decision = preflight(worker, options.budget_increase)
        if not decision.allowed:
            raise BudgetRefusedError(
                f"the budget guard refused the run: {decision.reason}",
                hint="Wait for the provider's window to drain, or lower --budget-increase.",
            )
    return worker
