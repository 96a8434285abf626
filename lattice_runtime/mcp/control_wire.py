"""What the explicit-control tools take and answer (camelCase wire models)."""

from __future__ import annotations

from pydantic import Field

from lattice_runtime.control import Contract, ContractTerms, Epoch, PlanNode, PlanView, Receipt
from repocontext.wire import WireModel

__all__ = [
    "ContractResult",
    "EpochWire",
    "PartItem",
    "PlanResult",
    "PreconditionItem",
    "ReceiptResult",
    "TermsItem",
    "contract_result",
    "plan_result",
    "receipt_result",
]

Texts = list[str]


class PreconditionItem(WireModel):
    """An external precondition the caller declares: its name and current digest."""

    name: str = Field(min_length=1, max_length=200)
    digest: str = Field(min_length=1, max_length=200)


class TermsItem(WireModel):
    """The terms of a contract, as the agent states them."""

    summary: str = Field(min_length=1, max_length=2000, description="The request, briefly.")
    outcome: str = Field(default="", max_length=2000, description="The desired outcome.")
    scope: list[str] = Field(default_factory=list, max_length=50, description="What may change.")
    exclusions: list[str] = Field(
        default_factory=list, max_length=50, description="What must not change."
    )
    invariants: list[str] = Field(
        default_factory=list, max_length=50, description="What must stay true."
    )
    decisions: list[str] = Field(default_factory=list, max_length=50)
    criteria: list[str] = Field(
        default_factory=list, max_length=50, description="Acceptance criteria."
    )

    def terms(self) -> ContractTerms:
        """The domain terms."""
        return ContractTerms(
            summary=self.summary,
            outcome=self.outcome,
            scope=tuple(self.scope),
            exclusions=tuple(self.exclusions),
            invariants=tuple(self.invariants),
            decisions=tuple(self.decisions),
            criteria=tuple(self.criteria),
        )


class PartItem(WireModel):
    """One part of a split node."""

    title: str = Field(min_length=1, max_length=500)
    criteria: list[str] = Field(default_factory=list, max_length=50)


class FrontierWire(WireModel):
    """The latest human message a contract reflects."""

    sequence: int
    digest: str


class ContractResult(WireModel):
    """The accepted contract revision (its anchor is kept outside the repository)."""

    revision: int
    digest: str = Field(description="SHA-256 of the revision's canonical JSON.")
    frontier: FrontierWire
    summary: str
    outcome: str
    scope: Texts
    exclusions: Texts
    invariants: Texts
    decisions: Texts
    criteria: Texts
    reconciliation_required: list[str] = Field(
        default_factory=list, description="Open plan nodes to update after this revision."
    )
    next: str


class TargetWire(WireModel):
    """A declared target and its SHA-256 (null: it does not exist)."""

    path: str
    digest: str | None


class EpochWire(WireModel):
    """An authorization epoch's components."""

    digest: str
    contract: str
    input: str
    boundaries: int
    plan: str
    targets: list[TargetWire]
    preconditions: list[PreconditionItem]


class ReceiptResult(WireModel):
    """A one-use receipt for the next guarded attempt."""

    receipt: str = Field(description="Pass it to the next guarded call (lattice_apply).")
    epoch: EpochWire
    next: str


class CheckpointWire(WireModel):
    """A checkpoint's evidence."""

    evidence: str
    artifacts: list[TargetWire]
    complete: bool
    generation: int


class NodeWire(WireModel):
    """A plan node."""

    node_id: str
    title: str
    criteria: Texts
    status: str
    parent: str | None
    reconciliation_required: bool
    checkpoints: list[CheckpointWire]


class LeaseWire(WireModel):
    """The execution lease."""

    owner: str
    node_id: str
    generation: int
    pid: int


class PlanResult(WireModel):
    """The plan graph after the call."""

    revision: int
    generation: int = Field(description="Pass it to lattice_checkout (compare-and-swap).")
    address: str
    nodes: list[NodeWire]
    lease: LeaseWire | None
    next: str


def contract_result(contract: Contract, plan: PlanView, next_call: str) -> ContractResult:
    """The wire form of a contract revision."""
    terms = contract.terms
    return ContractResult(
        revision=contract.revision,
        digest=contract.digest,
        frontier=FrontierWire(sequence=contract.frontier.sequence, digest=contract.frontier.digest),
        summary=terms.summary,
        outcome=terms.outcome,
        scope=list(terms.scope),
        exclusions=list(terms.exclusions),
        invariants=list(terms.invariants),
        decisions=list(terms.decisions),
        criteria=list(terms.criteria),
        reconciliation_required=[n.id for n in plan.nodes if n.reconciliation_required],
        next=next_call,
    )


def _epoch(epoch: Epoch) -> EpochWire:
    return EpochWire(
        digest=epoch.digest,
        contract=epoch.contract,
        input=epoch.input,
        boundaries=epoch.boundaries,
        plan=epoch.plan,
        targets=[TargetWire(path=p, digest=d) for p, d in epoch.targets],
        preconditions=[PreconditionItem(name=n, digest=d) for n, d in epoch.preconditions],
    )


def receipt_result(receipt: Receipt) -> ReceiptResult:
    """The wire form of a new receipt."""
    return ReceiptResult(
        receipt=receipt.id,
        epoch=_epoch(receipt.epoch),
        next="Make the guarded call now (lattice_apply with this receipt); it works once.",
    )


def _node(node: PlanNode) -> NodeWire:
    return NodeWire(
        node_id=node.id,
        title=node.title,
        criteria=list(node.criteria),
        status=node.status,
        parent=node.parent,
        reconciliation_required=node.reconciliation_required,
        checkpoints=[
            CheckpointWire(
                evidence=c.text,
                artifacts=[TargetWire(path=p, digest=d) for p, d in c.artifacts],
                complete=c.complete,
                generation=c.generation,
            )
            for c in node.checkpoints
        ],
    )


def plan_result(plan: PlanView, next_call: str) -> PlanResult:
    """The wire form of the plan graph."""
    lease = plan.lease
    return PlanResult(
        revision=plan.revision,
        generation=plan.generation,
        address=plan.address,
        nodes=[_node(n) for n in plan.nodes],
        lease=None
        if lease is None
        else LeaseWire(
            owner=lease.owner, node_id=lease.node, generation=lease.generation, pid=lease.pid
        ),
        next=next_call,
    )
