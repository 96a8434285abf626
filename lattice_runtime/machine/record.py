"""A run's record: who ran what, every transition with its time and reason, and the telemetry.

The record is what ``.lattice/runs/<run_id>.json`` holds (:mod:`.runs`); its JSON form is
camelCase (:mod:`._codec`). Run ids sort by the time the run started.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from lattice_runtime.errors import UnsafePathError
from lattice_runtime.machine.states import RunState
from lattice_runtime.machine.telemetry import RunTelemetry

__all__ = [
    "RUN_ID_PATTERN",
    "RUN_RECORD_VERSION",
    "Entropy",
    "RunRecord",
    "Transition",
    "check_run_id",
    "new_run_id",
]

RUN_RECORD_VERSION: Final = 1

RUN_ID_PATTERN: Final = re.compile(r"^run-[0-9A-Za-z][0-9A-Za-z-]{0,63}$")
"""What a run id may look like: it names a file, so no dots, slashes or other separators."""

Entropy = Callable[[int], bytes]
"""A source of ``n`` random bytes (``secrets.token_bytes``; seeded in tests)."""

_SUFFIX_BYTES: Final = 4


@dataclass(frozen=True, slots=True)
class Transition:
    """One edge the run took.

    Attributes:
        from_state: The state it left.
        to_state: The state it entered.
        reason: Why, in words (a reason code where one exists).
        at: When, ISO 8601 UTC with milliseconds.
    """

    from_state: RunState
    to_state: RunState
    reason: str
    at: str


@dataclass(frozen=True, slots=True)
class RunRecord:
    """Everything known about one run, as persisted after each transition.

    Attributes:
        run_id: ``run-`` + start time + random suffix.
        task: The compiled task's wire form (``TaskIR.to_wire()``); empty when the run has
            no task yet.
        session_id: The session the run belongs to (empty when none).
        base_commit: The commit the run's grants are bound to (empty when unknown).
        state: The state the run is in.
        transitions: Every transition, in order.
        telemetry: What the run counted.
        outcome_reason: Why the run ended (the reason of its terminal transition), or ``None``.
        started_at: When the run was created, ISO 8601 UTC.
        ended_at: When it reached a terminal state, or ``None``.
    """

    run_id: str
    task: Mapping[str, object] = field(default_factory=dict)
    session_id: str = ""
    base_commit: str = ""
    state: RunState = RunState.CREATED
    transitions: tuple[Transition, ...] = ()
    telemetry: RunTelemetry = field(default_factory=RunTelemetry)
    outcome_reason: str | None = None
    started_at: str = ""
    ended_at: str | None = None


def new_run_id(now: datetime, entropy: Entropy = secrets.token_bytes) -> str:
    """Return a fresh run id, ``run-YYYYMMDDTHHMMSSmmmZ-<8 hex>``.

    Ids made this way sort by start time (to the millisecond); the random suffix keeps two
    runs started in the same millisecond apart.

    Raises:
        ValueError: ``entropy`` returned fewer bytes than asked for.
    """
    aware = now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)
    suffix = entropy(_SUFFIX_BYTES)
    if len(suffix) < _SUFFIX_BYTES:
        raise ValueError("the entropy source returned too few bytes")
    stamp = aware.strftime("%Y%m%dT%H%M%S") + f"{aware.microsecond // 1000:03d}Z"
    return f"run-{stamp}-{suffix[:_SUFFIX_BYTES].hex()}"


def check_run_id(run_id: str) -> str:
    """Return ``run_id`` if it is safe to name a record file with.

    Raises:
        UnsafePathError: The id does not match :data:`RUN_ID_PATTERN`.
    """
    if not RUN_ID_PATTERN.fullmatch(run_id):
        raise UnsafePathError(
            f"{run_id!r} is not a run id",
            hint="Run ids look like run-20260102T030405678Z-1a2b3c4d.",
        )
    return run_id
