"""The run machine's 16 states and the one table of edges between them.

A run moves ``CREATED -> COMPILED -> INDEXED -> CONTEXT_GRANTED`` and then loops through worker
turns, context faults, protocol repairs and patch revisions until it reaches a terminal state
(``PASSED``, ``FAILED`` or ``CANCELLED``). :data:`ALLOWED_TRANSITIONS` is the whole graph; any
edge it does not list is illegal (``docs/lattice-machine.md``).
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType
from typing import Final

__all__ = ["ALLOWED_TRANSITIONS", "TERMINAL_STATES", "RunState", "is_allowed"]


class RunState(StrEnum):
    """Where a run is; the value is the name, as it appears in run records."""

    CREATED = "CREATED"
    COMPILED = "COMPILED"
    INDEXED = "INDEXED"
    CONTEXT_GRANTED = "CONTEXT_GRANTED"
    WORKER_RUNNING = "WORKER_RUNNING"
    RESPONSE_NORMALIZED = "RESPONSE_NORMALIZED"
    RESPONSE_VALIDATED = "RESPONSE_VALIDATED"
    CONTEXT_FAULT = "CONTEXT_FAULT"
    PATCH_LOWERED = "PATCH_LOWERED"
    PROTOCOL_REPAIR = "PROTOCOL_REPAIR"
    PATCH_REVISION = "PATCH_REVISION"
    TRANSACTION_RUNNING = "TRANSACTION_RUNNING"
    VERIFYING = "VERIFYING"
    PASSED = "PASSED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"

    @property
    def terminal(self) -> bool:
        """True for ``PASSED``, ``FAILED`` and ``CANCELLED``: nothing leaves them."""
        return self in TERMINAL_STATES


TERMINAL_STATES: Final = frozenset({RunState.PASSED, RunState.FAILED, RunState.CANCELLED})

_S = RunState
# The forward edges of the contract; every non-terminal state may also end in FAILED or
# CANCELLED, which is added below rather than repeated on every line.
_FORWARD: Final[dict[RunState, frozenset[RunState]]] = {
    _S.CREATED: frozenset({_S.COMPILED}),
    _S.COMPILED: frozenset({_S.INDEXED}),
    _S.INDEXED: frozenset({_S.CONTEXT_GRANTED}),
    _S.CONTEXT_GRANTED: frozenset({_S.WORKER_RUNNING, _S.PATCH_LOWERED}),
    _S.WORKER_RUNNING: frozenset({_S.RESPONSE_NORMALIZED, _S.PROTOCOL_REPAIR}),
    _S.RESPONSE_NORMALIZED: frozenset({_S.RESPONSE_VALIDATED}),
    _S.RESPONSE_VALIDATED: frozenset({_S.CONTEXT_FAULT, _S.PATCH_LOWERED, _S.PATCH_REVISION}),
    _S.CONTEXT_FAULT: frozenset({_S.CONTEXT_GRANTED}),
    _S.PATCH_LOWERED: frozenset({_S.TRANSACTION_RUNNING}),
    _S.PROTOCOL_REPAIR: frozenset({_S.WORKER_RUNNING}),
    _S.PATCH_REVISION: frozenset({_S.WORKER_RUNNING}),
    _S.TRANSACTION_RUNNING: frozenset({_S.VERIFYING}),
    _S.VERIFYING: frozenset({_S.PASSED, _S.PATCH_REVISION}),
}

ALLOWED_TRANSITIONS: Final = MappingProxyType(
    {
        state: (
            frozenset()
            if state in TERMINAL_STATES
            else _FORWARD[state] | {RunState.FAILED, RunState.CANCELLED}
        )
        for state in RunState
    }
)
"""Every state -> the states it may move to (empty for the terminal states)."""


def is_allowed(source: RunState, target: RunState) -> bool:
    """Return whether the graph has an edge ``source -> target``."""
    return target in ALLOWED_TRANSITIONS[source]
