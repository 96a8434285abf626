"""``lattice doctor``: can this machine and repository run tasks?"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from lattice_runtime.cli.app import RepoOption, app, echo_json
from lattice_runtime.compile import compile_task
from lattice_runtime.errors import TaskInvalidError
from lattice_runtime.machine import git_head, git_output, repository_root
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
    try:  # the same rules lattice run applies
        repository_root(root)
    except TaskInvalidError as exc:
        checks.append(Check("repository", False, exc.message))
        return checks
    checks.append(Check("repository", True, str(root)))
    try:
        checks.append(Check("base commit", True, git_head(root)))
    except TaskInvalidError as exc:
        checks.append(Check("base commit", False, exc.message))
    checks.append(_lattice_dir(root))
    task = compile_task("doctor check", root)
    commands = ", ".join(c.display for c in task.allowed_verification_commands)
    checks.append(Check("verification allowlist", bool(commands), commands or "nothing found"))
    for tool in ("node", "npm"):
        found = shutil.which(tool)
        checks.append(Check(tool, found is not None, found or "not on PATH", required=False))
    return checks


def _git_version() -> Check:
    text = git_output(Path.cwd(), "--version")
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
