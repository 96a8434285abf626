"""The edit-grant registry of one run: handles ``E1``, ``E2``, ... and what each may do.

Handles are numbered in the order grants are made and never reused within a registry; a
registry belongs to one :class:`~lattice_runtime.grants.model.Binding` (task, session,
repository, base commit, epoch). Re-granting the same path, lines and fingerprint returns the
handle already issued, so a page served twice does not mint two handles for one authority.

On disk the registry is canonical JSON (sorted keys, no whitespace) wrapped with the SHA-256
of that canonical form::

    {"digest":"<sha256 hex>","registry":{"binding":{...},"grants":[...],"version":1}}

:meth:`GrantRegistry.load` recomputes the digest and refuses the file
(``registry_integrity``) when it differs or when anything in it is malformed: a registry edited
by hand (or by a worker) grants nothing.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from lattice_runtime._files import atomic_write
from lattice_runtime.errors import LoweringError
from lattice_runtime.grants import _codec
from lattice_runtime.grants.fingerprint import Fingerprint
from lattice_runtime.grants.model import HANDLE_PATTERN, Binding, EditGrant, Operation

__all__ = ["GrantRegistry"]


class GrantRegistry:
    """The grants issued in one run (one binding).

    Attributes:
        binding: The run every grant of this registry belongs to.
    """

    def __init__(self, binding: Binding, grants: tuple[EditGrant, ...] = ()) -> None:
        self.binding = binding
        self._grants: dict[str, EditGrant] = {grant.handle: grant for grant in grants}

    def grant(
        self,
        path: str,
        fingerprint: Fingerprint | str,
        lines: tuple[int, int] | None,
        operations: tuple[Operation, ...],
    ) -> EditGrant:
        """Issue the next handle for ``path`` (or return the live one already issued).

        Args:
            path: Repository-relative posix path.
            fingerprint: The file's fingerprint when granted.
            lines: ``(first, last)`` 1-based inclusive, or ``None`` for the whole file.
            operations: What the handle may do (:func:`.policy.operations_for`).
        """
        value = str(fingerprint)
        for existing in self._grants.values():
            if (
                not existing.invalidated
                and existing.path == path
                and existing.lines == lines
                and existing.fingerprint == value
            ):
                return existing
        handle = f"E{len(self._grants) + 1}"
        issued = EditGrant(handle, self.binding, path, value, lines, tuple(operations))
        self._grants[handle] = issued
        return issued

    def get(self, handle: str) -> EditGrant:
        """The grant behind ``handle`` (invalidated grants included).

        Raises:
            LoweringError: ``unknown_handle``: not of the form ``E<n>``, or never issued here.
        """
        if not HANDLE_PATTERN.match(handle) or handle not in self._grants:
            raise LoweringError(
                "unknown_handle",
                f"edit handle {handle!r} was not granted in this run",
                hint="Use only the edit handles listed with the pages you were shown.",
            )
        return self._grants[handle]

    def invalidate(self, handle: str) -> EditGrant:
        """Withdraw ``handle``; later uses are ``invalidated_handle``.

        Raises:
            LoweringError: ``unknown_handle`` (see :meth:`get`).
        """
        withdrawn = replace(self.get(handle), invalidated=True)
        self._grants[handle] = withdrawn
        return withdrawn

    def invalidate_path(self, path: str) -> tuple[EditGrant, ...]:
        """Withdraw every live handle on ``path`` (its file changed); returns them."""
        live = [g.handle for g in self._grants.values() if g.path == path and not g.invalidated]
        return tuple(self.invalidate(handle) for handle in live)

    def grants(self) -> tuple[EditGrant, ...]:
        """Every grant issued, in handle order."""
        return tuple(self._grants.values())

    def save(self, path: Path, *, root: Path) -> None:
        """Write the registry with its digest atomically (see the module docstring).

        Args:
            path: The destination file (under ``.lattice/``).
            root: The directory the destination must stay inside.

        Raises:
            UnsafePathError: The destination is a symlink or outside ``root``.
        """
        record = _codec.encode(self.binding, self.grants())
        wrapped = {"digest": _codec.digest(record), "registry": record}
        atomic_write(path, _codec.canonical(wrapped), root=root)

    @classmethod
    def load(cls, path: Path) -> GrantRegistry:
        """Read a registry :meth:`save` wrote, after checking its digest.

        Raises:
            LoweringError: ``registry_integrity``: the file is missing, a symlink, not JSON,
                malformed, or its digest does not match its content.
        """
        try:
            if path.is_symlink():
                raise ValueError("the registry file is a symlink")
            wrapped = json.loads(path.read_bytes())
            if not isinstance(wrapped, dict) or set(wrapped) != {"digest", "registry"}:
                raise ValueError("expected exactly digest and registry")
            record = wrapped["registry"]
            if wrapped["digest"] != _codec.digest(record):
                raise ValueError("the digest does not match the content")
            binding, grants = _codec.decode(record)
        except (OSError, ValueError, RecursionError) as exc:
            raise LoweringError(
                "registry_integrity",
                f"grant registry {path} is not intact: {exc}",
                hint="Start the run again; its grants cannot be trusted.",
            ) from None
        return cls(binding, grants)
