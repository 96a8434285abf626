"""Real git repositories for the verify tests, and snapshots of a working tree."""

import os
import select
import subprocess
from pathlib import Path

from lattice_runtime.grants.model import Binding
from lattice_runtime.patch.ir import FileChange, PatchIR


def git(root: Path, *args: str, stdin: bytes | None = None) -> str:
    done = subprocess.run(
        ("git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args),
        cwd=root,
        input=stdin,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode()


def make_repo(root: Path, files: dict[str, bytes]) -> Path:
    """A repository at ``root`` with ``files`` committed (and ``.venv/`` ignored)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "core.autocrlf", "false")
    for path, data in {".gitignore": b".venv/\nnode_modules/\n*.log\n", **files}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root.resolve()


def worktree_list(root: Path) -> list[str]:
    lines = git(root, "worktree", "list", "--porcelain").splitlines()
    return [line.removeprefix("worktree ") for line in lines if line.startswith("worktree ")]


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file outside ``.git``: its bytes (or link target) and mtime in nanoseconds."""
    result: dict[str, tuple[bytes, int]] = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files + [d for d in dirs if Path(directory, d).is_symlink()]:
            path = Path(directory, name)
            rel = path.relative_to(root).as_posix()
            data = os.fsencode(os.readlink(path)) if path.is_symlink() else path.read_bytes()
            result[rel] = (data, path.lstat().st_mtime_ns)
    return result


def binding() -> Binding:
    return Binding("task-1", "session-1", "repo", "0" * 40)


def patch_of(*changes: FileChange) -> PatchIR:
    return PatchIR(binding(), "test patch", tuple(sorted(changes, key=lambda c: c.path)))


def exits_within(pid: int, *, seconds: float) -> bool:
    """Wait (bounded, on the process's pidfd, no polling sleep) until ``pid`` has exited."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([handle], [], [], seconds)[0])
    finally:
        os.close(handle)
