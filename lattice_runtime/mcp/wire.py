"""What the ``lattice_*`` tools answer: camelCase wire models with published output schemas.

Every model derives from :class:`repocontext.wire.WireModel` (camelCase aliases, frozen); the
server sends each as structured content and as compact JSON text (:func:`.compact`).
"""

from __future__ import annotations

from pydantic import Field, JsonValue

from lattice_runtime.workers import GrantedPage, MapEntry
from repocontext.wire import WireModel

__all__ = [
    "ApplyResult",
    "BeginResult",
    "ContextItem",
    "PageWire",
    "StatsResult",
    "StatusResult",
    "TelemetryWire",
    "TransitionWire",
    "TurnResult",
    "TurnWire",
    "VerificationWire",
    "map_wire",
    "page_wire",
]


class ContextItem(WireModel):
    """One thing to see (an argument of ``lattice_request_context``)."""

    reason: str = Field(min_length=1, max_length=500, description="Why you need it.")
    path_hint: str | None = Field(
        default=None, max_length=500, description="A repository path, or part of one."
    )
    symbol: str | None = Field(
        default=None, max_length=200, description="A symbol name (name or Class.method)."
    )


class PageWire(WireModel):
    """A granted page: its text and the edit handle that may change it."""

    edit_handle: str
    path: str
    symbol: str | None = None
    start_line: int
    end_line: int
    permissions: list[str] = Field(description="Operations of the handle; empty: read-only.")
    content: str


class TurnWire(WireModel):
    """The turn the run waits for an answer to."""

    kind: str = Field(description="initial, context_fault, protocol_repair or patch_revision.")
    number: int
    feedback: str | None = Field(
        default=None, description="What happened to the last answer (why this turn exists)."
    )
    faults_left: int = Field(description="Context requests the run may still make.")
    turns_left: int = Field(description="Turns the run may take after this one.")


class VerificationWire(WireModel):
    """One verification command of the last transaction."""

    command: str
    exit_code: int
    duration_seconds: float
    timed_out: bool
    output_tail: str


class TurnResult(WireModel):
    """Where a task's run stands after a call, and what to do next."""

    run_id: str
    task_id: str
    state: str = Field(description="The run state (WORKER_RUNNING: a turn awaits an answer).")
    reason: str = Field(
        description="Why the run ended, or what led to the waiting turn (a reason code first)."
    )
    done: bool = Field(description="PASSED, FAILED or CANCELLED: no turn follows.")
    turn: TurnWire | None = Field(default=None, description="The turn awaiting an answer.")
    pages: list[PageWire] = Field(default_factory=list)
    repository_map: list[tuple[str, list[str]]] = Field(
        default_factory=list, description="[path, [symbols]] of files no page covers."
    )
    diff: str = Field(default="", description="The verified patch (PASSED), as git diff.")
    applied: bool = False
    verification: list[VerificationWire] = Field(default_factory=list)
    refused_commands: list[str] = Field(
        default_factory=list, description="Suggested commands off the allowlist (never run)."
    )
    next: str = Field(description="What to call next.")


class BeginResult(TurnResult):
    """A new run: the compiled task, the first pages and the protocol rules."""

    task_ir: dict[str, JsonValue] = Field(alias="taskIR")
    protocol: str = Field(description="How to answer a turn, in one paragraph.")


class ApplyResult(WireModel):
    """A verified patch written to the working tree."""

    run_id: str
    task_id: str
    state: str
    applied: bool
    files: list[str] = Field(description="The paths the patch touched.")


class TransitionWire(WireModel):
    """One transition of the run machine."""

    from_state: str = Field(alias="from")
    to_state: str = Field(alias="to")
    reason: str
    at: str


class TelemetryWire(WireModel):
    """What a run counted."""

    turns: int
    tokens_per_turn: list[int]
    context_faults: int
    pages_granted: int
    grants_issued: int
    verifications: int
    verification_seconds: float


class StatusResult(TurnResult):
    """A run's state, history and counts (and its waiting turn with all its pages)."""

    transitions: list[TransitionWire]
    telemetry: TelemetryWire


class StatsResult(WireModel):
    """Totals over every run recorded in the server's repository."""

    runs: int
    by_state: dict[str, int]
    turns: int
    context_faults: int
    pages_granted: int
    grants_issued: int
    verifications: int
    verification_seconds: float


def page_wire(page: GrantedPage) -> PageWire:
    """The wire form of a granted page."""
    return PageWire(
        edit_handle=page.handle,
        path=page.path,
        symbol=page.symbol,
        start_line=page.lines[0],
        end_line=page.lines[1],
        permissions=list(page.operations),
        content=page.content,
    )


def map_wire(entries: tuple[MapEntry, ...]) -> list[tuple[str, list[str]]]:
    """The repository map as ``[path, [symbols]]`` pairs."""
    return [(entry.path, list(entry.symbols)) for entry in entries]
