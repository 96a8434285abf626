"""File fingerprints: git blob ids computed in process, git's index entries, stat tuples.

The blob id of the working bytes is what ``git hash-object`` prints, so a file whose id equals
its index entry is unmodified relative to the index. The stat tuple (size, mtime_ns, inode)
is the fast path: when it matches the stored one the file is not read at all.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Final

__all__ = ["BINARY_PROBE_BYTES", "git_blob_id", "git_index_blobs", "is_binary", "is_binary_file"]

BINARY_PROBE_BYTES: Final = 8192


def git_blob_id(data: bytes) -> str:
    """Return the git blob id (SHA-1 of ``blob <size>`` NUL + bytes) of ``data``."""
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


def is_binary(data: bytes) -> bool:
    """Return True when the first 8 KiB hold a NUL byte."""
    return b"\0" in data[:BINARY_PROBE_BYTES]


def is_binary_file(path: Path) -> bool:
    """Return True when the file's first 8 KiB hold a NUL byte (False when it can't be read)."""
    try:
        with open(path, "rb") as handle:
            return is_binary(handle.read(BINARY_PROBE_BYTES))
    except OSError:
        return False


def git_index_blobs(root: Path) -> dict[str, str]:
    """Return ``path -> blob id`` of git's index for the work tree at ``root`` (empty if none)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-s", "-z"],
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    if out.returncode != 0:
        return {}
    blobs: dict[str, str] = {}
    for record in out.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        parts = meta.split()
        if len(parts) >= 3 and parts[2] == b"0":
            blobs[name.decode("utf-8", "surrogateescape")] = parts[1].decode()
    return blobs
