"""The rules for ``create_file``'s path, the only path a worker ever names.

Checked in this order (the first broken rule is the reason):

1. the path's shape, checked with the other identity rules before any file or git is read
   (``unsafe_destination``: absolute, empty/``.``/``..`` segments, a segment starting with
   ``.``, backslash, NUL or another control character);
2. the file class (``protected_destination``: a test or configuration file);
3. the way to its parent (``unsafe_destination``: a symlinked or non-directory component, so
   the parent cannot resolve outside the repository);
4. the ignore rules (``unsafe_destination``: ``git check-ignore``);
5. existence (``destination_exists``: on disk or in the index).
"""

from __future__ import annotations

import os
from pathlib import Path

from lattice_runtime.errors import LoweringError
from lattice_runtime.grants import IndexSnapshot, is_ignored, is_protected

__all__ = ["check_destination", "check_shape"]

_HINT = "Create files only at plain relative paths inside the repository's source tree."


def check_destination(repo_root: Path, path: str, index: IndexSnapshot) -> None:
    """Refuse ``path`` as a ``create_file`` destination unless every rule holds.

    The path's shape was checked already (:func:`check_shape`, before any git call).

    Raises:
        LoweringError: ``unsafe_destination``, ``protected_destination`` or
            ``destination_exists``.
    """
    if is_protected(path):
        raise LoweringError(
            "protected_destination",
            f"create_file {path!r}: tests and configuration are not writable by the worker",
            hint="Put new code in a source file; tests and configuration are the verdict.",
        )
    _check_parent(repo_root, path)
    if is_ignored(repo_root, path):
        raise _unsafe(path, "the path is ignored by git")
    if os.path.lexists(repo_root / path) or index.entry(path) is not None:
        raise LoweringError(
            "destination_exists",
            f"create_file {path!r}: the file already exists",
            hint="Edit an existing file through its edit handle instead.",
        )


def _unsafe(path: str, why: str) -> LoweringError:
    return LoweringError("unsafe_destination", f"create_file {path!r}: {why}", hint=_HINT)


def check_shape(path: str) -> None:
    """Refuse a path that is not a plain relative posix path (``unsafe_destination``)."""
    if not path or path.startswith("/"):
        raise _unsafe(path, "the path must be relative and non-empty")
    if "\\" in path or any(ord(char) < 0x20 or char == "\x7f" for char in path):
        raise _unsafe(path, "the path contains a backslash or a control character")
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            raise _unsafe(path, "the path has an empty, '.' or '..' segment")
        if segment.startswith("."):
            raise _unsafe(path, "a segment starts with '.' (hidden files are not created)")


def _check_parent(repo_root: Path, path: str) -> None:
    """Every existing directory on the way is a real directory, not a symlink.

    Refusing any symlinked component (rather than resolving it and checking where it lands)
    keeps the parent inside the repository and keeps the path one git itself can apply.
    """
    root = repo_root.resolve()
    current = root
    for segment in path.split("/")[:-1]:
        current = current / segment
        if current.is_symlink():
            raise _unsafe(path, f"{segment!r} on the way is a symlink")
        if current.exists() and not current.is_dir():
            raise _unsafe(path, f"{segment!r} on the way is not a directory")
