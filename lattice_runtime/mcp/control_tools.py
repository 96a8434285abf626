"""The explicit-control tools (``LATTICE_CONTROL=always`` only): contract, receipts, plan.

Each tool parses its arguments and makes one call on :class:`ExplicitControl`; the server
lists them only in explicit mode (``docs/continuity.md``).
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field

from lattice_runtime.control import ExplicitControl
from lattice_runtime.mcp._gate import ToolSpec, map_errors
from lattice_runtime.mcp.control_wire import (
    ContractResult,
    PartItem,
    PlanResult,
    PreconditionItem,
    ReceiptResult,
    TermsItem,
    contract_result,
    plan_result,
    receipt_result,
)
from lattice_runtime.mcp.tasks import LatticeTasks
from lattice_runtime.mcp.tools import STEP

__all__ = ["CONTROL_TOOLS", "control_tools"]

CONTROL_TOOLS: Final = (
    "lattice_intake",
    "lattice_review_input",
    "lattice_refresh_context",
    "lattice_reframe",
    "lattice_plan_add",
    "lattice_plan_split",
    "lattice_plan_update",
    "lattice_plan_archive",
    "lattice_checkout",
    "lattice_checkpoint",
)
"""The tool names, in the order the server lists them."""

NodeId = Annotated[str, Field(min_length=1, max_length=40, description="A plan node id (n1...).")]
Texts = Annotated[list[str] | None, Field(max_length=50)]
_REFRESH: Final = "Call lattice_refresh_context before the next guarded call."
_PLAN_NEXT: Final = "lattice_checkout a node (with `generation`) to work on it."


def control_tools(control: ExplicitControl, tasks: LatticeTasks) -> list[ToolSpec]:
    """Return the explicit-control tools bound to ``control`` (and ``tasks`` for targets)."""
    return [
        _intake(control),
        _review_input(control),
        _refresh_context(control, tasks),
        _reframe(control),
        *_plan_tools(control),
        _checkout(control),
        _checkpoint(control),
    ]


def _intake(control: ExplicitControl) -> ToolSpec:
    @map_errors
    def lattice_intake(
        request: Annotated[
            str, Field(min_length=1, max_length=20_000, description="The human's request.")
        ],
        contract: TermsItem,
    ) -> ContractResult:
        """Record the human's request and accept the contract you derived from it.

        Writes a contract revision under .lattice/contract/ and anchors its revision and
        digest outside the repository; the files are checked against the anchor on every
        authorization. Next: lattice_plan_add (optional), then lattice_refresh_context.
        """
        accepted = control.intake(request, contract.terms())
        return contract_result(accepted, control.plan.view(), _REFRESH)

    return ToolSpec("lattice_intake", lattice_intake, "Accept the contract", STEP)


def _review_input(control: ExplicitControl) -> ToolSpec:
    @map_errors
    def lattice_review_input(
        message: Annotated[
            str | None,
            Field(max_length=20_000, description="A new human message to record first."),
        ] = None,
        decisions: Texts = None,
    ) -> ContractResult:
        """Adopt the latest human input into a new contract revision (with new decisions).

        A human message the contract does not reflect stales every receipt and refuses
        lattice_refresh_context (`lattice.input_unreviewed`) until it is reviewed here. If the
        message changes what is asked, call lattice_reframe instead.
        """
        accepted = control.review_input(message, decisions or ())
        return contract_result(accepted, control.plan.view(), _REFRESH)

    return ToolSpec("lattice_review_input", lattice_review_input, "Review new input", STEP)


def _refresh_context(control: ExplicitControl, tasks: LatticeTasks) -> ToolSpec:
    @map_errors
    def lattice_refresh_context(
        taskId: Annotated[
            str | None,
            Field(max_length=80, description="Declare the files of this task's patch."),
        ] = None,
        targets: Annotated[
            list[str] | None, Field(max_length=200, description="More paths to declare.")
        ] = None,
        preconditions: Annotated[
            list[PreconditionItem] | None,
            Field(max_length=50, description="External preconditions: {name, digest}."),
        ] = None,
    ) -> ReceiptResult:
        """Rebuild the authorization epoch and get a one-use receipt for one guarded call.

        The epoch joins the accepted contract, the human input seen, handoffs and resumes,
        the plan address, the digests of the declared targets (absent ones recorded) and the
        declared preconditions. The receipt is used up by the next guarded call, even a
        refused one; any change to a component before then refuses it
        (`lattice.authorization_stale`).
        """
        declared = [*(tasks.patch_targets(taskId) if taskId else []), *(targets or [])]
        digests = {item.name: item.digest for item in preconditions or []}
        return receipt_result(control.refresh_context(declared, digests))

    return ToolSpec(
        "lattice_refresh_context", lattice_refresh_context, "Refresh authorization", STEP
    )


def _reframe(control: ExplicitControl) -> ToolSpec:
    @map_errors
    def lattice_reframe(contract: TermsItem) -> ContractResult:
        """Accept new terms as the next contract revision (what is asked changed).

        Every receipt goes stale; every unfinished plan node is marked
        `reconciliationRequired` (listed) and cannot be completed until lattice_plan_update.
        """
        accepted = control.reframe(contract.terms())
        return contract_result(accepted, control.plan.view(), _REFRESH)

    return ToolSpec("lattice_reframe", lattice_reframe, "Reframe the contract", STEP)


def _plan_tools(control: ExplicitControl) -> list[ToolSpec]:
    @map_errors
    def lattice_plan_add(
        title: Annotated[str, Field(min_length=1, max_length=500)],
        criteria: Texts = None,
        parent: Annotated[str | None, Field(max_length=40)] = None,
    ) -> PlanResult:
        """Add an open plan node with its acceptance criteria; answers the plan graph."""
        control.plan_add(title, criteria or [], parent)
        return plan_result(control.plan.view(), _PLAN_NEXT)

    @map_errors
    def lattice_plan_split(
        nodeId: NodeId, parts: Annotated[list[PartItem], Field(min_length=2, max_length=20)]
    ) -> PlanResult:
        """Archive an open node and add its parts as open children; answers the plan graph."""
        control.plan_split(nodeId, [(p.title, p.criteria) for p in parts])
        return plan_result(control.plan.view(), _PLAN_NEXT)

    @map_errors
    def lattice_plan_update(
        nodeId: NodeId,
        title: Annotated[str | None, Field(max_length=500)] = None,
        criteria: Annotated[list[str] | None, Field(max_length=50)] = None,
    ) -> PlanResult:
        """Change an open node's title or criteria; this clears `reconciliationRequired`."""
        control.plan_update(nodeId, title=title, criteria=criteria)
        return plan_result(control.plan.view(), _PLAN_NEXT)

    @map_errors
    def lattice_plan_archive(nodeId: NodeId) -> PlanResult:
        """Archive an open node (kept in the graph, out of the work)."""
        control.plan_archive(nodeId)
        return plan_result(control.plan.view(), _PLAN_NEXT)

    return [
        ToolSpec("lattice_plan_add", lattice_plan_add, "Add a plan node", STEP),
        ToolSpec("lattice_plan_split", lattice_plan_split, "Split a plan node", STEP),
        ToolSpec("lattice_plan_update", lattice_plan_update, "Update a plan node", STEP),
        ToolSpec("lattice_plan_archive", lattice_plan_archive, "Archive a plan node", STEP),
    ]


def _checkout(control: ExplicitControl) -> ToolSpec:
    @map_errors
    def lattice_checkout(
        nodeId: NodeId,
        owner: Annotated[str, Field(min_length=1, max_length=200, description="Who you are.")],
        generation: Annotated[int, Field(ge=0, description="The plan's current generation.")],
    ) -> PlanResult:
        """Take the single execution lease on an open node (compare-and-swap).

        Refused with `lattice.lease_conflict` when `generation` is not the plan's current one
        or another live owner holds the lease; a dead owner's lease is taken over. Next: work,
        then lattice_checkpoint with the lease's generation.
        """
        control.checkout(nodeId, owner, generation)
        return plan_result(control.plan.view(), _REFRESH)

    return ToolSpec("lattice_checkout", lattice_checkout, "Take the execution lease", STEP)


def _checkpoint(control: ExplicitControl) -> ToolSpec:
    @map_errors
    def lattice_checkpoint(
        nodeId: NodeId,
        generation: Annotated[int, Field(ge=1, description="The generation of your lease.")],
        evidence: Annotated[
            str,
            Field(max_length=20_000, description="What was done and how it meets the criteria."),
        ],
        artifacts: Annotated[
            list[str] | None, Field(max_length=100, description="Files that show it.")
        ] = None,
        complete: bool = False,
    ) -> PlanResult:
        """Record semantic evidence on your leased node; `complete` closes it.

        Evidence is words plus the digests of the named artifacts (recorded). A mechanical
        receipt (a guarded call's success) is never proof: receipt ids and digests are ignored
        in `evidence` (`lattice.evidence_required`). A node needing reconciliation cannot be
        completed.
        """
        control.checkpoint(nodeId, generation, evidence, artifacts or [], complete=complete)
        return plan_result(control.plan.view(), _PLAN_NEXT)

    return ToolSpec("lattice_checkpoint", lattice_checkpoint, "Checkpoint a plan node", STEP)
