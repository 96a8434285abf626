"""Throw-away git repositories the suite builds for itself (deterministic content)."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from lattice_runtime.grants import Binding

_IDENTITY: Final = (
    "-c",
    "user.name=lattice-evidence",
    "-c",
    "user.email=evidence@localhost",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "core.autocrlf=false",
)


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` and return its stripped stdout (a failure raises)."""
    done = subprocess.run(
        ["git", *_IDENTITY, *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.stdout.strip()


@contextmanager
def scratch_repo(files: Mapping[str, str]) -> Iterator[tuple[Path, Binding]]:
    """A fresh git repository holding ``files`` in one commit, removed afterwards.

    Yields:
        The repository root and a run binding on its ``HEAD``.
    """
    with tempfile.TemporaryDirectory(prefix="lattice-evidence-") as tmp:
        root = Path(tmp).resolve() / "repo"
        root.mkdir()
        no_excludes = Path(tmp).resolve() / "no-excludes"
        no_excludes.write_bytes(b"")
        git(root, "init", "-q")
        # The runtime's own git calls (check-ignore, ls-files) read the repository's config:
        # pin what a user's global config could change, so every machine sees the same cases.
        git(root, "config", "core.excludesFile", str(no_excludes))
        git(root, "config", "core.autocrlf", "false")
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(text.encode("utf-8"))
        git(root, "add", "-A")
        git(root, "commit", "-q", "--no-verify", "-m", "evidence fixture")
        head = git(root, "rev-parse", "HEAD")
        yield root, Binding("task-evidence", "session-evidence", "repo-evidence", head)
