"""Explicit control: the plan graph, its execution lease and semantic checkpoints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lattice_runtime.control import (
    ContractTerms,
    EvidenceRequiredError,
    ExplicitControl,
    LeaseConflictError,
    PlanNodeError,
)
from tests.lattice_runtime.fixture_repos import SERVICE, make_repo

EVIDENCE = "Reset tokens are now deleted on first use; test_reset_twice covers it."


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "user-state"


@pytest.fixture
def control(repo: Path, state: Path) -> ExplicitControl:
    made = ExplicitControl(repo, state_dir=state)
    made.intake("make reset tokens single-use", ContractTerms(summary="single-use tokens"))
    return made


def dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def test_nodes_are_added_split_updated_and_archived(control: ExplicitControl) -> None:
    node = control.plan_add("Single-use tokens", ["a token works once"])
    left, right = control.plan_split(node.id, [("Delete on use", ["gone"]), ("Test", ["red"])])
    assert (left.parent, right.parent) == (node.id, node.id)
    assert control.plan_update(right.id, criteria=["test fails before"]).criteria == (
        "test fails before",
    )
    assert control.plan_archive(left.id).status == "archived"
    statuses = {n.id: n.status for n in control.plan.view().nodes}
    assert statuses == {node.id: "archived", left.id: "archived", right.id: "open"}
    with pytest.raises(PlanNodeError):
        control.plan_update(left.id, title="archived nodes do not change")
    with pytest.raises(PlanNodeError):
        control.plan_split(right.id, [("only one part", [])])


def test_checkout_is_a_compare_and_swap_on_the_generation(
    control: ExplicitControl, repo: Path, state: Path
) -> None:
    node = control.plan_add("Single-use tokens", ["a token works once"])
    lease = control.checkout(node.id, "agent-a", expected_generation=0)
    assert lease.generation == 1
    other = ExplicitControl(repo, state_dir=state)
    with pytest.raises(LeaseConflictError) as stale:
        other.checkout(node.id, "agent-b", expected_generation=0)
    assert stale.value.code == "lattice.lease_conflict"
    with pytest.raises(LeaseConflictError) as held:
        other.checkout(node.id, "agent-b", expected_generation=1)
    assert "agent-a" in held.value.message
    again = control.checkout(node.id, "agent-a", expected_generation=1)
    assert again.generation == 2


def test_a_dead_owners_lease_is_taken_over(repo: Path, state: Path) -> None:
    gone = ExplicitControl(repo, state_dir=state, pid=dead_pid())
    gone.intake("make reset tokens single-use", ContractTerms(summary="single-use tokens"))
    node = gone.plan_add("Single-use tokens", ["a token works once"])
    gone.checkout(node.id, "crashed-agent", expected_generation=0)
    taker = ExplicitControl(repo, state_dir=state)
    lease = taker.checkout(node.id, "agent-b", expected_generation=1)
    assert (lease.owner, lease.generation) == ("agent-b", 2)


def test_every_unfinished_node_requires_reconciliation_after_a_reframe(
    control: ExplicitControl,
) -> None:
    done = control.plan_add("Done first", ["x"])
    lease = control.checkout(done.id, "agent", 0)
    control.checkpoint(done.id, lease.generation, EVIDENCE, [SERVICE], complete=True)
    first = control.plan_add("Open one", ["y"])
    second = control.plan_add("Open two", ["z"])
    control.reframe(ContractTerms(summary="tokens must also expire"))
    flags = {n.id: n.reconciliation_required for n in control.plan.view().nodes}
    assert flags == {done.id: False, first.id: True, second.id: True}
    lease = control.checkout(first.id, "agent", control.plan.view().generation)
    with pytest.raises(PlanNodeError) as refused:
        control.checkpoint(first.id, lease.generation, EVIDENCE, [SERVICE], complete=True)
    assert "reconciliation" in refused.value.message
    assert not control.plan_update(first.id, criteria=["expired refused"]).reconciliation_required
    closed = control.checkpoint(first.id, lease.generation, EVIDENCE, [SERVICE], complete=True)
    assert closed.status == "done"


def test_a_mechanical_receipt_alone_is_not_accepted_as_completion(
    control: ExplicitControl,
) -> None:
    node = control.plan_add("Single-use tokens", ["a token works once"])
    lease = control.checkout(node.id, "agent", 0)
    receipt = control.refresh_context([SERVICE])
    with control.guarded(receipt.id, "lattice_apply", {"taskId": "t"}, [SERVICE]):
        (control.root / SERVICE).write_text("# patched\n")
    [mark] = control.attempts()
    assert mark.outcome == "applied"
    for evidence in (mark.id, f"{mark.id} {mark.result_digest}", "mechanical: applied ok"):
        with pytest.raises(EvidenceRequiredError) as refused:
            control.checkpoint(node.id, lease.generation, evidence, [SERVICE], complete=True)
        assert refused.value.code == "lattice.evidence_required"
    with pytest.raises(EvidenceRequiredError):
        control.checkpoint(node.id, lease.generation, EVIDENCE, [], complete=True)
    assert control.plan.view().nodes[0].status == "open"
    closed = control.checkpoint(node.id, lease.generation, EVIDENCE, [SERVICE], complete=True)
    [checkpoint] = closed.checkpoints
    assert checkpoint.artifacts[0][0] == SERVICE and checkpoint.artifacts[0][1]


def test_a_checkpoint_needs_the_current_lease(control: ExplicitControl) -> None:
    node = control.plan_add("Single-use tokens", ["a token works once"])
    with pytest.raises(LeaseConflictError):
        control.checkpoint(node.id, 1, EVIDENCE, [SERVICE], complete=False)
    lease = control.checkout(node.id, "agent", 0)
    control.checkout(node.id, "agent", lease.generation)
    with pytest.raises(LeaseConflictError):
        control.checkpoint(node.id, lease.generation, EVIDENCE, [SERVICE], complete=False)


def test_a_second_intake_is_a_new_request_that_needs_reconciliation(
    control: ExplicitControl,
) -> None:
    node = control.plan_add("Single-use tokens", ["a token works once"])
    contract = control.intake("new request: expire tokens", ContractTerms(summary="expiry"))
    assert contract.revision == 2 and contract.frontier.sequence == 2
    assert control.plan.view().nodes[0].id == node.id
    assert control.plan.view().nodes[0].reconciliation_required
