"""A run as the tools answer it: the engine's turn, outcome and record as wire models."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Final, cast

from pydantic import JsonValue

from lattice_runtime.machine import RunEngine, RunOutcome, RunRecord, RunState
from lattice_runtime.mcp.wire import (
    ApplyResult,
    BeginResult,
    StatsResult,
    StatusResult,
    TelemetryWire,
    TransitionWire,
    TurnResult,
    TurnWire,
    VerificationWire,
    map_wire,
    page_wire,
)
from lattice_runtime.workers import WorkerTurn

__all__ = [
    "PROTOCOL_RULES",
    "apply_result",
    "begin_result",
    "patch_paths",
    "stats_result",
    "status_result",
    "turn_result",
]

PROTOCOL_RULES: Final = (
    "Answer the waiting turn with exactly one call. To change code: lattice_propose{taskId, "
    'response} with response {"kind":"patch","patch":{"summary":"...","changes":[...],'
    '"verificationCommands":["python -m pytest -q"]}}; a change is {"editHandle","operation":'
    '"replace_text","replacements":[{"oldContent","newContent"}]}, {"editHandle","operation":'
    '"replace_file","replacementContent"}, {"editHandle","operation":"delete_file"} or '
    '{"operation":"create_file","path","content"}. Edit only through the editHandle of a page '
    "whose permissions allow the operation (none: read-only), use each handle once, and copy "
    "oldContent exactly from the page (it must occur there once). To see more first: "
    "lattice_request_context{taskId, requests:[{reason, pathHint?, symbol?}]}. The runtime "
    "verifies the patch in a scratch worktree; nothing is written until lattice_apply."
)
"""The protocol in one paragraph (``lattice_begin`` sends it once)."""

_DIFF_PATH: Final = re.compile(r"^diff --git a/(.+) b/(.+)$", re.MULTILINE)


def turn_result(
    engine: RunEngine, turn: WorkerTurn | None, *, known: Collection[str] = ()
) -> TurnResult:
    """The run after an answer: the next turn's pages whose handles are not in ``known``."""
    outcome = engine.outcome()
    pages = [] if turn is None else [p for p in turn.pages if p.handle not in known]
    return TurnResult(
        run_id=engine.run_id,
        task_id=engine.task.id,
        state=outcome.state.value,
        reason=_reason(outcome.record),
        done=engine.done,
        turn=_turn(turn, outcome.record),
        pages=[page_wire(page) for page in pages],
        repository_map=map_wire(turn.repo_map) if turn is not None else [],
        diff=outcome.diff,
        applied=outcome.applied,
        verification=_verification(outcome),
        refused_commands=list(outcome.refused_commands),
        next=_next(engine, outcome),
    )


def begin_result(engine: RunEngine, turn: WorkerTurn | None) -> BeginResult:
    """A new run: every page of its first turn, the task IR and the protocol rules."""
    base = turn_result(engine, turn)
    task_ir = cast("dict[str, JsonValue]", engine.task.to_wire())
    return BeginResult.model_validate(
        {**base.model_dump(), "task_ir": task_ir, "protocol": PROTOCOL_RULES}
    )


def status_result(engine: RunEngine, turn: WorkerTurn | None) -> StatusResult:
    """The run's state and history, with every page of its waiting turn."""
    base = turn_result(engine, turn)
    record = engine.outcome().record
    transitions = [
        TransitionWire.model_validate(
            {"from": t.from_state.value, "to": t.to_state.value, "reason": t.reason, "at": t.at}
        )
        for t in record.transitions
    ]
    return StatusResult(**base.model_dump(), transitions=transitions, telemetry=_telemetry(record))


def apply_result(engine: RunEngine) -> ApplyResult:
    """The run once its verified patch is written."""
    outcome = engine.outcome()
    return ApplyResult(
        run_id=engine.run_id,
        task_id=engine.task.id,
        state=outcome.state.value,
        applied=outcome.applied,
        files=patch_paths(outcome.diff),
    )


def patch_paths(diff: str) -> list[str]:
    """The paths a git diff touches, in order, each once."""
    return list(
        dict.fromkeys(path for match in _DIFF_PATH.finditer(diff) for path in match.groups())
    )


def stats_result(records: Sequence[RunRecord]) -> StatsResult:
    """Totals over ``records``."""
    states = Counter(record.state.value for record in records)
    telemetry = [_telemetry(record) for record in records]
    return StatsResult(
        runs=len(records),
        by_state=dict(sorted(states.items())),
        turns=sum(t.turns for t in telemetry),
        context_faults=sum(t.context_faults for t in telemetry),
        pages_granted=sum(t.pages_granted for t in telemetry),
        grants_issued=sum(t.grants_issued for t in telemetry),
        verifications=sum(t.verifications for t in telemetry),
        verification_seconds=round(sum(t.verification_seconds for t in telemetry), 3),
    )


def _turn(turn: WorkerTurn | None, record: RunRecord) -> TurnWire | None:
    if turn is None:
        return None
    budget = turn.task.budget
    return TurnWire(
        kind=turn.kind,
        number=turn.number,
        feedback=turn.feedback,
        faults_left=max(budget.context_faults - record.telemetry.context_faults, 0),
        turns_left=max(budget.model_turns - turn.number, 0),
    )


def _verification(outcome: RunOutcome) -> list[VerificationWire]:
    return [
        VerificationWire(
            command=result.command.display,
            exit_code=result.exit_code,
            duration_seconds=round(result.duration_seconds, 3),
            timed_out=result.timed_out,
            output_tail=result.output_tail,
        )
        for result in outcome.verification
    ]


def _telemetry(record: RunRecord) -> TelemetryWire:
    telemetry = record.telemetry
    return TelemetryWire(
        turns=len(telemetry.turns),
        tokens_per_turn=list(telemetry.tokens_per_turn),
        context_faults=telemetry.context_faults,
        pages_granted=telemetry.pages_granted,
        grants_issued=telemetry.grants_issued,
        verifications=len(telemetry.verifications),
        verification_seconds=round(sum(v.duration_seconds for v in telemetry.verifications), 3),
    )


def _reason(record: RunRecord) -> str:
    if record.outcome_reason is not None:
        return record.outcome_reason
    # A waiting run's last step is always "turn N (kind)": say what led to that turn.
    steps = [t.reason for t in record.transitions if t.to_state is not RunState.WORKER_RUNNING]
    return steps[-1] if steps else ""


def _next(engine: RunEngine, outcome: RunOutcome) -> str:
    if outcome.state is RunState.PASSED:
        if outcome.applied:
            return "Done: the verified patch is in the working tree."
        return "Review the diff, then call lattice_apply to write it to the working tree."
    if engine.done:
        return "The run ended; call lattice_begin to start a new run of the task."
    return (
        "Answer the turn: lattice_propose with a patch, or lattice_request_context for more "
        "pages (see turn.feedback)."
    )
