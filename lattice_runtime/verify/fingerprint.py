"""The fingerprint of a file in the user's tree, and the stale check of a patch against it.

The rule matches the edit grants' (``grants/fingerprint.py``): a tracked regular file's
fingerprint is the git blob id of its working bytes, where the bytes are tried as they are and
with CRLF turned into LF against the index entry (so a checkout under ``core.autocrlf`` still
matches its index entry); untracked files and symlinks get ``sha256:`` + the hex SHA-256 of
their raw bytes (a symlink: its target string). A file that does not exist has none.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path, PurePosixPath

from lattice_runtime.errors import StaleFileError, UnsafePathError
from lattice_runtime.patch.ir import FileChange, PatchIR
from lattice_runtime.verify._git import git, literal

__all__ = [
    "check_fingerprints",
    "current_fingerprint",
    "refuse_symlinked_parents",
    "safe_destination",
]


def blob_id(data: bytes) -> str:
    """The git blob id (SHA-1) of ``data``."""
    header = f"blob {len(data)}\0".encode()
    return hashlib.sha1(header + data, usedforsecurity=False).hexdigest()


def current_fingerprint(repo_root: Path, path: str) -> str | None:
    """The fingerprint of ``path`` (repository-relative, posix) in the working tree.

    Raises:
        TransactionError: git could not read the index.
    """
    full = repo_root / path
    try:
        info = full.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(info.st_mode):
        target = os.fsencode(os.readlink(full))
        return "sha256:" + hashlib.sha256(target).hexdigest()
    if not stat.S_ISREG(info.st_mode):
        return None
    data = full.read_bytes()
    indexed = _index_blob(repo_root, path)
    if indexed is None:
        return "sha256:" + hashlib.sha256(data).hexdigest()
    raw = blob_id(data)
    if indexed in (raw, blob_id(data.replace(b"\r\n", b"\n"))):
        return indexed
    return raw


def _index_blob(repo_root: Path, path: str) -> str | None:
    """The blob id of ``path``'s stage-0 index entry, if it is a tracked regular file."""
    out = git(repo_root, "ls-files", "-s", "-z", "--", *literal([path])).stdout
    for record in out.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        fields = meta.split()
        if os.fsdecode(name) == path and len(fields) == 3 and fields[0] in (b"100644", b"100755"):
            return fields[1].decode("ascii")
    return None


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
