"""The verified-patch cache (opt-in): a rerun of the same task on the same code reuses a patch.

When a run with ``use_cache`` passes, its lowered patch is kept under ``.lattice/cache/``,
keyed by the SHA-256 of the repository id, the base commit, the compiled task (its wire form)
and every indexed file's fingerprint (path and git blob id). A later run whose key matches —
the same task on byte-identical code — takes the kept patch instead of asking the worker
(``CONTEXT_GRANTED -> PATCH_LOWERED``), bound to its own run, and still verifies it in a new
worktree before anything is applied; a kept patch that fails verification is dropped. Any
change to any indexed file changes the key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from lattice_runtime._files import atomic_write, lattice_dir
from lattice_runtime.compile import TaskIR
from lattice_runtime.grants import Binding
from lattice_runtime.machine.engine_state import decode_patch, encode_patch
from lattice_runtime.patch import PatchIR

__all__ = ["CachedPatch", "drop", "key", "load", "store"]


@dataclass(frozen=True, slots=True)
class CachedPatch:
    """A patch that passed verification in an earlier run."""

    patch: PatchIR

    def rebind(self, binding: Binding) -> PatchIR:
        """The patch bound to the run that reuses it."""
        return replace(self.patch, binding=binding)


def key(
    repository_id: str, base_commit: str, task: TaskIR, files: Sequence[tuple[str, str]]
) -> str:
    """The cache key (64 hex digits) of a task on a repository's exact contents."""
    payload = [repository_id, base_commit, task.to_wire(), sorted(files)]
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _path(repo_root: Path, cache_key: str) -> Path:
    return lattice_dir(repo_root) / "cache" / f"{cache_key}.json"


def load(repo_root: Path, cache_key: str) -> CachedPatch | None:
    """The patch kept under ``cache_key``, or ``None`` (none, or unreadable: dropped)."""
    path = _path(repo_root, cache_key)
    if path.is_symlink() or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        placeholder = Binding("", "", "", "")
        return CachedPatch(decode_patch(data, placeholder))
    except (OSError, ValueError, KeyError, TypeError):
        drop(repo_root, cache_key)
        return None


def store(repo_root: Path, cache_key: str, patch: PatchIR) -> None:
    """Keep ``patch`` under ``cache_key``.

    Raises:
        UnsafePathError: The cache directory or file is a symlink.
    """
    data = json.dumps(encode_patch(patch), sort_keys=True, separators=(",", ":"))
    atomic_write(_path(repo_root, cache_key), data.encode(), root=repo_root)


def drop(repo_root: Path, cache_key: str) -> None:
    """Forget the patch under ``cache_key`` (if any)."""
    path = _path(repo_root, cache_key)
    if not path.is_symlink():
        path.unlink(missing_ok=True)
