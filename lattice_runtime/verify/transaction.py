"""The verification transaction: the patch applied in a disposable worktree, then checked.

Steps of :func:`run_transaction`:

1. Every change's fingerprint is checked in the user's tree (nothing is written when one is
   stale).
2. Stale worktrees of dead owners are removed (:func:`~.worktree.cleanup_stale`).
3. A detached worktree at ``HEAD`` is made, the user's uncommitted and untracked state is
   copied in, the environment directories are linked, and that state is staged as the base.
4. The patch is written in the worktree and staged; the diff between the two staged trees is
   the patch as ``git apply`` input for the user's tree.
5. Each command runs (:func:`~.runner.run_command`); the worktree is removed.

The transaction passes iff at least one command ran and every command exited 0.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lattice_runtime.compile.task import VerificationCommand
from lattice_runtime.errors import TransactionError
from lattice_runtime.patch.ir import FileChange, PatchIR
from lattice_runtime.verify._git import git, literal, require_top_level
from lattice_runtime.verify.fingerprint import check_fingerprints, refuse_symlinked_parents
from lattice_runtime.verify.runner import (
    DEFAULT_TIMEOUT_SECONDS,
    CommandResult,
    command_env,
    run_command,
)
from lattice_runtime.verify.state import link_environment, reproduce_state
from lattice_runtime.verify.worktree import Worktree, cleanup_stale

__all__ = ["TransactionResult", "patch_diff", "run_transaction"]

_DIFF_OPTIONS = (
    "--binary",
    "--full-index",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--no-relative",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


@dataclass(frozen=True, slots=True)
class TransactionResult:
    """What verifying a patch found.

    Attributes:
        passed: At least one command ran and every one exited 0.
        results: Each command's result, in the order run.
        diff: The patch as ``git diff --binary`` text against the user's current state
            (bytes that are not UTF-8 are kept as surrogate escapes).
        worktree_kept: The worktree was left in place (``keep_worktree``).
    """

    passed: bool
    results: tuple[CommandResult, ...]
    diff: str
    worktree_kept: bool = False


def run_transaction(
    repo_root: Path,
    patch: PatchIR,
    commands: Sequence[VerificationCommand],
    *,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    env: Mapping[str, str] | None = None,
    keep_worktree: bool = False,
) -> TransactionResult:
    """Apply ``patch`` in a fresh worktree of ``repo_root`` and run ``commands`` there.

    Args:
        repo_root: The user's repository (top-level directory).
        patch: The lowered patch.
        commands: The allowlisted commands to run, in order (the caller checked the allowlist).
        timeout_seconds: Each command's deadline.
        clock: Monotonic clock for command durations.
        env: The commands' base environment (default: this process's).
        keep_worktree: Leave the worktree for inspection (removed by a later start).

    Raises:
        StaleFileError: a file changed since it was granted; nothing was written.
        UnsafePathError: a patch path is unsafe, or ``.lattice`` metadata is a symlink.
        TransactionError: ``repo_root`` is not a repository's top level, or git could not
            make or prepare the worktree.
    """
    root = repo_root.resolve()
    require_top_level(root)
    check_fingerprints(root, patch)
    cleanup_stale(root)
    with Worktree(root, keep=keep_worktree) as worktree:
        diff = patch_diff(root, worktree.path, patch)
        run_env = command_env(root, env)
        results = tuple(
            run_command(c, worktree.path, env=run_env, timeout_seconds=timeout_seconds, clock=clock)
            for c in commands
        )
    passed = bool(results) and all(result.passed for result in results)
    return TransactionResult(passed, results, diff, worktree_kept=keep_worktree)


def patch_diff(repo_root: Path, worktree: Path, patch: PatchIR) -> str:
    """Reproduce the user's state in ``worktree``, write ``patch`` there, return the diff.

    Raises:
        UnsafePathError: a patch path passes through a symlink in the worktree.
        TransactionError: git failed, or a change has no content to write.
    """
    reproduce_state(repo_root, worktree)
    linked = link_environment(repo_root, worktree)
    base = _stage(worktree, "--", ".", *(f":(exclude,literal){name}" for name in linked))
    for change in patch.changes:
        _write(worktree, change)
    patched = _stage(worktree, "-f", "--", *literal(patch.paths)) if patch.changes else base
    out = git(worktree, "diff", *_DIFF_OPTIONS, base, patched).stdout
    return out.decode("utf-8", errors="surrogateescape")


def _stage(worktree: Path, *pathspec: str) -> str:
    """Stage ``pathspec`` (additions, changes, removals) and return the index's tree id."""
    git(worktree, "add", "-A", *pathspec)
    return git(worktree, "write-tree").stdout.decode("ascii").strip()


def _write(worktree: Path, change: FileChange) -> None:
    refuse_symlinked_parents(worktree, change.path)
    target = worktree / change.path
    if target.is_symlink():
        target.unlink()  # replace a link, never write through it
    if change.action == "delete":
        target.unlink(missing_ok=True)
        return
    if change.new_content is None:
        raise TransactionError(f"the {change.action} of {change.path} carries no content")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(change.new_content)
