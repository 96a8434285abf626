"""The camelCase JSON form of a run record, and its strict reader.

This is the only module that touches the record's untyped JSON; everything else works with
:class:`~lattice_runtime.machine.record.RunRecord`. Reading fails closed: a missing or
mistyped field raises :class:`RecordFormatError` with the field's path.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TypeVar, get_args

from lattice_runtime.machine.record import RUN_RECORD_VERSION, RunRecord, Transition
from lattice_runtime.machine.states import RunState
from lattice_runtime.machine.telemetry import (
    ProtocolDiagnostic,
    RunTelemetry,
    TurnKind,
    TurnRecord,
    VerificationRecord,
)
from lattice_runtime.workers.providers.usage import ProviderUsage

_T = TypeVar("_T")
_TURN_KINDS = frozenset(get_args(TurnKind))


class RecordFormatError(ValueError):
    """The JSON is not a run record (the message names the offending field)."""


def record_to_wire(record: RunRecord) -> dict[str, object]:
    """Return the record's JSON form."""
    telemetry = record.telemetry
    return {
        "schemaVersion": RUN_RECORD_VERSION,
        "runId": record.run_id,
        "task": dict(record.task),
        "sessionId": record.session_id,
        "baseCommit": record.base_commit,
        "state": record.state.value,
        "transitions": [
            {"from": t.from_state.value, "to": t.to_state.value, "reason": t.reason, "at": t.at}
            for t in record.transitions
        ],
        "telemetry": {
            "turns": [
                {
                    "turn": t.turn,
                    "kind": t.kind,
                    "promptTokens": t.prompt_tokens,
                    "responseSha256": t.response_sha256,
                    "outcome": t.outcome,
                    "usage": None if t.usage is None else t.usage.to_wire(),
                }
                for t in telemetry.turns
            ],
            "tokensPerTurn": list(telemetry.tokens_per_turn),
            "contextFaults": telemetry.context_faults,
            "pagesGranted": telemetry.pages_granted,
            "grantsIssued": telemetry.grants_issued,
            "verifications": [
                {
                    "command": v.command,
                    "exitCode": v.exit_code,
                    "durationSeconds": v.duration_seconds,
                    "timedOut": v.timed_out,
                }
                for v in telemetry.verifications
            ],
            "diagnostics": [
                {
                    "turn": d.turn,
                    "responseSha256": d.response_sha256,
                    "shape": d.shape,
                    "normalization": d.normalization,
                    "validationError": d.validation_error,
                }
                for d in telemetry.diagnostics
            ],
        },
        "outcomeReason": record.outcome_reason,
        "startedAt": record.started_at,
        "endedAt": record.ended_at,
    }


def record_from_wire(wire: object) -> RunRecord:
    """Read a record's JSON form back (``tokensPerTurn`` is derived, so it is not read).

    Raises:
        RecordFormatError: A field is missing, mistyped or unknown to this version.
    """
    obj = _mapping(wire, "record")
    version = _int(obj, "schemaVersion")
    if version != RUN_RECORD_VERSION:
        raise RecordFormatError(f"record schemaVersion {version} is not {RUN_RECORD_VERSION}")
    return RunRecord(
        run_id=_str(obj, "runId"),
        task=MappingProxyType(dict(_mapping(obj.get("task"), "task"))),
        session_id=_str(obj, "sessionId"),
        base_commit=_str(obj, "baseCommit"),
        state=_state(obj, "state"),
        transitions=tuple(_transition(item) for item in _list(obj, "transitions")),
        telemetry=_telemetry(_mapping(obj.get("telemetry"), "telemetry")),
        outcome_reason=_optional_str(obj, "outcomeReason"),
        started_at=_str(obj, "startedAt"),
        ended_at=_optional_str(obj, "endedAt"),
    )


def _transition(item: object) -> Transition:
    obj = _mapping(item, "transitions[]")
    return Transition(
        from_state=_state(obj, "from"),
        to_state=_state(obj, "to"),
        reason=_str(obj, "reason"),
        at=_str(obj, "at"),
    )


def _telemetry(obj: Mapping[str, object]) -> RunTelemetry:
    return RunTelemetry(
        turns=tuple(_turn(item) for item in _list(obj, "turns")),
        context_faults=_int(obj, "contextFaults"),
        pages_granted=_int(obj, "pagesGranted"),
        grants_issued=_int(obj, "grantsIssued"),
        verifications=tuple(_verification(item) for item in _list(obj, "verifications")),
        diagnostics=tuple(_diagnostic(item) for item in _list(obj, "diagnostics")),
    )


def _turn(item: object) -> TurnRecord:
    obj = _mapping(item, "turns[]")
    kind = _str(obj, "kind")
    if kind not in _TURN_KINDS:
        raise RecordFormatError(f"turn kind {kind!r} is not one of {sorted(_TURN_KINDS)}")
    return TurnRecord(
        turn=_int(obj, "turn"),
        kind=kind,  # type: ignore[arg-type]  # checked against TurnKind's values just above
        prompt_tokens=_int(obj, "promptTokens"),
        response_sha256=_str(obj, "responseSha256"),
        outcome=_str(obj, "outcome"),
        usage=_usage(obj.get("usage")),
    )


def _usage(item: object) -> ProviderUsage | None:
    if item is None:
        return None
    obj = _mapping(item, "turns[].usage")
    cost = obj.get("costUsd")
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float)):
        raise RecordFormatError("costUsd must be a number or null")
    return ProviderUsage(
        input_tokens=_int(obj, "inputTokens"),
        cached_input_tokens=_int(obj, "cachedInputTokens"),
        output_tokens=_int(obj, "outputTokens"),
        reasoning_tokens=_int(obj, "reasoningTokens"),
        cost_usd=None if cost is None else float(cost),
        cache_write_tokens=_int(obj, "cacheWriteTokens"),
    )


def _verification(item: object) -> VerificationRecord:
    obj = _mapping(item, "verifications[]")
    duration = obj.get("durationSeconds")
    if isinstance(duration, bool) or not isinstance(duration, int | float):
        raise RecordFormatError("durationSeconds must be a number")
    return VerificationRecord(
        command=_str(obj, "command"),
        exit_code=_int(obj, "exitCode"),
        duration_seconds=float(duration),
        timed_out=_typed(obj, "timedOut", bool),
    )


def _diagnostic(item: object) -> ProtocolDiagnostic:
    obj = _mapping(item, "diagnostics[]")
    return ProtocolDiagnostic(
        turn=_int(obj, "turn"),
        response_sha256=_str(obj, "responseSha256"),
        shape=_str(obj, "shape"),
        normalization=_str(obj, "normalization"),
        validation_error=_optional_str(obj, "validationError"),
    )


def _mapping(value: object, name: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise RecordFormatError(f"{name} must be a JSON object")
    return value


def _list(obj: Mapping[str, object], key: str) -> list[object]:
    return _typed(obj, key, list)


def _typed(obj: Mapping[str, object], key: str, kind: type[_T]) -> _T:
    value = obj.get(key)
    if not isinstance(value, kind):
        raise RecordFormatError(f"{key} must be a {kind.__name__}")
    return value


def _str(obj: Mapping[str, object], key: str) -> str:
    return _typed(obj, key, str)


def _optional_str(obj: Mapping[str, object], key: str) -> str | None:
    return None if obj.get(key) is None else _str(obj, key)


def _int(obj: Mapping[str, object], key: str) -> int:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordFormatError(f"{key} must be an integer")
    return value


def _state(obj: Mapping[str, object], key: str) -> RunState:
    value = _str(obj, key)
    try:
        return RunState(value)
    except ValueError:
        raise RecordFormatError(f"{key} {value!r} is not a run state") from None
