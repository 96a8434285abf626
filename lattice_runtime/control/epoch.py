"""The authorization epoch: everything a guarded mutation's authority rests on, in one digest.

An epoch joins the accepted contract revision (and its digest), the human-input frontier the
runtime has seen, the count of handoffs and resumes, the plan address (when a plan graph is
used), the digests of the declared targets (``None`` records a target's absence) and the
declared external preconditions. A receipt is bound to the digest of the epoch it was issued
in; an attempt recomputes the epoch and is refused when any component moved.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lattice_runtime.control._state import sha256_of
from lattice_runtime.errors import UnsafePathError

__all__ = ["COMPONENTS", "Epoch", "target_digests"]

COMPONENTS = ("contract", "input", "boundaries", "plan", "targets", "preconditions")
"""The components of an epoch, as an attempt's refusal names them."""


@dataclass(frozen=True, slots=True)
class Epoch:
    """One authorization epoch.

    Attributes:
        contract: ``"<revision>:<digest>"`` of the accepted contract.
        input: ``"<sequence>:<digest>"`` of the latest human message seen.
        boundaries: How many handoffs and resumes happened.
        plan: The plan address (``""`` without a plan graph).
        targets: ``(path, SHA-256 or None)`` of each declared target, sorted.
        preconditions: ``(name, digest)`` of each declared external precondition, sorted.
        digest: SHA-256 of the epoch's canonical JSON (computed).
    """

    contract: str
    input: str
    boundaries: int
    plan: str
    targets: tuple[tuple[str, str | None], ...]
    preconditions: tuple[tuple[str, str], ...]
    digest: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "digest", sha256_of(self.to_record()))

    def to_record(self) -> dict[str, Any]:
        """The canonical record (the digest covers exactly this)."""
        return {
            "contract": self.contract,
            "input": self.input,
            "boundaries": self.boundaries,
            "plan": self.plan,
            "targets": [list(pair) for pair in self.targets],
            "preconditions": [list(pair) for pair in self.preconditions],
        }

    @classmethod
    def from_record(cls, raw: Mapping[str, Any]) -> Epoch:
        """The epoch of a record written by :meth:`to_record`."""
        return cls(
            contract=str(raw["contract"]),
            input=str(raw["input"]),
            boundaries=int(raw["boundaries"]),
            plan=str(raw["plan"]),
            targets=tuple((str(p), None if d is None else str(d)) for p, d in raw["targets"]),
            preconditions=tuple((str(n), str(d)) for n, d in raw["preconditions"]),
        )

    def changed_since(self, earlier: Epoch) -> tuple[str, ...]:
        """The components that differ from ``earlier``'s."""
        mine, theirs = self.to_record(), earlier.to_record()
        return tuple(name for name in COMPONENTS if mine[name] != theirs[name])


def target_digests(repo_root: Path, paths: Iterable[str]) -> tuple[tuple[str, str | None], ...]:
    """``(path, SHA-256 of the file or None when absent)`` of each path, sorted, deduplicated.

    Raises:
        UnsafePathError: A path is absolute or leads outside the repository.
    """
    root = repo_root.resolve()
    pairs: dict[str, str | None] = {}
    for path in paths:
        candidate = (root / path).resolve()
        if Path(path).is_absolute() or not candidate.is_relative_to(root):
            raise UnsafePathError(
                f"target {path[:200]!r} lies outside {root}",
                hint="Declare repository-relative paths.",
            )
        pairs[path] = (
            hashlib.sha256(candidate.read_bytes()).hexdigest() if candidate.is_file() else None
        )
    return tuple(sorted(pairs.items()))
