"""Explicit control of one repository: the contract, one-use authorization, the plan graph.

:class:`ExplicitControl` is what the MCP tools (and, later, the session journal) call. Its
guarded attempts go through :meth:`ExplicitControl.guarded`: the receipt is consumed first,
then the epoch is rebuilt and compared with the receipt's, then the mutation runs, and a
mechanical receipt records what happened, all under the state directory's lock.

The journal reports events through :class:`ControlEvents` (``human_message``, ``boundary``,
``precondition``); each one moves the epoch, so outstanding receipts go stale.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Final, Literal, Protocol

from lattice_runtime._files import LATTICE_DIR, lattice_dir
from lattice_runtime.control._state import StateDir, default_state_dir, sha256_of
from lattice_runtime.control.contract import Contract, ContractBook, ContractTerms, InputFrontier
from lattice_runtime.control.epoch import Epoch, target_digests
from lattice_runtime.control.errors import (
    AuthorizationScopeError,
    AuthorizationStaleError,
    InputUnreviewedError,
    ReceiptRequiredError,
)
from lattice_runtime.control.ledger import Ledger, MechanicalReceipt, Receipt
from lattice_runtime.control.plan import Lease, PlanGraph, PlanNode, alive
from lattice_runtime.errors import LatticeError

__all__ = ["BoundaryKind", "ControlEvents", "ExplicitControl"]

BoundaryKind = Literal["handoff", "delegation", "resume", "compaction"]
BOUNDARY_KINDS: Final = ("handoff", "delegation", "resume", "compaction")
Targets = Sequence[str] | Callable[[], Sequence[str]]
"""The paths a guarded attempt writes, or a function that finds them."""


class ControlEvents(Protocol):
    """The events the session journal reports to explicit control (each invalidates)."""

    def human_message(self, sequence: int, digest: str) -> None:
        """A human message with this sequence number and SHA-256 arrived."""

    def boundary(self, kind: BoundaryKind) -> None:
        """The session crossed a boundary (handoff, delegation, resume, compaction)."""

    def precondition(self, name: str, digest: str) -> None:
        """An external precondition now has this digest."""


class ExplicitControl:
    """Explicit control of one repository (see the module docstring)."""

    def __init__(
        self,
        repo_root: Path,
        *,
        state_dir: Path | None = None,
        contract_dir: Path | None = None,
        token: Callable[[], str] | None = None,
        pid: int | None = None,
        is_alive: Callable[[int], bool] = alive,
    ) -> None:
        """Control ``repo_root``; state in ``state_dir`` (default: the per-user state dir).

        Args:
            repo_root: The repository.
            state_dir: Where the anchor, receipts and plan live (outside the repository).
            contract_dir: Where contract revisions are written (default ``.lattice/contract``).
            token: Makes receipt ids (default: 24 random URL-safe characters).
            pid: The process named by leases (default: this one).
            is_alive: Whether a lease owner's process is alive.
        """
        self.root = repo_root.resolve()
        self.state = StateDir(state_dir or default_state_dir(self.root))
        self._contract_dir = contract_dir or self.root / LATTICE_DIR / "contract"
        self.contracts = ContractBook(self.root, self._contract_dir, self.state)
        self.ledger = Ledger(self.state)
        self.plan = PlanGraph(self.state, pid=pid, is_alive=is_alive)
        self._token = token or (lambda: secrets.token_urlsafe(18))

    # -- the contract ---------------------------------------------------------------------

    def intake(self, request: str, terms: ContractTerms) -> Contract:
        """Record the human request as input and accept the first (or next) revision.

        A new intake over an accepted contract is a new request: like a reframe, it marks
        every unfinished plan node ``reconciliationRequired``.

        Raises:
            ContractAnchorError: A contract exists and its files do not match the anchor.
        """
        with self.state.locked():
            again = self.contracts.anchor() is not None
            self._note_message(request)
            if self._contract_dir.is_relative_to(self.root / LATTICE_DIR):
                lattice_dir(self.root)
            contract = self.contracts.accept(terms, self.ledger.input())
            if again:
                self.plan.mark_reframed()
            return contract

    def review_input(self, message: str | None = None, decisions: Sequence[str] = ()) -> Contract:
        """Adopt the latest human input (recording ``message`` first) into a new revision.

        Raises:
            ContractMissingError: No intake yet.
            ContractAnchorError: The contract files do not match the anchor.
        """
        with self.state.locked():
            if message is not None:
                self._note_message(message)
            terms = self.contracts.accepted().terms
            terms = replace(terms, decisions=(*terms.decisions, *decisions))
            return self.contracts.accept(terms, self.ledger.input())

    def reframe(self, terms: ContractTerms) -> Contract:
        """Accept new terms; every unfinished plan node then requires reconciliation.

        Raises:
            ContractMissingError: No intake yet.
            ContractAnchorError: The contract files do not match the anchor.
        """
        with self.state.locked():
            contract = self.contracts.accept(terms, self.ledger.input())
            self.plan.mark_reframed()
            return contract

    # -- events (ControlEvents) -----------------------------------------------------------

    def human_message(self, sequence: int, digest: str) -> None:
        """Record a human message (the journal calls this)."""
        with self.state.locked():
            self.ledger.note_input(InputFrontier(sequence, digest))

    def boundary(self, kind: BoundaryKind) -> None:
        """Record a boundary; outstanding receipts go stale.

        Raises:
            ValueError: ``kind`` is not a boundary kind.
        """
        if kind not in BOUNDARY_KINDS:
            raise ValueError(f"unknown boundary kind {kind!r}")
        with self.state.locked():
            self.ledger.note_boundary()

    def precondition(self, name: str, digest: str) -> None:
        """Record the current digest of an external precondition."""
        with self.state.locked():
            self.ledger.note_preconditions({name: digest})

    # -- authorization --------------------------------------------------------------------

    def refresh_context(
        self, targets: Sequence[str], preconditions: Mapping[str, str] | None = None
    ) -> Receipt:
        """Rebuild the epoch over ``targets`` and ``preconditions``; issue a one-use receipt.

        Raises:
            ContractMissingError: No intake yet.
            ContractAnchorError: The contract files do not match the anchor.
            InputUnreviewedError: A human message arrived that the contract does not reflect.
            UnsafePathError: A target lies outside the repository.
        """
        with self.state.locked():
            if preconditions:
                self.ledger.note_preconditions(preconditions)
            names = sorted(preconditions or {})
            epoch = self._epoch(targets, names, None, reviewed=True)
            receipt = Receipt(self._token(), epoch)
            self.ledger.issue(receipt)
            return receipt

    @contextmanager
    def guarded(
        self,
        receipt: str | None,
        call: str,
        arguments: object,
        targets: Targets,
        preconditions: Mapping[str, str] | None = None,
    ) -> Iterator[None]:
        """Authorize one mutation of ``targets``; the block performs it.

        The receipt is consumed before anything is checked; a refused or failed attempt
        still uses it up. ``targets`` may be a function: it is called after the receipt is
        consumed (so an error finding the targets also uses the receipt up). A mechanical
        receipt records every attempt.

        Raises:
            ReceiptRequiredError: No receipt.
            ReceiptUnknownError: The receipt was never issued.
            ReceiptConsumedError: The receipt was used already.
            AuthorizationScopeError: A target was not declared when the receipt was issued.
            AuthorizationStaleError: The epoch moved since the receipt was issued.
            ContractAnchorError: The contract files do not match the anchor.
        """
        with self.state.locked():
            basis, paths = self._authorize(receipt, call, arguments, targets, preconditions)
            try:
                yield
            except Exception as exc:
                code = exc.code if isinstance(exc, LatticeError) else type(exc).__name__
                self.ledger.record_attempt(
                    call, arguments, basis, f"failed:{code}", "", receipt or ""
                )
                raise
            result = sha256_of([list(p) for p in target_digests(self.root, paths)])
            self.ledger.record_attempt(call, arguments, basis, "applied", result, receipt or "")

    def attempts(self) -> list[MechanicalReceipt]:
        """The mechanical receipts of guarded attempts, oldest first."""
        with self.state.locked():
            return self.ledger.attempts()

    # -- the plan graph -------------------------------------------------------------------

    def plan_add(self, title: str, criteria: Sequence[str], parent: str | None = None) -> PlanNode:
        """Add an open plan node (a plan change: outstanding receipts go stale)."""
        with self.state.locked():
            return self.plan.add(title, criteria, parent)

    def plan_split(self, node: str, parts: Sequence[tuple[str, Sequence[str]]]) -> list[PlanNode]:
        """Split an open node into open children (see :meth:`PlanGraph.split`).

        Raises:
            PlanNodeError: No such open node, or fewer than two parts.
        """
        with self.state.locked():
            return self.plan.split(node, parts)

    def plan_update(
        self, node: str, *, title: str | None = None, criteria: Sequence[str] | None = None
    ) -> PlanNode:
        """Update (and so reconcile) an open node.

        Raises:
            PlanNodeError: No such open node.
        """
        with self.state.locked():
            return self.plan.update(node, title=title, criteria=criteria)

    def plan_archive(self, node: str) -> PlanNode:
        """Archive an open node.

        Raises:
            PlanNodeError: No such open node.
        """
        with self.state.locked():
            return self.plan.archive(node)

    def checkout(self, node: str, owner: str, expected_generation: int) -> Lease:
        """Take the execution lease (compare-and-swap on the generation).

        Raises:
            LeaseConflictError: Stale generation, or a live other owner holds it.
            PlanNodeError: No such open node.
        """
        with self.state.locked():
            return self.plan.checkout(node, owner, expected_generation)

    def checkpoint(
        self,
        node: str,
        generation: int,
        evidence: str,
        artifacts: Sequence[str],
        *,
        complete: bool,
    ) -> PlanNode:
        """Record semantic evidence on the leased node; ``complete`` closes it.

        Mechanical receipts do not count as evidence: their ids and digests are removed from
        ``evidence`` before it is judged, and a guarded attempt's success never closes a node.

        Raises:
            LeaseConflictError: ``generation`` does not hold the lease on ``node``.
            EvidenceRequiredError: No account in words (or no existing artifact to complete).
            PlanNodeError: No such open node, or it needs reconciliation first.
            UnsafePathError: An artifact lies outside the repository.
        """
        with self.state.locked():
            words = evidence
            for mark in self.ledger.attempts():
                for token in (mark.id, mark.result_digest, mark.basis_digest, mark.receipt):
                    words = words.replace(token, "") if token else words
            digests = target_digests(self.root, artifacts)
            return self.plan.checkpoint(node, generation, words, digests, complete=complete)

    def _authorize(
        self,
        receipt: str | None,
        call: str,
        arguments: object,
        targets: Targets,
        preconditions: Mapping[str, str] | None,
    ) -> tuple[str, Sequence[str]]:
        basis = ""
        try:
            if not receipt:
                raise ReceiptRequiredError(f"{call} needs a receipt in explicit control")
            issued = self.ledger.consume(receipt)  # consumed before any validation
            basis = issued.epoch.digest
            paths = targets() if callable(targets) else targets
            _check_scope(issued.epoch, paths)
            names = [name for name, _ in issued.epoch.preconditions]
            declared = [path for path, _ in issued.epoch.targets]
            now = self._epoch(declared, names, preconditions, reviewed=False)
            changed = now.changed_since(issued.epoch)
            if changed:
                raise AuthorizationStaleError(
                    f"the authorization epoch moved since the receipt ({', '.join(changed)})",
                    changed,
                )
        except LatticeError as exc:
            self.ledger.record_attempt(
                call, arguments, basis, f"refused:{exc.code}", "", receipt or ""
            )
            raise
        return basis, paths

    def _epoch(
        self,
        targets: Sequence[str],
        names: Sequence[str],
        preconditions: Mapping[str, str] | None,
        *,
        reviewed: bool,
    ) -> Epoch:
        # reviewed: refuse to build an epoch over input the contract does not reflect yet
        contract = self.contracts.accepted()
        seen = self.ledger.input()
        if reviewed and seen.sequence > contract.frontier.sequence:
            raise InputUnreviewedError(
                f"human message {seen.sequence} arrived after contract revision "
                f"{contract.revision} (which reflects message {contract.frontier.sequence})"
            )
        observed = {**self.ledger.observed(), **(preconditions or {})}
        return Epoch(
            contract=f"{contract.revision}:{contract.digest}",
            input=f"{seen.sequence}:{seen.digest}",
            boundaries=self.ledger.boundaries(),
            plan=self.plan.view().address,
            targets=target_digests(self.root, targets),
            preconditions=tuple(sorted((name, observed.get(name, "")) for name in names)),
        )

    def _note_message(self, text: str) -> None:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        self.ledger.note_input(InputFrontier(self.ledger.input().sequence + 1, digest))


def _check_scope(epoch: Epoch, targets: Sequence[str]) -> None:
    declared = {path for path, _ in epoch.targets}
    missing = sorted(set(targets) - declared)
    if missing:
        raise AuthorizationScopeError(
            f"the receipt does not cover {', '.join(missing[:5])}"
            + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        )
