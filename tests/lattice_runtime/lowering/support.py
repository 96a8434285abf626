"""What the lowering tests share: the repository's files, git, grants and patches."""

import subprocess
from pathlib import Path

import pytest

from lattice_runtime.errors import LoweringError
from lattice_runtime.grants import (
    Binding,
    GrantRegistry,
    fingerprint,
    operations_for,
)
from lattice_runtime.patch import (
    lower,
)
from lattice_runtime.protocol.messages import (
    Change,
    PatchProposal,
    Replacement,
    ReplaceText,
)

APP = (
    "def greet(name):\n"  # 1
    '    return "hello " + name\n'  # 2
    "\n"  # 3
    "\n"  # 4
    "def part():\n"  # 5
    "    value = 1\n"  # 6
    "    return value\n"  # 7
    "\n"  # 8
    "\n"  # 9
    "def other():\n"  # 10
    "    value = 1\n"  # 11
    "    return value\n"  # 12
)
WIN = b"def win():\r\n    return 1\r\n"

# Each reason code has at least one test in this directory; the list is checked against the
# contract (test_lowering.py).
COVERED = {
    "task_mismatch",
    "session_mismatch",
    "repository_mismatch",
    "base_commit_mismatch",
    "epoch_mismatch",
    "registry_integrity",
    "invalidated_handle",
    "provider_transaction_field",
    "workspace_required",
    "unsafe_destination",
    "protected_destination",
    "destination_exists",
    "duplicate_path",
    "duplicate_handle",
    "unknown_handle",
    "unsupported_operation",
    "permission_denied",
    "replacement_outside_grant",
    "replacement_source_missing",
    "replacement_source_ambiguous",
    "replacement_conflict",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def grant(
    repo: Path, registry: GrantRegistry, path: str, lines: tuple[int, int] | None = None
) -> str:
    found = fingerprint(repo, path)
    operations = operations_for(
        repo,
        path,
        whole_file=lines is None,
        tracked=found.tracked,
        symlink=(repo / path).is_symlink(),
    )
    return registry.grant(path, found, lines, operations).handle


def proposal(*changes: Change) -> PatchProposal:
    return PatchProposal("a patch", changes, ("pytest",))


def edit(handle: str, *pairs: tuple[str, str]) -> ReplaceText:
    return ReplaceText(handle, tuple(Replacement(old, new) for old, new in pairs))


def refused(
    repo: Path | None,
    registry: GrantRegistry,
    binding: Binding | None,
    *changes: Change,
) -> str:
    with pytest.raises(LoweringError) as caught:
        lower(proposal(*changes), registry, binding, repo)
    return caught.value.reason
