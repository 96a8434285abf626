"""Lowering: a worker's patch proposal, checked against its edit grants, into the patch IR.

The proposal names handles and text; lowering decides what that means on disk. In order:

1. the run: a workspace (``workspace_required``), then the registry's binding against the
   run's (``task_mismatch``, ``session_mismatch``, ``repository_mismatch``,
   ``base_commit_mismatch``, ``epoch_mismatch``);
2. the changes' identities: a known change type (``unsupported_operation``), a granted handle
   (``unknown_handle``), used once (``duplicate_handle``), still live
   (``invalidated_handle``), a plain relative ``create_file`` path (``unsafe_destination``),
   one change per path (``duplicate_path``);
3. each change: ``create_file``'s destination rules (:mod:`._destination`); for a handle, the
   operation among the grant's (``permission_denied``), the file's fingerprint still the
   grant's (else ``invalidated_handle``, and every handle on that file is withdrawn), then
   the replacements (:mod:`._text`).

The first broken rule raises :class:`~lattice_runtime.errors.LoweringError` with its reason;
nothing is written by lowering, ever. Withdrawn handles are withdrawn in ``registry``; the
caller saves it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from lattice_runtime.errors import LoweringError, LoweringReason
from lattice_runtime.grants import (
    Binding,
    EditGrant,
    GrantRegistry,
    IndexSnapshot,
    index_snapshot,
    read_fingerprinted,
)
from lattice_runtime.patch._destination import check_destination, check_shape
from lattice_runtime.patch._text import line_break, replace_text, restyle
from lattice_runtime.patch.ir import FileChange, PatchIR
from lattice_runtime.protocol import TRANSACTION_FIELDS
from lattice_runtime.protocol.messages import (
    Change,
    CreateFile,
    DeleteFile,
    PatchProposal,
    ReplaceFile,
    ReplaceText,
)

__all__ = ["TRANSACTION_FIELDS", "lower", "reject_transaction_fields"]

ChangeOperation = Literal["replace_text", "replace_file", "delete_file", "create_file"]

_OPERATION_OF: Final[dict[type[object], ChangeOperation]] = {
    ReplaceText: "replace_text",
    ReplaceFile: "replace_file",
    DeleteFile: "delete_file",
    CreateFile: "create_file",
}

_BINDING_CHECKS: Final[tuple[tuple[LoweringReason, str, str], ...]] = (
    ("task_mismatch", "task_id", "task"),
    ("session_mismatch", "session_id", "session"),
    ("repository_mismatch", "repository_id", "repository"),
    ("base_commit_mismatch", "base_commit", "base commit"),
    ("epoch_mismatch", "epoch", "epoch"),
)


Edit = ReplaceText | ReplaceFile | DeleteFile


@dataclass(frozen=True, slots=True)
class _Edit:
    """A handle-carrying change with the grant its handle names."""

    change: Edit
    grant: EditGrant

    @property
    def path(self) -> str:
        return self.grant.path


def reject_transaction_fields(keys: Iterable[str]) -> None:
    """Refuse a proposal (or one of its changes) that carries transaction fields.

    The hook for the wire parser (:mod:`lattice_runtime.protocol`) to call on every patch and
    change object *before* its strict-key check, so a worker that tries to set a fingerprint,
    base commit, epoch or binding gets this specific reason rather than a generic schema
    error. Lowering itself never sees raw keys: the parsed messages have no such fields.

    Raises:
        LoweringError: ``provider_transaction_field``: one of :data:`TRANSACTION_FIELDS` is
            among ``keys``.
    """
    carried = sorted(set(keys) & TRANSACTION_FIELDS)
    if carried:
        raise LoweringError(
            "provider_transaction_field",
            f"the proposal carries transaction fields {carried}; only the runtime sets them",
            hint="Name edits by their edit handle only; drop " + ", ".join(carried) + ".",
        )


def lower(
    proposal: PatchProposal,
    registry: GrantRegistry,
    binding: Binding | None,
    repo_root: Path | None,
) -> PatchIR:
    """Check ``proposal`` against ``registry`` and build the patch IR.

    Args:
        proposal: The worker's parsed patch.
        registry: The run's grants (a handle whose file changed is withdrawn in it).
        binding: The run lowering happens in; ``None`` outside a run.
        repo_root: The repository's work tree; ``None`` without a workspace.

    Returns:
        The patch IR, changes sorted by path.

    Raises:
        LoweringError: With the first broken rule's reason (see the module docstring and
            ``docs/lattice-grants.md``).
    """
    if binding is None or repo_root is None or not (repo_root / ".git").exists():
        raise LoweringError(
            "workspace_required",
            "lowering needs a run binding and a git work tree",
            hint="Run the task inside a repository workspace.",
        )
    _check_binding(registry.binding, binding)
    root = repo_root.resolve()
    resolved = _resolve(proposal.changes, registry)
    index = index_snapshot(root, [item.path for item in resolved])
    changes = [
        _lower_create(root, item, index)
        if isinstance(item, CreateFile)
        else _lower_edit(root, item, registry, index)
        for item in resolved
    ]
    return PatchIR(
        binding=binding,
        summary=proposal.summary,
        changes=tuple(sorted(changes, key=lambda change: change.path)),
        verification_commands=proposal.verification_commands,
    )


def _check_binding(granted: Binding, run: Binding) -> None:
    for reason, field, label in _BINDING_CHECKS:
        if getattr(granted, field) != getattr(run, field):
            raise LoweringError(
                reason,
                f"the edit grants belong to another {label} than this run's",
                hint="Use only the handles granted in this run.",
            )


def _resolve(changes: Sequence[Change], registry: GrantRegistry) -> list[CreateFile | _Edit]:
    """Each change with its grant; identity rules checked before any file is read."""
    handles: set[str] = set()
    paths: set[str] = set()
    resolved: list[CreateFile | _Edit] = []
    for change in changes:
        operation = _OPERATION_OF.get(type(change))
        if operation is None:
            raise LoweringError(
                "unsupported_operation",
                f"{type(change).__name__} is not an operation lowering knows",
                hint="Use replace_text, replace_file, delete_file or create_file.",
            )
        if isinstance(change, CreateFile):
            check_shape(change.path)
            item: CreateFile | _Edit = change
        else:
            item = _Edit(change, _grant_of(change, registry, handles))
        if item.path in paths:
            raise LoweringError(
                "duplicate_path",
                f"two changes touch {item.path!r}",
                hint="Put every edit of one file into a single change.",
            )
        paths.add(item.path)
        resolved.append(item)
    return resolved


def _grant_of(change: Edit, registry: GrantRegistry, seen: set[str]) -> EditGrant:
    handle = change.edit_handle
    if handle in seen:
        raise LoweringError(
            "duplicate_handle",
            f"edit handle {handle} is used by two changes",
            hint="Put every edit of one handle into a single change.",
        )
    seen.add(handle)
    grant = registry.get(handle)
    if grant.invalidated:
        raise _invalidated(grant, "it was withdrawn")
    return grant


def _invalidated(grant: EditGrant, why: str) -> LoweringError:
    return LoweringError(
        "invalidated_handle",
        f"edit handle {grant.handle} ({grant.path}) is no longer valid: {why}",
        hint="Ask for the file again; it will come with a fresh handle.",
    )


def _lower_create(root: Path, change: CreateFile, index: IndexSnapshot) -> FileChange:
    """Lower a ``create_file`` after its destination rules (:mod:`._destination`).

    Raises:
        LoweringError: ``unsafe_destination``, ``protected_destination`` or
            ``destination_exists``.
    """
    check_destination(root, change.path, index)
    return FileChange(change.path, "create", None, change.content.encode())


def _lower_edit(
    root: Path, item: _Edit, registry: GrantRegistry, index: IndexSnapshot
) -> FileChange:
    change, grant = item.change, item.grant
    operation = _OPERATION_OF[type(change)]
    if operation not in grant.operations:
        allowed = ", ".join(grant.operations) or "nothing (the file is read-only)"
        raise LoweringError(
            "permission_denied",
            f"edit handle {grant.handle} ({grant.path}) does not allow {operation}; "
            f"it allows {allowed}",
            hint="Tests, configuration, untracked files and symlinks are read-only.",
        )
    current = read_fingerprinted(root, grant.path, index=index)
    if current is None or current[0].value != grant.fingerprint:
        registry.invalidate_path(grant.path)  # every handle on the file saw the old bytes
        raise _invalidated(grant, "the file changed since it was granted")
    data = current[1]
    if isinstance(change, DeleteFile):
        return FileChange(grant.path, "delete", grant.fingerprint, None)
    if isinstance(change, ReplaceFile):
        style = line_break(data.decode("utf-8", "surrogateescape"))
        content = restyle(change.replacement_content, style).encode("utf-8", "surrogateescape")
        return FileChange(grant.path, "modify", grant.fingerprint, content)
    new = replace_text(grant.path, data, change.replacements, grant.lines)
    return FileChange(grant.path, "modify", grant.fingerprint, new)
