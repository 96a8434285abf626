"""Reproducing the user's working state in a worktree, and linking its environment.

A worktree starts as a checkout of ``HEAD``. The user's uncommitted work is then copied in
byte for byte: every path ``git diff HEAD`` names (modified, added, deleted, type-changed) and
every untracked file that is not ignored (``git ls-files --others --exclude-standard``). A
path that no longer exists in the user's tree is deleted in the worktree; a symlink is
recreated with the same target; a regular file keeps its bytes and executable bit. Copying
files, rather than replaying a diff, keeps the bytes exact whatever the filters and line-ending
settings, and never fails on a binary or partially staged change.

Environment directories are linked, not copied: each top-level name in
:data:`ENVIRONMENT_DIRS` that is a directory in the user's tree and absent from the worktree
becomes a symlink to the user's directory, so tests run with the user's installed packages.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Final

from lattice_runtime._files import LATTICE_DIR
from lattice_runtime.verify._git import git, nul_split

__all__ = ["ENVIRONMENT_DIRS", "link_environment", "reproduce_state"]

ENVIRONMENT_DIRS: Final[tuple[str, ...]] = (".venv", "venv", "node_modules", ".tox", ".nox")
"""Top-level directories linked into the worktree instead of copied."""


def link_environment(repo_root: Path, worktree: Path) -> tuple[str, ...]:
    """Link each environment directory of ``repo_root`` into ``worktree``.

    Returns:
        The names linked, in :data:`ENVIRONMENT_DIRS` order.
    """
    linked: list[str] = []
    for name in ENVIRONMENT_DIRS:
        source = repo_root / name
        target = worktree / name
        if source.is_dir() and not os.path.lexists(target):
            target.symlink_to(source.resolve(), target_is_directory=True)
            linked.append(name)
    return tuple(linked)


def reproduce_state(repo_root: Path, worktree: Path) -> tuple[str, ...]:
    """Copy the user's uncommitted and untracked (not ignored) files into ``worktree``.

    Paths under an environment directory or ``.lattice`` are skipped (they are linked or are
    the runtime's own).

    Returns:
        The paths copied or deleted, sorted.

    Raises:
        TransactionError: git could not list the changes.
    """
    changed = nul_split(
        git(repo_root, "diff", "HEAD", "--name-only", "--no-renames", "-z", "--no-relative").stdout
    )
    untracked = nul_split(git(repo_root, "ls-files", "--others", "--exclude-standard", "-z").stdout)
    skipped = {*ENVIRONMENT_DIRS, LATTICE_DIR}
    paths = sorted({p for p in (*changed, *untracked) if p.split("/")[0] not in skipped})
    for path in paths:
        source = repo_root / path
        try:
            info = source.lstat()
        except (FileNotFoundError, NotADirectoryError):
            _remove(worktree, path)
            continue
        if not stat.S_ISDIR(info.st_mode):  # a directory here is a submodule: not reproduced
            _copy(source, info, _plain_parents(worktree, path))
    return tuple(paths)


def _plain_parents(worktree: Path, path: str) -> Path:
    """``worktree / path``, after turning any symlink or file among its parents into a directory.

    The user's tree has real directories there (git lists no file behind a symlink), and a
    link left over from ``HEAD`` must never carry a copy outside the worktree.
    """
    current = worktree
    for part in path.split("/")[:-1]:
        current = current / part
        if current.is_symlink() or current.is_file():
            current.unlink()
        current.mkdir(exist_ok=True)
    return worktree / path


def _remove(worktree: Path, path: str) -> None:
    """Delete ``path`` in the worktree, unless a parent is no plain directory (nothing to do)."""
    current = worktree
    for part in path.split("/")[:-1]:
        current = current / part
        if current.is_symlink() or not current.is_dir():
            return
    _clear(worktree / path)


def _copy(source: Path, info: os.stat_result, target: Path) -> None:
    """Make ``target`` what ``source`` is: the same bytes and mode, or the same link."""
    _clear(target)
    if stat.S_ISLNK(info.st_mode):
        target.symlink_to(os.readlink(source))
    elif stat.S_ISREG(info.st_mode):
        shutil.copyfile(source, target, follow_symlinks=False)
        os.chmod(target, stat.S_IMODE(info.st_mode))


def _clear(target: Path) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
