"""The internal patch IR: what lowering produces and the transaction applies.

A different type from the wire format (:mod:`lattice_runtime.protocol.messages`) on purpose:
an adapter that builds wire messages can never hand the transaction a path or an expected
fingerprint of its own choosing; only lowering, which checks every change against its edit
grant, makes these values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lattice_runtime.grants.model import Binding

__all__ = ["FileAction", "FileChange", "PatchIR"]

FileAction = Literal["create", "modify", "delete"]


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's change.

    Attributes:
        path: Repository-relative posix path.
        action: ``create``, ``modify`` or ``delete``.
        expected_fingerprint: The file's fingerprint it was granted at (``None`` for create:
            the file must not exist).
        new_content: The file's new bytes (``None`` for delete); line endings as the file
            had them.
    """

    path: str
    action: FileAction
    expected_fingerprint: str | None
    new_content: bytes | None


@dataclass(frozen=True, slots=True)
class PatchIR:
    """A lowered patch: at most one change per path, in a stable order.

    Attributes:
        binding: The run whose grants authorised it.
        summary: The worker's summary.
        changes: The changes, sorted by path.
        verification_commands: The worker's suggested commands (the allowlist still decides).
    """

    binding: Binding
    summary: str
    changes: tuple[FileChange, ...]
    verification_commands: tuple[str, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        """The paths the patch touches."""
        return tuple(change.path for change in self.changes)
