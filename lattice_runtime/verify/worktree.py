"""Disposable git worktrees under ``.lattice/worktrees/``, with owner records and stale cleanup.

Layout, for a transaction ``<txid>``::

    <repo>/.lattice/worktrees/<txid>/             a detached worktree at HEAD
    <repo>/.lattice/worktrees/<txid>.owner.json   {"txid", "pid", "hostname", "started"}

The owner record is written atomically (temp file + rename, refusing symlinks) *before* the
worktree is made, so every worktree directory has a record unless something other than the
runtime put it there. :func:`cleanup_stale` removes the worktrees whose owner process is dead
or whose record is missing or unreadable; every transaction start calls it, so a crash leaves
no worktree behind after the next run.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Final

from lattice_runtime._files import atomic_write, lattice_dir
from lattice_runtime.errors import TransactionError
from lattice_runtime.verify._git import git

__all__ = ["OwnerRecord", "Worktree", "cleanup_stale", "worktrees_dir"]

_OWNER_SUFFIX: Final = ".owner.json"


@dataclass(frozen=True, slots=True)
class OwnerRecord:
    """Who made a worktree.

    Attributes:
        txid: The transaction id (the worktree directory's name).
        pid: The owning process.
        hostname: The machine the owner runs on.
        started: When the transaction started (ISO 8601, UTC).
    """

    txid: str
    pid: int
    hostname: str
    started: str

    def to_json(self) -> bytes:
        """The record's file content."""
        body = {"txid": self.txid, "pid": self.pid, "hostname": self.hostname}
        return json.dumps({**body, "started": self.started}, sort_keys=True).encode() + b"\n"

    @classmethod
    def read(cls, path: Path) -> OwnerRecord | None:
        """The record at ``path``; ``None`` when it is missing, a symlink or unreadable."""
        if path.is_symlink():
            return None
        try:
            raw = json.loads(path.read_bytes())
            record = cls(str(raw["txid"]), int(raw["pid"]), str(raw["hostname"]), raw["started"])
        except (OSError, ValueError, TypeError, KeyError):
            return None
        return record if isinstance(record.started, str) else None


def worktrees_dir(repo_root: Path) -> Path:
    """``<repo>/.lattice/worktrees`` (not created here).

    Raises:
        UnsafePathError: ``.lattice`` is a symlink or not a directory.
    """
    return lattice_dir(repo_root) / "worktrees"


def _owner_path(directory: Path, txid: str) -> Path:
    return directory / f"{txid}{_OWNER_SUFFIX}"


class Worktree:
    """A detached worktree at ``HEAD`` that removes itself when the ``with`` block ends.

    Args:
        repo_root: The user's repository (its top-level directory).
        txid: The transaction id (default: ``tx-`` + 16 random hex digits).
        clock: Wall clock for the owner record's ``started`` (UTC).
        keep: Leave the worktree in place at exit (the next :func:`cleanup_stale` after the
            owner ends removes it).
    """

    def __init__(
        self,
        repo_root: Path,
        *,
        txid: str | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        keep: bool = False,
    ) -> None:
        self.repo_root = repo_root.resolve()
        self.txid = txid or f"tx-{uuid.uuid4().hex[:16]}"
        self.keep = keep
        self._clock = clock
        self._directory = worktrees_dir(self.repo_root)
        self.path = self._directory / self.txid

    def __enter__(self) -> Worktree:
        """Write the owner record, then add the worktree.

        Raises:
            UnsafePathError: ``.lattice/worktrees`` or the record is a symlink.
            TransactionError: the transaction id is taken, or git could not add the worktree
                (for example, no commit yet).
        """
        owner = _owner_path(self._directory, self.txid)
        if os.path.lexists(owner) or os.path.lexists(self.path):
            raise TransactionError(f"transaction {self.txid} already has a worktree or record")
        record = OwnerRecord(
            txid=self.txid,
            pid=os.getpid(),
            hostname=socket.gethostname(),
            started=self._clock().astimezone(UTC).isoformat(timespec="seconds"),
        )
        atomic_write(owner, record.to_json(), root=self.repo_root)
        try:
            git(self.repo_root, "worktree", "add", "--detach", "--quiet", str(self.path), "HEAD")
        except TransactionError:
            # Only the record: a directory git left behind has no owner now, so the next
            # cleanup_stale removes it.
            owner.unlink(missing_ok=True)
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Remove the worktree and its owner record (unless ``keep``)."""
        if not self.keep:
            _remove(self.repo_root, self._directory, self.txid)


def cleanup_stale(repo_root: Path) -> tuple[str, ...]:
    """Remove the worktrees (and owner records) of dead or unknown owners.

    A worktree is stale when its owner record names a process on this host that no longer
    exists, or when its directory has no readable owner record. Records without a directory
    whose owner is dead are removed too. Owners on another host are left alone.

    Returns:
        The transaction ids removed, sorted.

    Raises:
        UnsafePathError: ``.lattice`` is a symlink or not a directory.
        TransactionError: git could not be run.
    """
    root = repo_root.resolve()
    directory = worktrees_dir(root)
    if directory.is_symlink() or not directory.is_dir():
        return ()
    txids = {
        entry.name.removesuffix(_OWNER_SUFFIX) if entry.name.endswith(_OWNER_SUFFIX) else entry.name
        for entry in directory.iterdir()
        if not entry.name.startswith(".")
    }
    stale = sorted(txid for txid in txids if _is_stale(directory, txid))
    for txid in stale:
        _remove(root, directory, txid)
    if stale:
        git(root, "worktree", "prune")
    return tuple(stale)


def _is_stale(directory: Path, txid: str) -> bool:
    record = OwnerRecord.read(_owner_path(directory, txid))
    if record is None:
        return os.path.lexists(directory / txid)
    if record.hostname != socket.gethostname():
        return False
    return not _alive(record.pid)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _remove(root: Path, directory: Path, txid: str) -> None:
    """Remove worktree ``txid`` (through git, then from disk if git lost it), then its record."""
    path = directory / txid
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        _unlink_environment_links(path)
        git(root, "worktree", "remove", "--force", "--force", str(path), check=False)
        if path.exists():
            shutil.rmtree(path)  # never follows symlinks inside the tree
        git(root, "worktree", "prune", check=False)
    _owner_path(directory, txid).unlink(missing_ok=True)


def _unlink_environment_links(path: Path) -> None:
    """Drop top-level symlinks first, so nothing removing the tree can reach the user's dirs."""
    for entry in path.iterdir():
        if entry.is_symlink() and entry.name != ".git":
            entry.unlink()
