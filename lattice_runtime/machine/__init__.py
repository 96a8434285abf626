"""The 16-state run machine: states, the allowed edges, run records and their telemetry.

The run loop (``machine/loop.py``) drives a :class:`RunMachine`; the machine refuses every edge
the contract does not allow and persists the run's record after each transition under
``.lattice/runs/`` (``docs/lattice-machine.md``).
"""

from lattice_runtime.machine.answers import AnswerCheck, check_answer
from lattice_runtime.machine.clock import Clock, SystemClock, iso_utc
from lattice_runtime.machine.engine import RunEngine
from lattice_runtime.machine.loop import run_task
from lattice_runtime.machine.machine import RunMachine
from lattice_runtime.machine.outcome import MAX_REVISIONS, Observer, RunOptions, RunOutcome
from lattice_runtime.machine.record import (
    RUN_ID_PATTERN,
    RUN_RECORD_VERSION,
    Entropy,
    RunRecord,
    Transition,
    check_run_id,
    new_run_id,
)
from lattice_runtime.machine.runs import RUNS_DIR, list_runs, load_run, run_path, save_run
from lattice_runtime.machine.start import git_head, git_output, repository_root
from lattice_runtime.machine.states import (
    ALLOWED_TRANSITIONS,
    TERMINAL_STATES,
    RunState,
    is_allowed,
)
from lattice_runtime.machine.telemetry import (
    ProtocolDiagnostic,
    RunTelemetry,
    TurnKind,
    TurnRecord,
    VerificationRecord,
)

__all__ = [
    "ALLOWED_TRANSITIONS",
    "MAX_REVISIONS",
    "RUNS_DIR",
    "RUN_ID_PATTERN",
    "RUN_RECORD_VERSION",
    "TERMINAL_STATES",
    "AnswerCheck",
    "Clock",
    "Entropy",
    "Observer",
    "ProtocolDiagnostic",
    "RunEngine",
    "RunMachine",
    "RunOptions",
    "RunOutcome",
    "RunRecord",
    "RunState",
    "RunTelemetry",
    "SystemClock",
    "Transition",
    "TurnKind",
    "TurnRecord",
    "VerificationRecord",
    "check_answer",
    "check_run_id",
    "git_head",
    "git_output",
    "is_allowed",
    "iso_utc",
    "list_runs",
    "load_run",
    "new_run_id",
    "repository_root",
    "run_path",
    "run_task",
    "save_run",
]
