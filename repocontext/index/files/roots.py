"""Repository roots and the paths under them: what may be indexed, what a caller's path names.

A root is registered resolved (every symlink followed) and refused when it is the filesystem
root, the home directory or not valid UTF-8 (:func:`check_root`); before each run it is checked
again, so a directory swapped for a symlink since is not walked through (:func:`checked_root`).
A caller's file path (relative, ``./``-prefixed, absolute, through a symlinked root) becomes
the key path of its file node (:func:`file_path`).
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from repocontext.errors import (
    DangerousRootError,
    InvalidInputError,
    PathNotFoundError,
    PathOutsideWorkspaceError,
    RootChangedError,
)

__all__ = [
    "check_root",
    "checked_root",
    "file_path",
    "is_directory",
    "is_under",
    "is_utf8",
    "printable_path",
    "refuse_dangerous",
    "resolve_path",
]


def check_root(root: Path) -> Path:
    """Resolve a repository root and refuse dangerous ones.

    Raises:
        PathNotFoundError: The root is not an existing directory.
        DangerousRootError: The root is the filesystem root or the home directory.
        InvalidInputError: The root's path is not valid UTF-8 (no record can hold it).
    """
    resolved = resolve_path(root)
    refuse_dangerous(resolved)
    if not is_directory(resolved):
        raise PathNotFoundError(f"{str(resolved)[:200]} is not an existing directory")
    if not is_utf8(str(resolved)):
        raise InvalidInputError(
            f"the repository path {printable_path(str(resolved))[:200]} is not valid UTF-8",
            hint="Rename the directory (or the parent whose name is not UTF-8): the index "
            "records its root as text.",
        )
    return resolved


def resolve_path(path: Path | str) -> Path:
    """``path`` made absolute with ``~`` expanded and every symlink resolved.

    Raises:
        PathNotFoundError: The path runs into a symlink loop.
    """
    try:
        return Path(path).expanduser().resolve()
    except (RuntimeError, OSError) as exc:  # RuntimeError: a symlink loop (Python 3.11)
        raise PathNotFoundError(
            f"{path} cannot be resolved: {exc}",
            hint="The path runs into a symlink loop; point at a real directory.",
        ) from exc


def is_directory(path: Path) -> bool:
    """``path.is_dir()``, False for a path the system refuses (a name too long, say)."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def refuse_dangerous(resolved: Path) -> None:
    """Refuse the filesystem root and the home directory as repository roots.

    Raises:
        DangerousRootError: ``resolved`` is one of them.
    """
    if resolved == Path(resolved.anchor) or resolved == Path.home().resolve():
        raise DangerousRootError(
            f"refusing to index {resolved}: it is the filesystem root or the home directory",
            hint="Point at a repository directory instead.",
        )


def printable_path(rel: str) -> str:
    """``rel`` with the bytes of a name that is not valid UTF-8 written as escapes."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def is_utf8(rel: str) -> bool:
    """Whether ``rel`` encodes as UTF-8 (a name decoded with ``surrogateescape`` does not)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:  # a name decoded with surrogateescape
        return False
    return True


def file_path(root: str, path: str) -> str:
    """A caller's file path as the repository-relative key path of its node.

    ``root`` is the registered root (stored resolved). ``./a.py``, ``pkg//util.py`` and an
    absolute path under it name the same file as ``a.py`` / ``pkg/util.py``; so does an
    absolute path through a symlink to the root or to a directory above it. The file's own
    name is not resolved: nodes are kept under the path the walk listed.

    Raises:
        InvalidInputError: The path is empty or names the root.
        PathOutsideWorkspaceError: The path leads outside the repository root.
    """
    if not path.strip():
        raise InvalidInputError("the file path is empty", hint="Pass a file of the repository.")
    normal = posixpath.normpath(path.replace(os.sep, "/"))
    if posixpath.isabs(normal):
        if root and not is_under(normal, root):  # through a symlinked directory, maybe
            head, name = posixpath.split(normal)
            normal = posixpath.join(os.path.realpath(head), name)
        if not root or not is_under(normal, root):
            raise PathOutsideWorkspaceError(
                f"{path[:200]} is not under the repository root {root}",
                hint="Pass a path relative to the repository root.",
            )
        normal = posixpath.relpath(normal, root)
    if normal == ".":
        raise InvalidInputError(f"{path!r} names no file", hint="Pass a file of the repository.")
    if normal == ".." or normal.startswith("../"):
        raise PathOutsideWorkspaceError(
            f"{path[:200]} leads outside the repository",
            hint="Pass a path relative to the repository root.",
        )
    return normal


def checked_root(repo_id: str, registered_root: str, root: Path) -> Path:
    """``root`` when it is still the registered directory (``registered_root``), symlink-free.

    Registration checked the realpath; a directory swapped for a symlink since (to a tree
    outside the workspace, say) must not be walked through.

    Raises:
        RootChangedError: ``root`` now resolves elsewhere, or is not the registered root.
        PathNotFoundError: ``root`` is gone.
    """
    registered = Path(registered_root)
    resolved = resolve_path(root)
    if resolved != registered or root != registered:
        raise RootChangedError(
            f"the root of repository {repo_id!r}, {registered}, now resolves to {resolved}"
        )
    if not resolved.is_dir():
        raise PathNotFoundError(f"the root of repository {repo_id!r}, {root}, is gone")
    return resolved


def is_under(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or inside it (both absolute, normalised)."""
    return (path + "/").startswith(root.rstrip("/") + "/")
