"""Explicit control (``LATTICE_CONTROL=always``): contract, one-use authorization, plan graph.

See ``docs/continuity.md``. :class:`ExplicitControl` joins a contract whose accepted
revision is anchored outside the repository, authorization epochs with one-use receipts that
every guarded mutation consumes before it is validated, and a plan graph with a single
execution lease and checkpoints that need semantic evidence.
"""

from lattice_runtime.control.contract import Contract, ContractTerms, InputFrontier
from lattice_runtime.control.control import BoundaryKind, ControlEvents, ExplicitControl
from lattice_runtime.control.epoch import Epoch
from lattice_runtime.control.errors import (
    AuthorizationScopeError,
    AuthorizationStaleError,
    ContractAnchorError,
    ContractMissingError,
    ControlError,
    EvidenceRequiredError,
    InputUnreviewedError,
    LeaseConflictError,
    PlanNodeError,
    ReceiptConsumedError,
    ReceiptRequiredError,
    ReceiptUnknownError,
)
from lattice_runtime.control.ledger import MechanicalReceipt, Receipt
from lattice_runtime.control.plan import Checkpoint, Lease, PlanNode, PlanView

__all__ = [
    "AuthorizationScopeError",
    "AuthorizationStaleError",
    "BoundaryKind",
    "Checkpoint",
    "Contract",
    "ContractAnchorError",
    "ContractMissingError",
    "ContractTerms",
    "ControlError",
    "ControlEvents",
    "Epoch",
    "EvidenceRequiredError",
    "ExplicitControl",
    "InputFrontier",
    "InputUnreviewedError",
    "Lease",
    "LeaseConflictError",
    "MechanicalReceipt",
    "PlanNode",
    "PlanNodeError",
    "PlanView",
    "Receipt",
    "ReceiptConsumedError",
    "ReceiptRequiredError",
    "ReceiptUnknownError",
]
