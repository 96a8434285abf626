"""The git-worktree transaction, the command runner, and apply.

A lowered patch is verified in a disposable, detached worktree that reproduces the user's
uncommitted state (:func:`run_transaction`), and reaches the user's tree only through ``git
apply`` after every fingerprint is re-checked (:func:`apply_patch`). See docs/lattice-verify.md.
"""

from lattice_runtime.verify.apply import apply_patch, diff_paths
from lattice_runtime.verify.fingerprint import (
    check_fingerprints,
    current_fingerprint,
    safe_destination,
)
from lattice_runtime.verify.runner import (
    DEFAULT_TIMEOUT_SECONDS,
    EXIT_NOT_STARTED,
    EXIT_TIMEOUT,
    TAIL_CHARS,
    CommandResult,
    command_env,
    run_command,
)
from lattice_runtime.verify.state import ENVIRONMENT_DIRS, link_environment, reproduce_state
from lattice_runtime.verify.transaction import TransactionResult, patch_diff, run_transaction
from lattice_runtime.verify.worktree import OwnerRecord, Worktree, cleanup_stale, worktrees_dir

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "ENVIRONMENT_DIRS",
    "EXIT_NOT_STARTED",
    "EXIT_TIMEOUT",
    "TAIL_CHARS",
    "CommandResult",
    "OwnerRecord",
    "TransactionResult",
    "Worktree",
    "apply_patch",
    "check_fingerprints",
    "cleanup_stale",
    "command_env",
    "current_fingerprint",
    "diff_paths",
    "link_environment",
    "patch_diff",
    "reproduce_state",
    "run_command",
    "run_transaction",
    "safe_destination",
    "worktrees_dir",
]
