"""Admission: a worker's suggested verification command is let through only if allowlisted.

A suggestion is a single line parsed with :func:`shlex.split` and never given to a shell; any
shell metacharacter (``; | & $ > < `` and backquote) or a line break refuses it outright. It is
admitted when its argv equals an allowlist entry's argv, or - for the pytest family only -
when it extends an allowed ``pytest`` / ``python -m pytest`` entry with arguments that are each

* a flag of :data:`SAFE_PYTEST_FLAGS`,
* ``-k`` followed by an expression of plain words joined by ``and`` / ``or`` / ``not``, or
* a relative path or node id (``tests/test_a.py::test_b``) whose file exists inside the
  repository (after resolving symlinks).

Everything else raises :class:`~lattice_runtime.errors.CommandNotAllowedError` (fail closed).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path, PurePosixPath
from typing import Final

from lattice_runtime.compile.allowlist import PYTEST, PYTHON_PYTEST
from lattice_runtime.compile.task import TaskIR, VerificationCommand
from lattice_runtime.errors import CommandNotAllowedError

__all__ = ["MAX_COMMAND_CHARS", "SAFE_PYTEST_FLAGS", "admit"]

MAX_COMMAND_CHARS: Final = 2_000
"""Longer suggestions are refused without parsing."""

SAFE_PYTEST_FLAGS: Final = frozenset(
    {"-q", "-x", "-v", "-vv", "--tb=short", "--tb=line", "--tb=no"}
)
"""Flags that only change pytest's output or stop early; nothing that loads code or writes."""

_SHELL_META: Final = frozenset(";|&$><`\n\r")
_KEYWORD_TOKEN: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NODE_PART: Final = re.compile(r"^[A-Za-z0-9_.\[\]-]+$")
_OPERATORS: Final = frozenset({"and", "or"})


def _refuse(message: str, task: TaskIR) -> CommandNotAllowedError:
    allowed = ", ".join(c.display for c in task.allowed_verification_commands) or "(none)"
    return CommandNotAllowedError(
        message,
        hint=f"Suggest one of the allowed commands: {allowed}. Pytest runs may add "
        "-q, -x, -v, -vv, --tb=short|line|no, -k EXPR and test paths inside the repository.",
    )


def _is_keyword_expression(expression: str) -> bool:
    """``word``, ``not word``, ``a and not b or c``: operands and operators alternate."""
    expect_operand = True
    for token in expression.split():
        if not _KEYWORD_TOKEN.match(token):
            return False
        lowered = token.lower()
        if expect_operand and lowered == "not":
            continue
        if expect_operand == (lowered in _OPERATORS):
            return False
        expect_operand = not expect_operand
    return not expect_operand


def _is_test_path(argument: str, root: Path) -> bool:
    path_part, _, node = argument.partition("::")
    if not path_part or argument.startswith(("-", "@")):  # "@file": pytest reads args from it
        return False
    if node and not all(_NODE_PART.match(part) for part in node.split("::")):
        return False
    relative = PurePosixPath(path_part)
    if relative.is_absolute() or "\\" in path_part:
        return False
    try:
        resolved = (root / relative).resolve(strict=True)
    except (OSError, RuntimeError, ValueError):  # ValueError: an embedded NUL byte
        return False
    return resolved.is_relative_to(root)


def _pytest_extras_ok(extras: list[str], root: Path) -> bool:
    index = 0
    while index < len(extras):
        argument = extras[index]
        if argument == "-k":
            if index + 1 >= len(extras) or not _is_keyword_expression(extras[index + 1]):
                return False
            index += 2
            continue
        if argument not in SAFE_PYTEST_FLAGS and not _is_test_path(argument, root):
            return False
        index += 1
    return True


def _parse(command: str, task: TaskIR) -> list[str]:
    if len(command) > MAX_COMMAND_CHARS:
        raise _refuse(f"command longer than {MAX_COMMAND_CHARS} characters", task)
    metacharacters = sorted(_SHELL_META.intersection(command))
    if metacharacters:
        shown = " ".join(repr(char) for char in metacharacters)
        raise _refuse(f"command contains shell metacharacters ({shown}); no shell runs", task)
    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise _refuse(f"command cannot be parsed: {error}", task) from error
    if not argv:
        raise _refuse("command is empty", task)
    return argv


def admit(command: str, task: TaskIR, repo_root: Path) -> VerificationCommand:
    """Admit a worker's suggested verification command, or refuse it.

    Args:
        command: The command line the worker suggested.
        task: The compiled task; its allowlist is the only source of admissible commands.
        repo_root: The repository the test paths must lie in.

    Returns:
        The allowlist entry the command equals, or (pytest family) a command with the entry's
        origin and the suggested argv.

    Raises:
        CommandNotAllowedError: If the command holds shell metacharacters, cannot be parsed,
            or is neither an allowlisted argv nor a safe extension of an allowed pytest entry;
            the hint lists the allowlist.
    """
    argv = _parse(command, task)
    allowed = {entry.argv: entry for entry in task.allowed_verification_commands}
    exact = allowed.get(tuple(argv))
    if exact is not None:
        return exact
    root = repo_root.resolve()
    for family in (PYTHON_PYTEST, PYTEST):
        entry = allowed.get(family)
        prefix = len(family)
        if entry is not None and tuple(argv[:prefix]) == family:
            if _pytest_extras_ok(argv[prefix:], root):
                return VerificationCommand(argv=tuple(argv), origin=entry.origin)
            raise _refuse(f"pytest arguments not allowed: {shlex.join(argv[prefix:])}", task)
    raise _refuse(f"command is not on the allowlist: {shlex.join(argv)}", task)
