"""A digest of a git working tree's state, to see whether anything changed it during a turn.

The digest covers ``HEAD``, ``git status`` (untracked files listed one by one, ignored files
left out) and the bytes of every path the status names, so a file that was already modified
and is modified again still changes the digest. Files git ignores (``.lattice/`` among them)
are outside it.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

__all__ = ["tree_state"]


def tree_state(root: Path) -> str | None:
    """The digest of the working tree at ``root``; None when ``root`` is not in a git tree."""
    top = _git(root, "rev-parse", "--show-toplevel")
    status = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    if top is None or status is None:
        return None
    top_dir = Path(top.decode("utf-8", "surrogateescape").strip())
    head = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    digest = hashlib.sha256()
    digest.update(head or b"no HEAD")
    digest.update(b"\0\0")
    digest.update(status)
    for token in status.split(b"\0"):
        # "XY path" entries; a rename's second token is the bare old path.
        name = token[3:] if len(token) > 3 and token[2:3] == b" " else token
        if name:
            digest.update(_content(top_dir / name.decode("utf-8", "surrogateescape")))
    return digest.hexdigest()


def _content(path: Path) -> bytes:
    try:
        if path.is_symlink():
            return b"link:" + str(path.readlink()).encode("utf-8", "surrogateescape")
        if path.is_file():
            return b"file:" + hashlib.sha256(path.read_bytes()).digest()
    except OSError:  # vanished or unreadable between the status and the read
        return b"unreadable"
    return b"other"


def _git(root: Path, *args: str) -> bytes | None:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None
