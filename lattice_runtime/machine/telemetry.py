"""What a run measured: worker turns, context faults, pages, grants and verification results.

:class:`RunTelemetry` is a frozen value; each ``with_*`` method returns a new one with one more
fact in it, so a run record is always a consistent snapshot. The run machine holds the current
value and persists it with the record (:mod:`.record`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lattice_runtime.protocol import TurnKind
from lattice_runtime.workers.providers.usage import ProviderUsage

__all__ = [
    "ProtocolDiagnostic",
    "RunTelemetry",
    "TurnKind",
    "TurnRecord",
    "VerificationRecord",
]


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One worker turn.

    Attributes:
        turn: 1-based turn number within the run.
        kind: Why the turn happened (:data:`TurnKind`).
        prompt_tokens: Exact token count of the prompt the worker was given.
        response_sha256: SHA-256 (hex) of the raw response text.
        outcome: What the response became, one word (``context_request``, ``patch``,
            ``protocol_error``, ...).
        usage: What the provider reported for the turn (provider workers only).
    """

    turn: int
    kind: TurnKind
    prompt_tokens: int
    response_sha256: str
    outcome: str
    usage: ProviderUsage | None = None


@dataclass(frozen=True, slots=True)
class VerificationRecord:
    """One verification command run in the transaction's worktree.

    Attributes:
        command: The command as one line (display only; it ran without a shell).
        exit_code: Its exit status (124 when it hit the deadline).
        duration_seconds: Wall time it took.
        timed_out: Whether the deadline ended it.
    """

    command: str
    exit_code: int
    duration_seconds: float
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        """True when the command exited 0 in time."""
        return self.exit_code == 0 and not self.timed_out


@dataclass(frozen=True, slots=True)
class ProtocolDiagnostic:
    """How one raw worker response was read.

    Attributes:
        turn: The turn the response answered.
        response_sha256: SHA-256 (hex) of the raw response text.
        shape: The shape detected (``context_request``, ``patch``, ``seed_v1``, ``unknown``).
        normalization: The normalization result (``ok``, or what was normalized or refused).
        validation_error: The protocol error's reason, or ``None`` when the response was valid.
    """

    turn: int
    response_sha256: str
    shape: str
    normalization: str
    validation_error: str | None = None


@dataclass(frozen=True, slots=True)
class RunTelemetry:
    """Everything a run counted, in the order it happened.

    Attributes:
        turns: The worker turns.
        context_faults: Context requests served.
        pages_granted: Pages granted over the whole run.
        grants_issued: Edit handles issued over the whole run.
        verifications: Verification commands run, over every transaction.
        diagnostics: Protocol diagnostics, one per response read.
    """

    turns: tuple[TurnRecord, ...] = ()
    context_faults: int = 0
    pages_granted: int = 0
    grants_issued: int = 0
    verifications: tuple[VerificationRecord, ...] = ()
    diagnostics: tuple[ProtocolDiagnostic, ...] = ()

    @property
    def tokens_per_turn(self) -> tuple[int, ...]:
        """The prompt tokens of each turn, in turn order."""
        return tuple(turn.prompt_tokens for turn in self.turns)

    def with_turn(self, record: TurnRecord) -> RunTelemetry:
        """Return a copy with one more worker turn."""
        return replace(self, turns=(*self.turns, record))

    def with_fault(self) -> RunTelemetry:
        """Return a copy with one more context fault served."""
        return replace(self, context_faults=self.context_faults + 1)

    def with_pages(self, count: int) -> RunTelemetry:
        """Return a copy with ``count`` more pages granted.

        Raises:
            ValueError: ``count`` is negative.
        """
        return replace(self, pages_granted=self.pages_granted + _count(count))

    def with_grants(self, count: int) -> RunTelemetry:
        """Return a copy with ``count`` more edit handles issued.

        Raises:
            ValueError: ``count`` is negative.
        """
        return replace(self, grants_issued=self.grants_issued + _count(count))

    def with_verification(self, record: VerificationRecord) -> RunTelemetry:
        """Return a copy with one more verification result."""
        return replace(self, verifications=(*self.verifications, record))

    def with_diagnostic(self, record: ProtocolDiagnostic) -> RunTelemetry:
        """Return a copy with one more protocol diagnostic."""
        return replace(self, diagnostics=(*self.diagnostics, record))


def _count(count: int) -> int:
    if count < 0:
        raise ValueError(f"a count cannot be negative: {count}")
    return count
