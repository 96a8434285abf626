"""The runtime's own directory (``.lattice/``) and atomic, symlink-refusing writes.

Every metadata file (run records, grant registries, sessions, worktree owner records) is
written through :func:`atomic_write`: a temporary file in the same directory, flushed, then
renamed over the destination, so a crash leaves the old file or the new one, never half of
one. A destination that is a symlink, or that lies under a symlinked directory inside the
repository, is refused: a planted link must not redirect the runtime's writes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Final

from lattice_runtime.errors import UnsafePathError

__all__ = ["LATTICE_DIR", "atomic_write", "lattice_dir"]

LATTICE_DIR: Final = ".lattice"
_EXCLUDE_LINE: Final = "/.lattice/"


def lattice_dir(repo_root: Path) -> Path:
    """Return ``<repo>/.lattice`` (made when missing), listed in ``.git/info/exclude``.

    Raises:
        UnsafePathError: ``.lattice`` is a symlink or not a directory.
    """
    root = repo_root.resolve()
    path = root / LATTICE_DIR
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise UnsafePathError(
            f"{path} is not a plain directory",
            hint="Remove it; the runtime keeps its metadata in a real .lattice directory.",
        )
    path.mkdir(exist_ok=True)
    _exclude(root)
    return path


def _exclude(root: Path) -> None:
    git_dir = root / ".git"
    if not git_dir.is_dir():  # a worktree or submodule: .git is a file; nothing to list
        return
    info = git_dir / "info"
    info.mkdir(exist_ok=True)
    exclude = info / "exclude"
    if exclude.is_symlink():
        raise UnsafePathError(f"{exclude} is a symlink", hint="Replace it with a plain file.")
    text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if _EXCLUDE_LINE in text.splitlines():
        return
    sep = "" if not text or text.endswith("\n") else "\n"
    atomic_write(exclude, f"{text}{sep}{_EXCLUDE_LINE}\n".encode(), root=root)


def atomic_write(path: Path, data: bytes, *, root: Path) -> None:
    """Write ``data`` to ``path`` atomically (temp file + rename).

    Args:
        path: The destination, inside ``root``.
        data: The bytes to write.
        root: The directory the destination must stay inside (the repository root).

    Raises:
        UnsafePathError: ``path`` is a symlink, a directory between ``root`` and ``path`` is a
            symlink, or ``path`` lies outside ``root``; nothing is written.
    """
    root = root.resolve()
    parent = Path(os.path.abspath(path.parent))
    try:
        relative = parent.relative_to(root)
    except ValueError:
        raise UnsafePathError(f"{path} lies outside {root}") from None
    current = root
    for part in relative.parts:
        current = current / part
        if current.is_symlink():
            raise UnsafePathError(f"{current} is a symlink; refusing to write through it")
    target = parent / path.name
    if target.is_symlink():
        raise UnsafePathError(f"{target} is a symlink; refusing to write through it")
    parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
