"""Where explicit control keeps its state: a per-user directory outside the repository.

The anchor of the accepted contract revision, the receipts and the plan graph live in
``platformdirs.user_state_dir("lattice")/<repo-hash>/`` so that rewriting files inside the
repository cannot move them. Every read-modify-write holds an exclusive ``flock`` on the
directory's lock file, and every write is atomic (temp file + rename).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import platformdirs

from lattice_runtime._files import atomic_write
from lattice_runtime.control.errors import ControlError

__all__ = ["StateDir", "canonical", "default_state_dir", "sha256_of"]


def canonical(value: object) -> bytes:
    """The canonical JSON bytes of ``value`` (sorted keys, no spaces, UTF-8)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sha256_of(value: object) -> str:
    """The SHA-256 (hex) of ``value``'s canonical JSON."""
    return hashlib.sha256(canonical(value)).hexdigest()


def default_state_dir(repo_root: Path) -> Path:
    """``user_state_dir("lattice")/<first 16 hex of the SHA-256 of the repository path>``."""
    key = hashlib.sha256(str(repo_root.resolve()).encode()).hexdigest()[:16]
    return Path(platformdirs.user_state_dir("lattice")) / key


class StateDir:
    """One repository's control state directory (JSON records under one lock)."""

    def __init__(self, path: Path) -> None:
        """Keep the records under ``path`` (made on first write)."""
        self.path = path.resolve()

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the directory's exclusive lock (across processes) for the block."""
        self.path.mkdir(parents=True, exist_ok=True)
        with (self.path / "lock").open("a") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def read(self, name: str) -> dict[str, Any] | None:
        """The record ``name`` (None when absent).

        Raises:
            ControlError: The record is not a JSON object.
        """
        path = self.path / f"{name}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise ControlError(f"{path} is damaged", hint="Remove it to start control afresh.")
        return data

    def write(self, name: str, record: dict[str, Any]) -> None:
        """Replace the record ``name`` atomically."""
        data = json.dumps(record, sort_keys=True, indent=1).encode() + b"\n"
        atomic_write(self.path / f"{name}.json", data, root=self.path)
