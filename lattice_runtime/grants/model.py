"""Edit grants as values: what a handle lets a worker do, and to which bytes.

A handle (``E1``, ``E2``, ...) is opaque to the worker. Behind it the registry
(:mod:`.registry`) keeps an :class:`EditGrant`: the run it belongs to (:class:`Binding`), the
path, the fingerprint of the bytes the worker was shown, the granted line range and the
operations allowed. Lowering (:mod:`lattice_runtime.patch`) checks every proposed change
against its grant; nothing else widens or narrows authority.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "HANDLE_PATTERN",
    "OPERATIONS",
    "Binding",
    "EditGrant",
    "Operation",
]

Operation = Literal["replace_text", "replace_file", "delete_file"]
"""What a handle may do to its file (``create_file`` needs no handle)."""

OPERATIONS: Final[tuple[Operation, ...]] = ("replace_text", "replace_file", "delete_file")

HANDLE_PATTERN: Final = re.compile(r"^E[1-9]\d*$")
"""Every handle matches it; anything else is ``unknown_handle`` before any lookup."""


@dataclass(frozen=True, slots=True)
class Binding:
    """The run a grant belongs to; a handle is void in any other.

    Attributes:
        task_id: The compiled task's id.
        session_id: The session the run belongs to.
        repository_id: The repository (its id in the context kernel's workspace).
        base_commit: ``HEAD`` when the run started (40 hex digits).
        epoch: Bumped when the run's grants are reissued (a revision that re-reads files).
    """

    task_id: str
    session_id: str
    repository_id: str
    base_commit: str
    epoch: int = 1


@dataclass(frozen=True, slots=True)
class EditGrant:
    """One handle's authority.

    Attributes:
        handle: ``E<n>``.
        binding: The run it belongs to.
        path: Repository-relative posix path.
        fingerprint: The file's fingerprint when granted (:mod:`.fingerprint`).
        lines: The granted ``(first, last)`` lines, 1-based inclusive; ``None``: the whole
            file.
        operations: What the handle may do; empty for a read-only file (tests, config,
            untracked files, symlinks).
        invalidated: The handle was withdrawn (its file changed, or its epoch ended).
    """

    handle: str
    binding: Binding
    path: str
    fingerprint: str
    lines: tuple[int, int] | None
    operations: tuple[Operation, ...]
    invalidated: bool = False

    @property
    def whole_file(self) -> bool:
        """The grant covers the whole file."""
        return self.lines is None
