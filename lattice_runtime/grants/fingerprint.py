"""File fingerprints: which bytes a grant was made on, checked again before anything is written.

A tracked regular file's fingerprint is a git blob id of its working bytes. Which bytes git
would store depends on ``core.autocrlf``: with ``false`` the bytes as they are, with ``true``
or ``input`` the bytes with CRLF turned into LF. Rather than trust the current setting (a user
may have changed it since checkout), every policy is probed against the index entry's blob id:
the policy whose blob id equals the entry wins, so an unmodified CRLF checkout of an LF blob
fingerprints as that blob. When no policy matches (the file was edited), the fingerprint is
the blob id of the raw working bytes. Untracked files and symlinks get ``sha256:<hex>`` of
their raw bytes (a symlink: of its target string); they are read-only anyway.

Blob ids are computed here (SHA-1 of ``blob <size>``, a NUL byte and the data; SHA-256 in a
repository whose index holds 64-digit ids); git is asked only for the index, once per batch
(:func:`index_snapshot`).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lattice_runtime.errors import StaleFileError
from lattice_runtime.grants._git import IndexEntry, read_index

__all__ = [
    "Fingerprint",
    "FingerprintKind",
    "IndexSnapshot",
    "blob_id",
    "fingerprint",
    "index_snapshot",
    "probe_fingerprint",
    "read_fingerprinted",
]

FingerprintKind = Literal["blob", "sha256"]

_SHA256_PREFIX = "sha256:"
_SHA256_HEX_DIGITS = 64


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """A file's fingerprint.

    Attributes:
        value: A blob id (40 or 64 hex digits) or ``sha256:<hex>``.
        kind: ``blob`` (a tracked regular file) or ``sha256`` (untracked file, symlink).
        tracked: The path has an entry in the index.
    """

    value: str
    kind: FingerprintKind
    tracked: bool

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class IndexSnapshot:
    """The index entries read once for a batch of fingerprints (path -> entry)."""

    entries: Mapping[str, IndexEntry]

    def entry(self, path: str) -> IndexEntry | None:
        """The path's index entry, or ``None`` when it is untracked."""
        return self.entries.get(path)


def index_snapshot(repo_root: Path, paths: Sequence[str] = ()) -> IndexSnapshot:
    """Read the index with one ``git ls-files -s -z`` (only ``paths`` when given).

    A directory that is not a git work tree has an empty index: every file is untracked.
    """
    return IndexSnapshot(read_index(repo_root, paths) or {})


def blob_id(data: bytes, *, sha256: bool = False) -> str:
    """Git's object id of a blob holding ``data`` (SHA-1, or SHA-256 repositories' form)."""
    header = b"blob %d\0" % len(data)
    if sha256:
        return hashlib.sha256(header + data).hexdigest()
    return hashlib.sha1(header + data, usedforsecurity=False).hexdigest()


def probe_fingerprint(
    repo_root: Path, path: str, *, index: IndexSnapshot | None = None
) -> Fingerprint | None:
    """The file's fingerprint now, or ``None`` when nothing fingerprintable is at ``path``.

    Absence (no file, or a directory) is a normal answer here: lowering treats it as a
    changed file, granting never asks for it.

    Args:
        repo_root: The repository's work tree.
        path: Repository-relative posix path.
        index: The index read for the batch; read for this one path when omitted.
    """
    read = read_fingerprinted(repo_root, path, index=index)
    return None if read is None else read[0]


def read_fingerprinted(
    repo_root: Path, path: str, *, index: IndexSnapshot | None = None
) -> tuple[Fingerprint, bytes] | None:
    """The fingerprint and the very bytes it was computed on (one read, no race between them).

    For a symlink the bytes are its target string. ``None`` when nothing fingerprintable is at
    ``path`` (see :func:`probe_fingerprint`).

    Args:
        repo_root: The repository's work tree.
        path: Repository-relative posix path.
        index: The index read for the batch; read for this one path when omitted.
    """
    snapshot = index if index is not None else index_snapshot(repo_root, (path,))
    entry = snapshot.entry(path)
    target = repo_root / path
    try:
        info = target.lstat()
        if stat.S_ISLNK(info.st_mode):
            link = os.fsencode(os.readlink(target))
            return Fingerprint(_raw_sha256(link), "sha256", entry is not None), link
        if not stat.S_ISREG(info.st_mode):
            return None
        data = target.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    if entry is None or entry.symlink:
        return Fingerprint(_raw_sha256(data), "sha256", entry is not None), data
    return Fingerprint(_probe_blob(data, entry.blob), "blob", True), data


def fingerprint(repo_root: Path, path: str, *, index: IndexSnapshot | None = None) -> Fingerprint:
    """The file's fingerprint now (see the module docstring for the rules).

    Args:
        repo_root: The repository's work tree.
        path: Repository-relative posix path.
        index: The index read for the batch; read for this one path when omitted.

    Raises:
        StaleFileError: No regular file or symlink is at ``path`` (it was removed, or is a
            directory).
    """
    found = probe_fingerprint(repo_root, path, index=index)
    if found is None:
        raise StaleFileError(path, f"{path} does not exist (or is not a file)")
    return found


def _raw_sha256(data: bytes) -> str:
    return _SHA256_PREFIX + hashlib.sha256(data).hexdigest()


def _probe_blob(data: bytes, indexed: str | None) -> str:
    """The blob id under the ``core.autocrlf`` policy that reproduces the index entry."""
    sha256 = indexed is not None and len(indexed) == _SHA256_HEX_DIGITS
    raw = blob_id(data, sha256=sha256)  # core.autocrlf=false: the bytes as they are
    if indexed is None or raw == indexed:
        return raw
    # core.autocrlf=true and =input store the same thing: CRLF converted to LF.
    converted = data.replace(b"\r\n", b"\n")
    if converted != data:
        normalized = blob_id(converted, sha256=sha256)
        if normalized == indexed:
            return normalized
    return raw
