"""Archive files: an atomic export of chosen trees, and an idempotent CRDT import.

Format (version 1)::

    b"RCARCH01"                                     magic
    msgpack {"format": 1, "trees": [...], "replica": ..., "createdAt": ...}
    msgpack [tree, key, update] ...                 one per record, tombstones included
    msgpack ["end", count, sha256-hex]              digest of every byte before the trailer

Export writes a temporary file, syncs it, keeps the current archive as ``<name>.prev`` and
renames the new file into place, so a reader always finds a whole archive. Import checks the
whole file before it writes anything, then merges every record through the CRDT: importing
the same archive twice changes nothing the second time.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgpack

from repocontext.errors import (
    ArchiveCorruptError,
    ArchiveEmptyRefusedError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
)
from repocontext.store.keys import validate_key
from repocontext.store.trees import MEMORY, tree_spec

if TYPE_CHECKING:
    from repocontext.store.store import Store

__all__ = ["ArchiveReport", "export_archive", "import_archive", "read_archive"]

MAGIC: Final = b"RCARCH01"
FORMAT: Final = 1


@dataclass(frozen=True, slots=True)
class ArchiveReport:
    """What an export or import did.

    Attributes:
        path: The archive file.
        records: Records written to or read from the archive.
        changed: Records the import changed (0 for exports and repeated imports).
        trees: Trees covered.
    """

    path: str
    records: int
    changed: int
    trees: tuple[str, ...]


def export_archive(store: Store, path: Path, trees: Iterable[str] = (MEMORY,)) -> ArchiveReport:
    """Write every record of ``trees`` (tombstones included) to ``path`` atomically.

    Raises:
        ArchiveEmptyRefusedError: Nothing to export while ``path`` holds records.
        StoreFullError: The disk filled up (the previous archive is untouched).
        StoreReadOnlyError: The archive directory cannot be written.
    """
    names = tuple(tree_spec(name).name for name in trees)
    rows = [(name, key, update) for name in names for key, update in store.export_tree(name)]
    path = Path(path)
    if not rows and path.exists() and _existing_count(path) > 0:
        raise ArchiveEmptyRefusedError(
            f"refusing to replace {path} (which holds records) with an empty archive"
        )
    body = io.BytesIO()
    body.write(MAGIC)
    header = {
        "format": FORMAT,
        "trees": list(names),
        "replica": store.replica,
        "createdAt": store.clock.now(),
    }
    body.write(_pack(header))
    for row in rows:
        body.write(_pack(list(row)))
    digest = hashlib.sha256(body.getvalue()).hexdigest()
    body.write(_pack(["end", len(rows), digest]))
    _atomic_write(path, body.getvalue())
    return ArchiveReport(str(path), len(rows), 0, names)


def read_archive(path: Path) -> tuple[tuple[str, ...], list[tuple[str, str, bytes]]]:
    """Read and verify an archive; return its trees and ``(tree, key, update)`` rows.

    Raises:
        ArchiveCorruptError: The file is missing, truncated, altered or of another format.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ArchiveCorruptError(f"cannot read archive {path}: {exc.strerror}") from exc
    if not data.startswith(MAGIC):
        raise ArchiveCorruptError(f"{path} is not a repocontext archive (bad magic)")
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=True)
    unpacker.feed(data[len(MAGIC) :])
    try:
        items = list(unpacker)
    except (ValueError, msgpack.UnpackException) as exc:
        raise ArchiveCorruptError(f"{path} is truncated or garbled: {exc}") from exc
    return _verify(path, data, items)


def import_archive(store: Store, path: Path, *, commit_every: int = 1000) -> ArchiveReport:
    """Merge every record of an archive into ``store`` through the CRDT.

    Raises:
        ArchiveCorruptError: The archive fails its checks (nothing is written).
    """
    trees, rows = read_archive(path)
    for tree, key, update in rows:
        store.ops.apply_update(tree, key, update)  # validates every row before any write
    with store.batch(commit_every=commit_every) as batch:
        for tree, key, update in rows:
            batch.apply_update(tree, key, update)
    return ArchiveReport(str(path), len(rows), batch.changed, trees)


def _verify(
    path: Path, data: bytes, items: list[object]
) -> tuple[tuple[str, ...], list[tuple[str, str, bytes]]]:
    if len(items) < 2:
        raise ArchiveCorruptError(f"{path} is truncated (no header or trailer)")
    header, *middle, trailer = items
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ArchiveCorruptError(f"{path} has an unknown header or format")
    if not (isinstance(trailer, list) and len(trailer) == 3 and trailer[0] == "end"):
        raise ArchiveCorruptError(f"{path} is truncated (no trailer)")
    _, count, digest = trailer
    body_len = len(data) - len(_pack(trailer))
    if hashlib.sha256(data[:body_len]).hexdigest() != digest or count != len(middle):
        raise ArchiveCorruptError(f"{path} fails its checksum: it was altered or cut short")
    rows: list[tuple[str, str, bytes]] = []
    for item in middle:
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[2], bytes)):
            raise ArchiveCorruptError(f"{path} holds a malformed record")
        tree, key, update = item
        if not isinstance(tree, str) or not isinstance(key, str):
            raise ArchiveCorruptError(f"{path} holds a malformed record")
        try:
            validate_key(key)
            tree_spec(tree)
        except StoreError as exc:
            raise ArchiveCorruptError(f"{path} holds an invalid record: {exc.message}") from exc
        rows.append((tree, key, update))
    trees = header.get("trees")
    return tuple(trees) if isinstance(trees, list) else (), rows


def _existing_count(path: Path) -> int:
    try:
        return len(read_archive(path)[1])
    except ArchiveCorruptError:
        return 0


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            previous = path.with_name(f"{path.name}.prev")
            previous.unlink(missing_ok=True)
            os.link(path, previous)
        os.replace(tmp, path)
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StoreFullError(f"no room to write archive {path}") from exc
        raise StoreReadOnlyError(f"cannot write archive {path}: {exc.strerror}") from exc


def _pack(obj: object) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)
