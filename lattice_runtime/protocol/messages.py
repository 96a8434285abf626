"""The worker wire protocol's messages, as typed values (prompt protocol version 5).

A worker answers a turn with exactly one JSON object, either a context request or a patch
(``docs/lattice.md``, "Worker protocol"). :mod:`.parse` turns the raw text into one of the
types below or raises :class:`~lattice_runtime.errors.ProtocolError`; nothing else in the
runtime reads worker JSON. These are *proposals*: lowering (:mod:`lattice_runtime.patch`)
checks every one of them against the edit grants before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "PROTOCOL_VERSION",
    "Change",
    "ContextRequest",
    "ContextRequestItem",
    "CreateFile",
    "DeleteFile",
    "PatchProposal",
    "ReplaceFile",
    "ReplaceText",
    "Replacement",
    "WorkerResponse",
]

PROTOCOL_VERSION: Final = 5


@dataclass(frozen=True, slots=True)
class ContextRequestItem:
    """One thing the worker asks to see; at least one of ``path_hint`` and ``symbol``.

    Attributes:
        reason: Why the worker needs it.
        path_hint: A repository path, or part of one.
        symbol: A symbol name (``name`` or ``Class.method``).
    """

    reason: str
    path_hint: str | None = None
    symbol: str | None = None


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """``{"kind": "context_request", "requests": [...]}`` (one request or more)."""

    requests: tuple[ContextRequestItem, ...]


@dataclass(frozen=True, slots=True)
class Replacement:
    """Replace ``old_content`` (exactly once, inside the grant) with ``new_content``."""

    old_content: str
    new_content: str


@dataclass(frozen=True, slots=True)
class ReplaceText:
    """``{"editHandle", "operation": "replace_text", "replacements": [...]}``."""

    edit_handle: str
    replacements: tuple[Replacement, ...]


@dataclass(frozen=True, slots=True)
class ReplaceFile:
    """``{"editHandle", "operation": "replace_file", "replacementContent"}``."""

    edit_handle: str
    replacement_content: str


@dataclass(frozen=True, slots=True)
class DeleteFile:
    """``{"editHandle", "operation": "delete_file"}``."""

    edit_handle: str


@dataclass(frozen=True, slots=True)
class CreateFile:
    """``{"operation": "create_file", "path", "content"}``: the only path-carrying operation."""

    path: str
    content: str


Change = ReplaceText | ReplaceFile | DeleteFile | CreateFile
"""One proposed change of a patch."""


@dataclass(frozen=True, slots=True)
class PatchProposal:
    """``{"kind": "patch", "patch": {"summary", "changes", "verificationCommands"}}``.

    Attributes:
        summary: What the patch does, in the worker's words.
        changes: The proposed changes, in order (one change or more).
        verification_commands: Commands the worker suggests; only allowlisted ones ever run.
    """

    summary: str
    changes: tuple[Change, ...]
    verification_commands: tuple[str, ...] = ()


WorkerResponse = ContextRequest | PatchProposal
"""What a worker turn yields once parsed and validated."""
