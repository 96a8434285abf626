"""Running git for the transaction: no shell, a clean environment, errors as TransactionError."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from lattice_runtime.errors import TransactionError

# Variables that would point git at another repository, index or work tree than ``cwd``'s
# (set, for example, when the runtime is started from inside a git hook).
_REPOSITORY_VARIABLES: Final = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_PREFIX",
        "GIT_NAMESPACE",
    }
)


def git_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for git: ``base`` (default: this process's) without repository overrides."""
    source = os.environ if base is None else base
    env = {key: value for key, value in source.items() if key not in _REPOSITORY_VARIABLES}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def git(
    cwd: Path,
    *args: str,
    stdin: bytes | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git <args>`` in ``cwd`` and return the finished process (stdout as bytes).

    Raises:
        TransactionError: git could not be started, or (with ``check``) exited non-zero.
    """
    try:
        done = subprocess.run(
            ("git", *args),
            cwd=cwd,
            input=stdin,
            capture_output=True,
            env=git_env(),
            check=False,
        )
    except OSError as exc:
        raise TransactionError(
            f"cannot run git: {exc}", hint="Install git and put it on PATH."
        ) from exc
    if check and done.returncode != 0:
        raise TransactionError(
            f"git {args[0]} failed in {cwd}: {_tail(done.stderr)}",
            hint="Check the repository with `git status`.",
        )
    return done


def require_top_level(root: Path) -> None:
    """Refuse a ``root`` that is not the top-level directory of a git work tree.

    Raises:
        TransactionError: ``root`` is not a repository's top level.
    """
    done = git(root, "rev-parse", "--show-toplevel", check=False)
    top = os.fsdecode(done.stdout.strip()) if done.returncode == 0 else ""
    if not top or Path(top).resolve() != root.resolve():
        raise TransactionError(
            f"{root} is not the top-level directory of a git repository",
            hint="Run the task from the repository root.",
        )


def nul_split(data: bytes) -> tuple[str, ...]:
    """Split ``-z`` output into paths (decoded as git writes them: UTF-8, surrogates kept)."""
    return tuple(os.fsdecode(item) for item in data.split(b"\0") if item)


def literal(paths: Sequence[str]) -> tuple[str, ...]:
    """Pathspecs matching exactly ``paths`` (no glob or magic interpretation)."""
    return tuple(f":(literal){path}" for path in paths)


def _tail(stderr: bytes) -> str:
    return stderr.decode("utf-8", errors="replace").strip()[-500:]
