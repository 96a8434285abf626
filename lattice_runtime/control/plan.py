"""The plan graph: nodes with acceptance criteria, one execution lease, checkpoints.

The graph is one record in the control state directory. Every change bumps its revision,
which is part of the plan address an authorization epoch carries, so a plan change
invalidates outstanding receipts. One execution lease covers the graph: :meth:`PlanGraph.checkout`
takes it with a compare-and-swap on its generation, and takes it over only from an owner
whose process is gone. A checkpoint needs semantic evidence (words, and the digests of the
artifacts it names); a mechanical receipt of a guarded call is never accepted as proof.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from lattice_runtime.control._state import StateDir
from lattice_runtime.control.errors import EvidenceRequiredError, LeaseConflictError, PlanNodeError

__all__ = ["Checkpoint", "Lease", "PlanGraph", "PlanNode", "PlanView", "alive"]

_PLAN = "plan"
OPEN, DONE, ARCHIVED = "open", "done", "archived"
MIN_EVIDENCE_CHARS = 20
"""Fewer characters of evidence text are not an account of what was done."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Evidence of progress on a node: words, artifact digests, and whether it completes it."""

    text: str
    artifacts: tuple[tuple[str, str | None], ...]
    complete: bool
    generation: int


@dataclass(frozen=True, slots=True)
class PlanNode:
    """One unit of work.

    Attributes:
        id: ``n1``, ``n2``...
        title: What it is.
        criteria: Its acceptance criteria.
        status: ``open``, ``done`` or ``archived``.
        parent: The node it was split from.
        reconciliation_required: A reframe happened after it was last updated.
        checkpoints: Its checkpoints, oldest first.
    """

    id: str
    title: str
    criteria: tuple[str, ...]
    status: str = OPEN
    parent: str | None = None
    reconciliation_required: bool = False
    checkpoints: tuple[Checkpoint, ...] = ()


@dataclass(frozen=True, slots=True)
class Lease:
    """The execution lease: who holds it, on which node, at which generation."""

    owner: str
    node: str
    generation: int
    pid: int
    hostname: str


@dataclass(frozen=True, slots=True)
class PlanView:
    """The graph as a caller sees it."""

    revision: int
    generation: int
    nodes: tuple[PlanNode, ...]
    lease: Lease | None

    @property
    def address(self) -> str:
        """The plan address an epoch carries: revision, and the leased node if any."""
        node = self.lease.node if self.lease else ""
        return f"plan:{self.revision}:{node}" if self.revision else ""


def alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


class PlanGraph:
    """The plan graph of one repository (call its methods under the state lock)."""

    def __init__(
        self, state: StateDir, *, pid: int | None = None, is_alive: Callable[[int], bool] = alive
    ) -> None:
        """Keep the graph in ``state``; leases name ``pid`` (default: this process)."""
        self._state = state
        self._pid = os.getpid() if pid is None else pid
        self._alive = is_alive

    def view(self) -> PlanView:
        """The graph now."""
        return _decode(self._state.read(_PLAN))

    def add(self, title: str, criteria: Sequence[str], parent: str | None = None) -> PlanNode:
        """Add an open node."""
        plan = self.view()
        node = PlanNode(f"n{len(plan.nodes) + 1}", title, tuple(criteria), parent=parent)
        self._save(replace(plan, nodes=(*plan.nodes, node)))
        return node

    def split(self, node_id: str, parts: Sequence[tuple[str, Sequence[str]]]) -> list[PlanNode]:
        """Archive an open node and add its parts as open children.

        Raises:
            PlanNodeError: No such open node, or fewer than two parts.
        """
        if len(parts) < 2:
            raise PlanNodeError("a split needs at least two parts", hint="Use update instead.")
        plan = self.view()
        _open(plan, node_id)
        nodes = [replace(n, status=ARCHIVED) if n.id == node_id else n for n in plan.nodes]
        children = [
            PlanNode(f"n{len(nodes) + i}", title, tuple(criteria), parent=node_id)
            for i, (title, criteria) in enumerate(parts, 1)
        ]
        self._save(replace(plan, nodes=(*nodes, *children)))
        return children

    def update(
        self, node_id: str, *, title: str | None = None, criteria: Sequence[str] | None = None
    ) -> PlanNode:
        """Change an open node's title or criteria; this reconciles it after a reframe.

        Raises:
            PlanNodeError: No such open node.
        """
        plan = self.view()
        node = _open(plan, node_id)
        changed = replace(
            node,
            title=node.title if title is None else title,
            criteria=node.criteria if criteria is None else tuple(criteria),
            reconciliation_required=False,
        )
        self._save(_with(plan, changed))
        return changed

    def archive(self, node_id: str) -> PlanNode:
        """Archive an open node (it stays in the graph, out of the work).

        Raises:
            PlanNodeError: No such open node.
        """
        plan = self.view()
        node = replace(_open(plan, node_id), status=ARCHIVED)
        self._save(_with(plan, node))
        return node

    def mark_reframed(self) -> None:
        """Set ``reconciliationRequired`` on every unfinished node."""
        plan = self.view()
        nodes = tuple(
            replace(n, reconciliation_required=True) if n.status == OPEN else n for n in plan.nodes
        )
        if nodes != plan.nodes:  # an empty or finished plan does not change
            self._save(replace(plan, nodes=nodes))

    def checkout(self, node_id: str, owner: str, expected_generation: int) -> Lease:
        """Take the execution lease on an open node (compare-and-swap on the generation).

        Raises:
            LeaseConflictError: The generation is not the current one, or a live other owner
                holds the lease.
            PlanNodeError: No such open node.
        """
        plan = self.view()
        _open(plan, node_id)
        if expected_generation != plan.generation:
            raise LeaseConflictError(
                f"generation {expected_generation} is not the current {plan.generation}",
                hint="Read the plan's generation and check out again.",
            )
        held = plan.lease
        if held and held.owner != owner and self._held_live(held):
            raise LeaseConflictError(
                f"{held.owner} (pid {held.pid}) holds the lease on {held.node}",
                hint="Wait for it to checkpoint, or for its process to end.",
            )
        lease = Lease(owner, node_id, plan.generation + 1, self._pid, socket.gethostname())
        self._save(replace(plan, generation=lease.generation, lease=lease))
        return lease

    def checkpoint(
        self,
        node_id: str,
        generation: int,
        text: str,
        artifacts: tuple[tuple[str, str | None], ...],
        *,
        complete: bool,
    ) -> PlanNode:
        """Record evidence on the leased node; ``complete`` closes it.

        Raises:
            LeaseConflictError: ``generation`` is not the lease held on ``node_id``.
            EvidenceRequiredError: No semantic evidence (text, and artifacts to complete).
            PlanNodeError: No such open node, or it needs reconciliation first.
        """
        plan = self.view()
        node = _open(plan, node_id)
        lease = plan.lease
        if lease is None or lease.node != node_id or lease.generation != generation:
            raise LeaseConflictError(
                f"generation {generation} does not hold the lease on {node_id}",
                hint="lattice_checkout the node first.",
            )
        _check_evidence(text, artifacts, complete=complete)
        if complete and node.reconciliation_required:
            raise PlanNodeError(
                f"{node_id} needs reconciliation after a reframe",
                hint="lattice_plan_update it against the new contract first.",
            )
        mark = Checkpoint(text, artifacts, complete, generation)
        node = replace(node, checkpoints=(*node.checkpoints, mark))
        node = replace(node, status=DONE) if complete else node
        self._save(_with(plan, node))
        return node

    def _held_live(self, lease: Lease) -> bool:
        return lease.hostname != socket.gethostname() or self._alive(lease.pid)

    def _save(self, plan: PlanView) -> None:
        self._state.write(_PLAN, _encode(replace(plan, revision=plan.revision + 1)))


def _check_evidence(
    text: str, artifacts: tuple[tuple[str, str | None], ...], *, complete: bool
) -> None:
    words = text.strip()
    if len(words) < MIN_EVIDENCE_CHARS or words.startswith("mechanical:"):
        raise EvidenceRequiredError(
            "a checkpoint needs an account in words of what was done and why it meets the "
            "criteria; a mechanical receipt is not one",
            hint="Describe the outcome against the node's criteria and name its artifacts.",
        )
    if complete and not any(digest for _, digest in artifacts):
        raise EvidenceRequiredError(
            "completing a node needs at least one existing artifact (its digest is recorded)",
            hint="Name the files that show the criteria are met.",
        )


def _open(plan: PlanView, node_id: str) -> PlanNode:
    for node in plan.nodes:
        if node.id == node_id:
            if node.status != OPEN:
                raise PlanNodeError(f"{node_id} is {node.status}", hint="Pick an open node.")
            return node
    raise PlanNodeError(f"no plan node {node_id[:40]!r}", hint="Call lattice_plan_add first.")


def _with(plan: PlanView, node: PlanNode) -> PlanView:
    return replace(plan, nodes=tuple(node if n.id == node.id else n for n in plan.nodes))


def _encode(plan: PlanView) -> dict[str, Any]:
    def node(n: PlanNode) -> dict[str, Any]:
        marks = [
            {
                "text": c.text,
                "artifacts": [list(a) for a in c.artifacts],
                "complete": c.complete,
                "generation": c.generation,
            }
            for c in n.checkpoints
        ]
        return {
            "id": n.id,
            "title": n.title,
            "criteria": list(n.criteria),
            "status": n.status,
            "parent": n.parent,
            "reconciliationRequired": n.reconciliation_required,
            "checkpoints": marks,
        }

    lease = plan.lease
    return {
        "revision": plan.revision,
        "generation": plan.generation,
        "nodes": [node(n) for n in plan.nodes],
        "lease": None
        if lease is None
        else {
            "owner": lease.owner,
            "node": lease.node,
            "generation": lease.generation,
            "pid": lease.pid,
            "hostname": lease.hostname,
        },
    }


def _decode(raw: dict[str, Any] | None) -> PlanView:
    if raw is None:
        return PlanView(0, 0, (), None)
    nodes = tuple(
        PlanNode(
            id=str(n["id"]),
            title=str(n["title"]),
            criteria=tuple(str(c) for c in n["criteria"]),
            status=str(n["status"]),
            parent=n["parent"],
            reconciliation_required=bool(n["reconciliationRequired"]),
            checkpoints=tuple(
                Checkpoint(
                    str(c["text"]),
                    tuple((str(p), d) for p, d in c["artifacts"]),
                    bool(c["complete"]),
                    int(c["generation"]),
                )
                for c in n["checkpoints"]
            ),
        )
        for n in raw["nodes"]
    )
    lease = raw["lease"]
    return PlanView(
        revision=int(raw["revision"]),
        generation=int(raw["generation"]),
        nodes=nodes,
        lease=None if lease is None else Lease(**lease),
    )
