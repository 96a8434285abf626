"""The fingerprint of a file in the user's tree, and the stale check of a patch against it.

The rule is the edit grants' (``grants/fingerprint.py``, used here): a tracked regular file's
fingerprint is the git blob id of its working bytes, where the bytes are tried as they are and
with CRLF turned into LF against the index entry (so a checkout under ``core.autocrlf`` still
matches its index entry); untracked files and symlinks get ``sha256:`` + the hex SHA-256 of
their raw bytes (a symlink: its target string). A file that does not exist has none.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from lattice_runtime.errors import StaleFileError, UnsafePathError
from lattice_runtime.grants import probe_fingerprint
from lattice_runtime.patch.ir import FileChange, PatchIR

__all__ = [
    "check_fingerprints",
    "current_fingerprint",
    "refuse_symlinked_parents",
    "safe_destination",
]


def current_fingerprint(repo_root: Path, path: str) -> str | None:
    """The fingerprint of ``path`` (repository-relative, posix) in the working tree.

    The grants' rule itself (:func:`lattice_runtime.grants.probe_fingerprint`), so a grant and
    the stale check can never disagree about the same bytes; ``None`` when nothing is there.
    """
    found = probe_fingerprint(repo_root, path)
    return None if found is None else found.value


def safe_destination(path: str) -> PurePosixPath:
    """``path`` as a relative posix path with no empty, ``.`` or ``..`` segment.

    Raises:
        UnsafePathError: ``path`` is absolute, empty, or climbs out of the tree, or names
            ``.git`` or ``.lattice``.
    """
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise UnsafePathError(f"patch path {path!r} is not a plain relative path")
    if parts[0] in (".git", ".lattice"):
        raise UnsafePathError(f"patch path {path!r} lies in the runtime's or git's directory")
    return PurePosixPath(path)


def check_fingerprints(repo_root: Path, patch: PatchIR) -> None:
    """Check every change of ``patch`` against the user's tree; read only, write nothing.

    A modify or delete must find the file at its expected fingerprint; a create must find no
    file (nor symlink) at its path; no change may pass through a symlinked directory.

    Raises:
        StaleFileError: a file changed since it was granted (or a create target exists).
        UnsafePathError: a path is not a plain relative path, or passes through a symlink.
        TransactionError: git could not read the index.
    """
    for change in patch.changes:
        refuse_symlinked_parents(repo_root, change.path)
        if not _matches(repo_root, change):
            raise StaleFileError(change.path)


def _matches(repo_root: Path, change: FileChange) -> bool:
    if change.action == "create":
        return not os.path.lexists(repo_root / change.path)
    expected = change.expected_fingerprint
    return expected is not None and current_fingerprint(repo_root, change.path) == expected


def refuse_symlinked_parents(root: Path, path: str) -> None:
    """Refuse ``path`` unless it is safe and no directory between ``root`` and it is a symlink.

    Raises:
        UnsafePathError: ``path`` is unsafe (:func:`safe_destination`) or passes a symlink.
    """
    current = root
    for part in safe_destination(path).parts[:-1]:
        current = current / part
        if current.is_symlink():
            raise UnsafePathError(f"patch path {path!r} passes through the symlink {current}")
