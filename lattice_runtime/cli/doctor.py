"""``lattice doctor``: can this machine and repository run tasks?"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from lattice_runtime.cli.app import RepoOption, app, echo_json
from lattice_runtime.compile import compile_task
from lattice_runtime.verify import worktrees_dir

__all__ = ["Check", "doctor"]


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report.

    Attributes:
        name: What was checked.
        ok: It passed.
        detail: What was found.
        required: A failure makes ``lattice run`` impossible (else a warning).
    """

    name: str
    ok: bool
    detail: str
    required: bool = True


@app.command("doctor")
def doctor(
    repo: RepoOption = Path(),
    as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
) -> None:
    """Check python, git, the repository, .lattice/ and the verification allowlist."""
    checks = run_checks(repo.resolve())
    if as_json:
        echo_json(
            [
                {"name": c.name, "ok": c.ok, "detail": c.detail, "required": c.required}
                for c in checks
            ]
        )
    else:
        for check in checks:
            mark = "ok  " if check.ok else ("FAIL" if check.required else "warn")
            typer.echo(f"{mark} {check.name}: {check.detail}")
    if any(not c.ok and c.required for c in checks):
        raise typer.Exit(1)


def run_checks(root: Path) -> list[Check]:
    """Every check, in order."""
    checks = [
        Check("python", sys.version_info >= (3, 11), sys.version.split()[0]),
        _git_version(),
    ]
    top = _git(root, "rev-parse", "--show-toplevel")
    is_top = top is not None and Path(top).resolve() == root
    checks.append(Check("repository", is_top, str(root) if is_top else f"{root}: not a git top"))
    if not is_top:
        return checks
    head = _git(root, "rev-parse", "--verify", "HEAD^{commit}")
    checks.append(Check("base commit", head is not None, head or "no commit yet"))
    checks.append(_lattice_dir(root))
    task = compile_task("doctor check", root)
    commands = ", ".join(c.display for c in task.allowed_verification_commands)
    checks.append(Check("verification allowlist", bool(commands), commands or "nothing found"))
    for tool in ("node", "npm"):
        found = shutil.which(tool)
        checks.append(Check(tool, found is not None, found or "not on PATH", required=False))
    return checks


def _git_version() -> Check:
    text = _git(Path.cwd(), "--version")
    if text is None:
        return Check("git", False, "git is not on PATH")
    numbers = text.split()[-1].split(".")
    ok = tuple(int(n) for n in numbers[:2] if n.isdigit()) >= (2, 20)
    return Check("git", ok, text + ("" if ok else " (2.20+ needed for worktrees)"))


def _lattice_dir(root: Path) -> Check:
    directory = worktrees_dir(root)
    left = [p.name for p in directory.iterdir() if p.is_dir()] if directory.is_dir() else []
    detail = f"{root / '.lattice'} writable; {len(left)} worktree(s) present"
    return Check(".lattice", True, detail)


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=False, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
