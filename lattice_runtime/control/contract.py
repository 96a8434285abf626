"""The contract: what was asked, in revisions, bound to an anchor kept outside the repository.

Each revision is a JSON file in the repository (``.lattice/contract/r<NNNN>.json`` by
default); the *anchor* (accepted revision number and document digest) lives in the control
state directory. :meth:`ContractBook.accepted` reads the anchored revision and checks its
digest, so rewriting the files in the repository neither moves the anchor nor goes unnoticed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lattice_runtime._files import atomic_write
from lattice_runtime.control._state import StateDir, canonical, sha256_of
from lattice_runtime.control.errors import ContractAnchorError, ContractMissingError

__all__ = ["Contract", "ContractBook", "ContractTerms", "InputFrontier"]

_ANCHOR = "anchor"


@dataclass(frozen=True, slots=True)
class ContractTerms:
    """What the human asked for, as the agent understood it.

    Attributes:
        summary: The request, in a sentence or two.
        outcome: The desired outcome.
        scope: What may change.
        exclusions: What must not change.
        invariants: What must stay true.
        decisions: Decisions taken with the human.
        criteria: Acceptance criteria.
    """

    summary: str
    outcome: str = ""
    scope: tuple[str, ...] = ()
    exclusions: tuple[str, ...] = ()
    invariants: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    criteria: tuple[str, ...] = ()

    def to_record(self) -> dict[str, Any]:
        """The JSON record of the terms."""
        return {
            "summary": self.summary,
            "outcome": self.outcome,
            "scope": list(self.scope),
            "exclusions": list(self.exclusions),
            "invariants": list(self.invariants),
            "decisions": list(self.decisions),
            "criteria": list(self.criteria),
        }

    @classmethod
    def from_record(cls, raw: dict[str, Any]) -> ContractTerms:
        """The terms of a record written by :meth:`to_record`."""
        return cls(
            summary=str(raw["summary"]),
            outcome=str(raw["outcome"]),
            scope=_strings(raw["scope"]),
            exclusions=_strings(raw["exclusions"]),
            invariants=_strings(raw["invariants"]),
            decisions=_strings(raw["decisions"]),
            criteria=_strings(raw["criteria"]),
        )


@dataclass(frozen=True, slots=True)
class InputFrontier:
    """The latest human message a contract (or the ledger) reflects: sequence and SHA-256."""

    sequence: int = 0
    digest: str = ""


@dataclass(frozen=True, slots=True)
class Contract:
    """One revision of the contract.

    Attributes:
        revision: 1 for the intake, +1 for each review or reframe.
        terms: The terms.
        frontier: The human input this revision adopted.
        digest: SHA-256 of the revision's canonical JSON (computed).
    """

    revision: int
    terms: ContractTerms
    frontier: InputFrontier
    digest: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "digest", sha256_of(self.to_record()))

    def to_record(self) -> dict[str, Any]:
        """The canonical record (the digest covers exactly this)."""
        return {
            "revision": self.revision,
            "terms": self.terms.to_record(),
            "frontier": {"sequence": self.frontier.sequence, "digest": self.frontier.digest},
        }


class ContractBook:
    """The contract files of one repository and their anchor in the state directory."""

    def __init__(self, repo_root: Path, directory: Path, state: StateDir) -> None:
        """Write revisions under ``directory`` (inside ``repo_root``), the anchor in ``state``."""
        self._root = repo_root.resolve()
        self._directory = directory
        self._state = state

    def anchor(self) -> tuple[int, str] | None:
        """The accepted ``(revision, digest)``, or None before the intake."""
        raw = self._state.read(_ANCHOR)
        if raw is None:
            return None
        return int(raw["revision"]), str(raw["digest"])

    def accepted(self) -> Contract:
        """The anchored revision, read from its file and checked against the anchor.

        Raises:
            ContractMissingError: No revision was accepted.
            ContractAnchorError: The file is missing, damaged or its digest differs.
        """
        anchor = self.anchor()
        if anchor is None:
            raise ContractMissingError
        revision, digest = anchor
        path = self._path(revision)
        try:
            contract = _parse(path.read_bytes())
        except FileNotFoundError:
            raise ContractAnchorError(f"contract revision {revision} ({path}) is gone") from None
        except (ValueError, KeyError, TypeError):
            raise ContractAnchorError(f"{path} is not a contract revision") from None
        if contract.revision != revision or contract.digest != digest:
            raise ContractAnchorError(
                f"{path} does not match the accepted revision {revision} (digest {digest[:12]})"
            )
        return contract

    def accept(self, terms: ContractTerms, frontier: InputFrontier) -> Contract:
        """Write the next revision, then move the anchor to it (call under the state lock).

        Raises:
            ContractAnchorError: The current files do not match the anchor (intake excepted).
        """
        current = self.anchor()
        if current is not None:
            self.accepted()  # a tampered contract is not silently superseded
        revision = 1 if current is None else current[0] + 1
        contract = Contract(revision, terms, frontier)
        atomic_write(self._path(revision), canonical(contract.to_record()) + b"\n", root=self._root)
        self._state.write(_ANCHOR, {"revision": revision, "digest": contract.digest})
        return contract

    def _path(self, revision: int) -> Path:
        return self._directory / f"r{revision:04d}.json"


def _parse(data: bytes) -> Contract:
    raw = json.loads(data)
    frontier = raw["frontier"]
    return Contract(
        revision=int(raw["revision"]),
        terms=ContractTerms.from_record(raw["terms"]),
        frontier=InputFrontier(int(frontier["sequence"]), str(frontier["digest"])),
    )


def _strings(value: Sequence[object]) -> tuple[str, ...]:
    return tuple(str(item) for item in value)
