"""The errors of explicit control (``docs/continuity.md``).

::

    LatticeError                          lattice.error
    └── ControlError                      lattice.control
        ├── ContractMissingError          lattice.contract_missing
        ├── ContractAnchorError           lattice.contract_anchor_mismatch
        ├── InputUnreviewedError          lattice.input_unreviewed
        ├── ReceiptRequiredError          lattice.receipt_required
        ├── ReceiptUnknownError           lattice.receipt_unknown
        ├── ReceiptConsumedError          lattice.receipt_consumed
        ├── AuthorizationStaleError       lattice.authorization_stale
        ├── AuthorizationScopeError       lattice.authorization_scope
        ├── PlanNodeError                 lattice.plan_node
        ├── LeaseConflictError            lattice.lease_conflict
        └── EvidenceRequiredError         lattice.evidence_required
"""

from __future__ import annotations

from typing import ClassVar

from lattice_runtime.errors import LatticeError

__all__ = [
    "AuthorizationScopeError",
    "AuthorizationStaleError",
    "ContractAnchorError",
    "ContractMissingError",
    "ControlError",
    "EvidenceRequiredError",
    "InputUnreviewedError",
    "LeaseConflictError",
    "PlanNodeError",
    "ReceiptConsumedError",
    "ReceiptRequiredError",
    "ReceiptUnknownError",
]

_REFRESH = "Call lattice_refresh_context for a new receipt, then attempt again."


class ControlError(LatticeError):
    """Explicit control refused a call."""

    code: ClassVar[str] = "lattice.control"


class ContractMissingError(ControlError):
    """No contract was accepted yet (explicit control needs one)."""

    code: ClassVar[str] = "lattice.contract_missing"

    def __init__(self, message: str = "no contract was accepted for this repository") -> None:
        super().__init__(message, hint="Call lattice_intake with the request first.")


class ContractAnchorError(ControlError):
    """The contract files in the repository do not match the anchor kept outside it."""

    code: ClassVar[str] = "lattice.contract_anchor_mismatch"

    def __init__(self, message: str) -> None:
        super().__init__(
            message,
            hint="The contract files were changed outside Lattice; restore them, or "
            "lattice_reframe to accept a new revision.",
        )


class InputUnreviewedError(ControlError):
    """A human message arrived that the contract does not reflect yet."""

    code: ClassVar[str] = "lattice.input_unreviewed"

    def __init__(self, message: str) -> None:
        super().__init__(message, hint="Call lattice_review_input, then refresh the context.")


class ReceiptRequiredError(ControlError):
    """A guarded attempt came without a receipt."""

    code: ClassVar[str] = "lattice.receipt_required"

    def __init__(self, message: str) -> None:
        super().__init__(message, hint=_REFRESH)


class ReceiptUnknownError(ControlError):
    """The receipt was never issued here."""

    code: ClassVar[str] = "lattice.receipt_unknown"

    def __init__(self, message: str) -> None:
        super().__init__(message, hint=_REFRESH)


class ReceiptConsumedError(ControlError):
    """The receipt was used by an earlier attempt (a receipt authorizes one attempt)."""

    code: ClassVar[str] = "lattice.receipt_consumed"

    def __init__(self, message: str) -> None:
        super().__init__(message, hint=_REFRESH)


class AuthorizationStaleError(ControlError):
    """The authorization epoch changed since the receipt was issued.

    Attributes:
        changed: The epoch components that differ (``contract``, ``input``, ``targets``...).
    """

    code: ClassVar[str] = "lattice.authorization_stale"

    def __init__(self, message: str, changed: tuple[str, ...]) -> None:
        super().__init__(message, hint=_REFRESH)
        self.changed = changed


class AuthorizationScopeError(ControlError):
    """The attempt touches a target the receipt did not declare."""

    code: ClassVar[str] = "lattice.authorization_scope"

    def __init__(self, message: str) -> None:
        super().__init__(message, hint="Refresh the context declaring every target.")


class PlanNodeError(ControlError):
    """A plan node does not exist or cannot take the change."""

    code: ClassVar[str] = "lattice.plan_node"


class LeaseConflictError(ControlError):
    """The execution lease is held by a live owner, or the generation is not the current one."""

    code: ClassVar[str] = "lattice.lease_conflict"


class EvidenceRequiredError(ControlError):
    """A checkpoint came without semantic evidence (mechanical receipts are not proof)."""

    code: ClassVar[str] = "lattice.evidence_required"
