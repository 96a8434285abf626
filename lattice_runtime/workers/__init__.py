"""Workers: they propose, the runtime decides (see ``docs/lattice.md``, "Workers").

:class:`Worker` is the protocol every worker follows (:mod:`.turn`); :class:`MockWorker`
replays a fixture's script deterministically (:mod:`.mock`). Manual, command and provider
workers arrive with issue 25.
"""

from lattice_runtime.workers.mock import PATH_PLACEHOLDER, MockWorker
from lattice_runtime.workers.turn import GrantedPage, TurnKind, Worker, WorkerTurn

__all__ = ["PATH_PLACEHOLDER", "GrantedPage", "MockWorker", "TurnKind", "Worker", "WorkerTurn"]
