"""Verified patches, reused: a rerun of the same task on the same commit and context.

When a run passes, its worker's patch is kept under ``.lattice/cache/`` keyed by the task,
the base commit, the worker and the exact pages granted (their ids carry each file's
fingerprint). A later run whose key matches lowers the kept patch against its own fresh
grants and goes ``CONTEXT_GRANTED -> PATCH_LOWERED`` without a worker turn; the patch is still
verified in a new worktree before anything is applied. A kept patch that no longer lowers is
dropped and the worker is asked as usual.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from lattice_runtime._files import atomic_write, lattice_dir

__all__ = ["drop", "key", "load", "store"]


def key(task_id: str, base_commit: str, worker: str, page_ids: tuple[str, ...]) -> str:
    """The cache key of a run's situation (64 hex digits)."""
    text = json.dumps([task_id, base_commit, worker, sorted(page_ids)], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _path(repo_root: Path, cache_key: str) -> Path:
    return lattice_dir(repo_root) / "cache" / f"{cache_key}.json"


def load(repo_root: Path, cache_key: str) -> str | None:
    """The raw wire response kept under ``cache_key``, or ``None``."""
    path = _path(repo_root, cache_key)
    if path.is_symlink() or not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def store(repo_root: Path, cache_key: str, response: str) -> None:
    """Keep ``response`` (wire JSON) under ``cache_key``.

    Raises:
        UnsafePathError: The cache directory or file is a symlink.
    """
    atomic_write(_path(repo_root, cache_key), response.encode(), root=repo_root)


def drop(repo_root: Path, cache_key: str) -> None:
    """Forget the response under ``cache_key`` (if any)."""
    path = _path(repo_root, cache_key)
    if not path.is_symlink():
        path.unlink(missing_ok=True)
