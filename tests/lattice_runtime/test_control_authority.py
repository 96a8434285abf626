"""Explicit control: contract anchor, authorization epochs and one-use receipts."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from lattice_runtime.control import (
    AuthorizationScopeError,
    AuthorizationStaleError,
    ContractAnchorError,
    ContractMissingError,
    ContractTerms,
    ExplicitControl,
    InputUnreviewedError,
    ReceiptConsumedError,
    ReceiptRequiredError,
    ReceiptUnknownError,
)
from tests.lattice_runtime.fixture_repos import SERVICE, make_repo

TERMS = ContractTerms(
    summary="Make reset tokens single-use",
    outcome="A reset token works once",
    scope=("src/resetkit/",),
    criteria=("tests pass",),
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "user-state"


@pytest.fixture
def control(repo: Path, state: Path) -> ExplicitControl:
    made = ExplicitControl(repo, state_dir=state)
    made.intake("please make reset tokens single-use", TERMS)
    return made


def attempt(control: ExplicitControl, receipt: str, targets: tuple[str, ...] = (SERVICE,)) -> None:
    with control.guarded(receipt, "lattice_write", {"path": SERVICE}, list(targets)):
        (control.root / SERVICE).write_text("# changed under authority\n")


def test_a_fresh_receipt_authorizes_one_attempt_and_is_then_refused(
    control: ExplicitControl,
) -> None:
    receipt = control.refresh_context([SERVICE])
    attempt(control, receipt.id)
    assert (control.root / SERVICE).read_text() == "# changed under authority\n"
    with pytest.raises(ReceiptConsumedError) as refused:
        attempt(control, receipt.id)
    assert refused.value.code == "lattice.receipt_consumed"


def test_an_attempt_without_a_receipt_or_with_an_unknown_one_is_refused(
    control: ExplicitControl,
) -> None:
    with pytest.raises(ReceiptRequiredError):
        attempt(control, "")
    with pytest.raises(ReceiptUnknownError):
        attempt(control, "never-issued")
    assert [m.outcome for m in control.attempts()] == [
        "refused:lattice.receipt_required",
        "refused:lattice.receipt_unknown",
    ]


def test_a_failed_attempt_still_consumes_its_receipt(control: ExplicitControl) -> None:
    receipt = control.refresh_context([SERVICE])
    with pytest.raises(AuthorizationScopeError):
        attempt(control, receipt.id, targets=(SERVICE, "README.md"))
    with pytest.raises(ReceiptConsumedError):
        attempt(control, receipt.id)
    second = control.refresh_context([SERVICE])
    with pytest.raises(ContractMissingError), control.guarded(second.id, "x", {}, [SERVICE]):
        raise ContractMissingError("the mutation itself failed")
    with pytest.raises(ReceiptConsumedError):
        attempt(control, second.id)
    outcomes = [m.outcome for m in control.attempts()]
    assert outcomes == [
        "refused:lattice.authorization_scope",
        "refused:lattice.receipt_consumed",
        "failed:lattice.contract_missing",
        "refused:lattice.receipt_consumed",
    ]


def test_consumption_is_on_disk_before_validation(control: ExplicitControl, state: Path) -> None:
    receipt = control.refresh_context([SERVICE])
    (control.root / SERVICE).write_text("changed by someone else\n")
    with pytest.raises(AuthorizationStaleError):
        attempt(control, receipt.id)
    ledger = json.loads((state / "authority.json").read_text())
    assert ledger["receipts"][receipt.id]["consumed"] is True
    reopened = ExplicitControl(control.root, state_dir=state)  # a restarted process
    with pytest.raises(ReceiptConsumedError):
        attempt(reopened, receipt.id)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


INVALIDATIONS: dict[str, Callable[[ExplicitControl], object]] = {
    "input": lambda c: c.human_message(2, digest("actually, also log the reset")),
    "contract": lambda c: c.reframe(ContractTerms(summary="Reframed: tokens expire too")),
    "plan": lambda c: c.plan_add("Expire tokens", ["expired token refused"]),
    "targets": lambda c: (c.root / SERVICE).write_text("edited by another process\n"),
    "boundaries": lambda c: c.boundary("handoff"),
    "resume": lambda c: c.boundary("resume"),
    "preconditions": lambda c: c.precondition("ci-config", digest("v2")),
}


@pytest.mark.parametrize("event", sorted(INVALIDATIONS))
def test_each_invalidation_event_refuses_the_next_attempt_until_refresh(
    control: ExplicitControl, event: str
) -> None:
    receipt = control.refresh_context([SERVICE], {"ci-config": digest("v1")})
    INVALIDATIONS[event](control)
    with pytest.raises(AuthorizationStaleError) as refused:
        attempt(control, receipt.id)
    assert refused.value.code == "lattice.authorization_stale"
    expected = ("boundaries",) if event == "resume" else (event,)
    assert refused.value.changed == expected
    if event == "input":
        with pytest.raises(InputUnreviewedError):
            control.refresh_context([SERVICE])
        control.review_input(decisions=["log every reset"])
    fresh = control.refresh_context([SERVICE], {"ci-config": digest("v2")})
    attempt(control, fresh.id)


def test_a_concurrent_revision_change_by_another_process_stales_the_receipt(
    control: ExplicitControl, state: Path
) -> None:
    receipt = control.refresh_context([SERVICE])
    other = ExplicitControl(control.root, state_dir=state)
    other.review_input(decisions=["decided elsewhere"])
    with pytest.raises(AuthorizationStaleError) as refused:
        attempt(control, receipt.id)
    assert refused.value.changed == ("contract",)


def test_the_absence_of_a_declared_target_is_recorded_and_its_creation_stales(
    control: ExplicitControl,
) -> None:
    receipt = control.refresh_context(["src/resetkit/new.py"])
    assert receipt.epoch.targets == (("src/resetkit/new.py", None),)
    (control.root / "src/resetkit/new.py").write_text("x = 1\n")
    with pytest.raises(AuthorizationStaleError):
        attempt(control, receipt.id, targets=("src/resetkit/new.py",))


def test_the_anchor_outside_the_repository_survives_rewriting_the_contract_files(
    control: ExplicitControl, state: Path, repo: Path
) -> None:
    anchor = json.loads((state / "anchor.json").read_text())
    assert not state.is_relative_to(repo)
    [revision] = sorted((repo / ".lattice" / "contract").iterdir())
    forged = json.loads(revision.read_text())
    forged["terms"]["exclusions"] = []
    forged["terms"]["scope"] = ["everything"]
    revision.write_text(json.dumps(forged))
    assert json.loads((state / "anchor.json").read_text()) == anchor
    with pytest.raises(ContractAnchorError) as refused:
        control.refresh_context([SERVICE])
    assert refused.value.code == "lattice.contract_anchor_mismatch"
    with pytest.raises(ContractAnchorError):
        control.reframe(ContractTerms(summary="rewritten together"))


def test_refresh_before_intake_is_refused(repo: Path, state: Path) -> None:
    with pytest.raises(ContractMissingError):
        ExplicitControl(repo, state_dir=state).refresh_context([SERVICE])


def test_a_receipt_is_refused_when_the_contract_files_are_rewritten_after_it(
    control: ExplicitControl, repo: Path
) -> None:
    receipt = control.refresh_context([SERVICE])
    [revision] = sorted((repo / ".lattice" / "contract").iterdir())
    revision.write_text(revision.read_text().replace("single-use", "reusable"))
    with pytest.raises(ContractAnchorError):
        attempt(control, receipt.id)
    with pytest.raises(ReceiptConsumedError):
        attempt(control, receipt.id)


def test_mechanical_receipts_record_call_arguments_basis_outcome_and_result(
    control: ExplicitControl,
) -> None:
    receipt = control.refresh_context([SERVICE])
    attempt(control, receipt.id)
    [mark] = control.attempts()
    assert mark.call == "lattice_write"
    assert mark.outcome == "applied"
    assert mark.basis_digest == receipt.epoch.digest
    assert mark.receipt == receipt.id
    assert len(mark.arguments_digest) == len(mark.result_digest) == 64


KILLED_BETWEEN_AUTHORIZATION_AND_APPLY = """
import os, signal, sys
from pathlib import Path
from lattice_runtime.control import ExplicitControl
repo, state, receipt, target = sys.argv[1:]
control = ExplicitControl(Path(repo), state_dir=Path(state))
with control.guarded(receipt, "lattice_write", {}, [target]):
    os.kill(os.getpid(), signal.SIGKILL)
    Path(repo, target).write_text("never written")
"""


def test_a_process_killed_between_authorization_and_apply_leaves_nothing_reusable(
    control: ExplicitControl, state: Path
) -> None:
    receipt = control.refresh_context([SERVICE])
    before = (control.root / SERVICE).read_text()
    script = [sys.executable, "-c", KILLED_BETWEEN_AUTHORIZATION_AND_APPLY]
    done = subprocess.run([*script, str(control.root), str(state), receipt.id, SERVICE])
    assert done.returncode == -signal.SIGKILL
    assert (control.root / SERVICE).read_text() == before
    restarted = ExplicitControl(control.root, state_dir=state)
    with pytest.raises(ReceiptConsumedError):
        attempt(restarted, receipt.id)
    attempt(restarted, restarted.refresh_context([SERVICE]).id)
