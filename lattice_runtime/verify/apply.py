"""Applying a verified patch to the user's tree: only through ``git apply``, only when fresh.

:func:`apply_patch` re-checks every change's fingerprint in the user's tree, checks that the
diff touches exactly the patch's paths, runs ``git apply --check`` and only then ``git
apply``. The runtime never writes the user's files itself, so a refused patch leaves the tree
as it was.
"""

from __future__ import annotations

import os
from pathlib import Path

from lattice_runtime.errors import TransactionError
from lattice_runtime.patch.ir import PatchIR
from lattice_runtime.verify._git import git, require_top_level
from lattice_runtime.verify.fingerprint import check_fingerprints

__all__ = ["apply_patch", "diff_paths"]

_APPLY_OPTIONS = ("--whitespace=nowarn", "--recount")


def apply_patch(repo_root: Path, patch: PatchIR, diff: str) -> None:
    """Apply ``diff`` (from :func:`~.transaction.run_transaction`) to ``repo_root``.

    Raises:
        StaleFileError: a file changed since it was granted; nothing was written.
        UnsafePathError: a patch path is unsafe or passes through a symlink.
        TransactionError: ``repo_root`` is not a repository's top level, the diff does not
            match the patch, or ``git apply --check`` refused it; nothing was written.
    """
    root = repo_root.resolve()
    require_top_level(root)
    check_fingerprints(root, patch)
    data = diff.encode("utf-8", errors="surrogateescape")
    touched = diff_paths(root, data)
    if touched != tuple(sorted(set(patch.paths))):
        raise TransactionError(
            f"the diff touches {list(touched)}, the patch {sorted(patch.paths)}",
            hint="Apply the diff the transaction produced for this patch.",
        )
    if not data:
        return
    check = git(root, "apply", "--check", *_APPLY_OPTIONS, "-", stdin=data, check=False)
    if check.returncode != 0:
        reason = check.stderr.decode("utf-8", errors="replace").strip()[-500:]
        raise TransactionError(
            f"git apply --check refused the patch: {reason}",
            hint="The tree changed since verification; run the task again.",
        )
    git(root, "apply", *_APPLY_OPTIONS, "-", stdin=data)


def diff_paths(repo_root: Path, diff: bytes) -> tuple[str, ...]:
    """The paths ``diff`` touches, sorted (read by ``git apply --numstat``; nothing applied).

    Raises:
        TransactionError: git cannot parse the diff.
    """
    if not diff:
        return ()
    out = git(repo_root, "apply", "--numstat", "-z", "-", stdin=diff).stdout
    paths = {os.fsdecode(record.split(b"\t", 2)[2]) for record in out.split(b"\0") if record}
    return tuple(sorted(paths))
