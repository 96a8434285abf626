"""``compile_task``: a goal and a repository become a :class:`~lattice_runtime.compile.TaskIR`.

Compilation is deterministic and reads the repository only to discover its verification
commands; no model is involved. The same goal on the same repository root always yields the
same task id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Final

from lattice_runtime.compile.allowlist import discover_allowlist
from lattice_runtime.compile.clauses import acceptance_criteria, extract_invariants
from lattice_runtime.compile.risk import classify_risk, raise_risk
from lattice_runtime.compile.task import Budget, Risk, Scope, TaskIR
from lattice_runtime.errors import TaskInvalidError

__all__ = ["MAX_GOAL_CHARS", "compile_task", "task_id"]

MAX_GOAL_CHARS: Final = 20_000
"""The longest goal (and the longest single constraint) accepted, in characters."""

MAX_CONSTRAINTS: Final = 100
MAX_SCOPE_GLOBS: Final = 1_000


def task_id(goal: str, repo_root: Path) -> str:
    """The stable id of a goal on a repository.

    Args:
        goal: The goal as the user wrote it.
        repo_root: The repository root (resolved here, so ``.`` and its absolute path agree).

    Returns:
        ``task-`` and the first 12 hex digits of the SHA-256 of the UTF-8 goal, a NUL byte and
        the resolved root path (the NUL keeps goal and path from running into each other).
    """
    digest = hashlib.sha256()
    digest.update(goal.encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    digest.update(str(repo_root.resolve()).encode("utf-8", "surrogateescape"))
    return f"task-{digest.hexdigest()[:12]}"


def _check_goal(goal: str) -> None:
    if not isinstance(goal, str) or not goal.strip():
        raise TaskInvalidError("the goal is empty", hint="Describe the change you want.")
    if len(goal) > MAX_GOAL_CHARS:
        raise TaskInvalidError(
            f"the goal has {len(goal)} characters; at most {MAX_GOAL_CHARS} are accepted",
            hint="Shorten the goal; put background in the repository instead.",
        )


def _check_constraints(constraints: Sequence[str]) -> tuple[str, ...]:
    if isinstance(constraints, str):
        raise TaskInvalidError(
            "constraints must be a list of strings, not one string",
            hint="Pass each constraint as its own item.",
        )
    if len(constraints) > MAX_CONSTRAINTS:
        raise TaskInvalidError(f"more than {MAX_CONSTRAINTS} constraints")
    cleaned: list[str] = []
    for constraint in constraints:
        if not isinstance(constraint, str) or not constraint.strip():
            raise TaskInvalidError("a constraint is empty", hint="Drop empty constraints.")
        if len(constraint) > MAX_GOAL_CHARS:
            raise TaskInvalidError(f"a constraint is longer than {MAX_GOAL_CHARS} characters")
        cleaned.append(constraint.strip())
    return tuple(cleaned)


def _check_glob(glob: str) -> None:
    valid = isinstance(glob, str) and bool(glob.strip()) and "\\" not in glob
    path = PurePosixPath(glob) if valid else PurePosixPath("/")
    if not valid or path.is_absolute() or ".." in path.parts:
        raise TaskInvalidError(
            f"scope glob {glob!r} is not a relative repository path pattern",
            hint="Use relative git-style globs such as 'src/**' without '..'.",
        )


def _check_scope(scope: Scope | None) -> Scope:
    if scope is None:
        return Scope()
    globs = (*scope.include, *scope.exclude)
    if len(globs) > MAX_SCOPE_GLOBS:
        raise TaskInvalidError(f"scope has more than {MAX_SCOPE_GLOBS} globs")
    for glob in globs:
        _check_glob(glob)
    return scope


def _check_root(repo_root: Path) -> Path:
    try:
        root = Path(repo_root).resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as error:  # ValueError: an embedded NUL byte
        raise TaskInvalidError(
            f"repository root {repo_root} does not exist", hint="Run from inside a repository."
        ) from error
    if not root.is_dir():
        raise TaskInvalidError(f"repository root {root} is not a directory")
    return root


def compile_task(
    goal: str,
    repo_root: Path,
    *,
    constraints: Sequence[str] = (),
    scope: Scope | None = None,
    risk_floor: Risk | None = None,
) -> TaskIR:
    """Compile a goal on a repository into a task.

    Args:
        goal: What the user wants, as written (kept verbatim in the task).
        repo_root: The repository the task runs on.
        constraints: Extra constraints (each trimmed; none may be blank).
        scope: Paths the task may touch (relative globs); every path when omitted.
        risk_floor: A risk the task may not fall below (for example a session's).

    Returns:
        The task: id, criteria, invariants, risk, scope, the default budget and the
        allowlist discovered from the repository.

    Raises:
        TaskInvalidError: If the goal is blank or longer than :data:`MAX_GOAL_CHARS`, a
            constraint is blank or too long, a scope glob is absolute or climbs out with
            ``..``, the risk floor is unknown, or the root is not a directory.
    """
    _check_goal(goal)
    cleaned_constraints = _check_constraints(constraints)
    checked_scope = _check_scope(scope)
    root = _check_root(repo_root)
    risk = raise_risk(classify_risk(goal), risk_floor)
    return TaskIR(
        id=task_id(goal, root),
        goal=goal,
        constraints=cleaned_constraints,
        invariants=extract_invariants(goal),
        acceptance_criteria=acceptance_criteria(goal),
        risk=risk,
        scope=checked_scope,
        budget=Budget(),
        allowed_verification_commands=discover_allowlist(root),
    )
