"""The few git reads grants and lowering need: the index entries and ``check-ignore``.

Git is used only to *read* (the index, the ignore rules); blob ids are computed in Python.
``ls-files`` pathspecs are literal (``GIT_LITERAL_PATHSPECS``), so a path with ``*`` or ``:``
in it names only itself.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["IndexEntry", "is_ignored", "read_index"]

_SYMLINK_MODE = "120000"


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One path's stage-0 entry in the index (``blob`` is ``None`` while it is conflicted)."""

    mode: str
    blob: str | None

    @property
    def symlink(self) -> bool:
        return self.mode == _SYMLINK_MODE


def _git(repo_root: Path, *args: str, literal: bool = True) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    if literal:
        env["GIT_LITERAL_PATHSPECS"] = "1"
    return subprocess.run(
        ["git", "-C", str(repo_root), *args],
        capture_output=True,
        env=env,
        check=False,
    )


def read_index(repo_root: Path, paths: Sequence[str] = ()) -> Mapping[str, IndexEntry] | None:
    """Read the index once: ``git ls-files -s -z`` (limited to ``paths`` when given).

    Returns ``None`` when ``repo_root`` is not a git work tree.
    """
    args = ["ls-files", "-s", "-z"]
    if paths:
        args += ["--", *paths]
    done = _git(repo_root, *args)
    if done.returncode != 0:
        return None
    entries: dict[str, IndexEntry] = {}
    for record in done.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, blob, stage = meta.decode("ascii").split()
        path = raw_path.decode("utf-8", "surrogateescape")
        if stage == "0":
            entries[path] = IndexEntry(mode, blob)
        else:  # a conflicted path: tracked, but no single blob to compare against
            entries.setdefault(path, IndexEntry(mode, None))
    return entries


def is_ignored(repo_root: Path, path: str) -> bool:
    """``git check-ignore -q``: the path matches an ignore rule (``.gitignore``, exclude)."""
    # check-ignore takes plain paths, not pathspecs (and refuses the literal magic).
    done = _git(repo_root, "check-ignore", "-q", "--no-index", "--", path, literal=False)
    return done.returncode == 0
