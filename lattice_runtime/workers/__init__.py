"""Workers: they propose, the runtime decides (see ``docs/lattice.md``, "Workers").

:class:`Worker` is the protocol every worker follows (:mod:`.turn`); :class:`MockWorker`
replays a fixture's script deterministically (:mod:`.mock`); :class:`CommandWorker` runs any
agent program once per turn (:mod:`.command`); :func:`guard_decision` is the
live-evaluation budget guard (:mod:`.budget`). Manual, command and provider
workers arrive with issue 25.
"""

from lattice_runtime.workers.budget import MAX_SHARE_POINTS, BudgetDecision, guard_decision
from lattice_runtime.workers.command import (
    DEFAULT_ENV_ALLOWLIST,
    CommandWorker,
    turn_request,
    worker_environment,
)
from lattice_runtime.workers.mock import PATH_PLACEHOLDER, MockWorker
from lattice_runtime.workers.turn import GrantedPage, MapEntry, TurnKind, Worker, WorkerTurn

__all__ = [
    "DEFAULT_ENV_ALLOWLIST",
    "MAX_SHARE_POINTS",
    "PATH_PLACEHOLDER",
    "BudgetDecision",
    "CommandWorker",
    "GrantedPage",
    "MapEntry",
    "MockWorker",
    "TurnKind",
    "Worker",
    "WorkerTurn",
    "guard_decision",
    "turn_request",
    "worker_environment",
]
