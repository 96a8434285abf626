"""The verification allowlist: the commands a task may run, found in the repository.

The model never adds to this list; it can only pick from it (see
:mod:`lattice_runtime.compile.admission`). Sources, in order:

* builtins: ``pytest`` and ``python -m pytest`` for a Python repository, ``ruff check`` and
  ``mypy`` when configured, ``npx tsc --noEmit`` (``tsconfig.json``) and ``npx vitest run``
  (``vitest`` dependency) next to a ``package.json``;
* ``make <target>`` for the Makefile's ``test``, ``check``, ``lint``, ``typecheck``, ``build``;
* ``package.json`` scripts (``npm test`` and ``npm run test`` for ``test``, ``npm run <name>``
  otherwise), pyproject task runners (poe, hatch, pdm, taskipy), ``tox -e <env>`` and
  ``nox -s <session>`` whose names are verification names (:func:`is_verification_name`).

Names with a non-terminating part (:data:`NON_TERMINATING`) are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

from lattice_runtime.compile import _sources
from lattice_runtime.compile.task import TaskIR, VerificationCommand

__all__ = [
    "NON_TERMINATING",
    "VERIFICATION_NAMES",
    "default_commands",
    "discover_allowlist",
    "is_verification_name",
]

NON_TERMINATING: Final = frozenset({"watch", "dev", "serve", "start", "ui", "open", "debug"})
"""Name parts (split at ``:``, ``-``, ``_``) that mark a command which does not end."""

VERIFICATION_NAMES: Final = ("check", "lint", "typecheck", "build")
"""Script names taken as they are; any name starting with ``test`` is taken too."""

PYTEST: Final = ("pytest",)
PYTHON_PYTEST: Final = ("python", "-m", "pytest")

_SAFE_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:._-]*$")
_NAME_PARTS: Final = re.compile(r"[:_-]")
_PYTHON_FACTOR: Final = re.compile(r"^(?:py|pypy)\d*(?:\.\d+)?$")
_WATCHING_BODY: Final = re.compile(r"(?:^|\s)(?:--watch(?:All)?|watch)(?:[\s=]|$)")
_PYTHON_MARKERS: Final = ("pyproject.toml", "setup.cfg", "setup.py", "pytest.ini", "tox.ini")


def _terminates(name: str) -> bool:
    return not any(part in NON_TERMINATING for part in _NAME_PARTS.split(name.casefold()))


def is_verification_name(name: str) -> bool:
    """Whether a script, target, env or session name may be on the allowlist.

    Args:
        name: The name as the repository spells it.

    Returns:
        ``True`` for ``test*``, ``check``, ``lint``, ``typecheck`` and ``build`` (case-sensitive)
        made of letters, digits and ``:._-`` only, unless a part of the name split at ``:``,
        ``-`` or ``_`` is one of :data:`NON_TERMINATING` (``test:watch``, ``test-ui``).
    """
    if not _SAFE_NAME.match(name) or not _terminates(name):
        return False
    return name.startswith("test") or name in VERIFICATION_NAMES


def _is_python_repo(root: Path) -> bool:
    if any((root / marker).is_file() for marker in (*_PYTHON_MARKERS, "conftest.py")):
        return True
    return _sources.has_python_tests(root)


def _ruff_configured(root: Path, pyproject: Mapping[str, object]) -> bool:
    if _sources.has_table(pyproject, "tool", "ruff"):
        return True
    return any(_sources.read_text(root, name) is not None for name in ("ruff.toml", ".ruff.toml"))


def _mypy_configured(root: Path, pyproject: Mapping[str, object]) -> bool:
    if _sources.has_table(pyproject, "tool", "mypy"):
        return True
    if any(_sources.read_text(root, name) is not None for name in ("mypy.ini", ".mypy.ini")):
        return True
    return _sources.read_ini(root, "setup.cfg").has_section("mypy")


def _builtins(
    root: Path, pyproject: Mapping[str, object], npm: tuple[dict[str, str], frozenset[str]] | None
) -> list[tuple[str, ...]]:
    argvs: list[tuple[str, ...]] = []
    if _is_python_repo(root):
        argvs += [PYTEST, PYTHON_PYTEST]
    if _ruff_configured(root, pyproject):
        argvs.append(("ruff", "check"))
    if _mypy_configured(root, pyproject):
        argvs.append(("mypy",))
    if npm is not None:
        if (root / "tsconfig.json").is_file():
            argvs.append(("npx", "tsc", "--noEmit"))
        if "vitest" in npm[1]:
            argvs.append(("npx", "vitest", "run"))
    return argvs


def _npm_scripts(scripts: Mapping[str, str]) -> list[tuple[str, ...]]:
    argvs: list[tuple[str, ...]] = []
    for name, body in scripts.items():
        if not is_verification_name(name) or _WATCHING_BODY.search(body):
            continue
        if name == "test":
            argvs += [("npm", "test"), ("npm", "run", "test")]
        else:
            argvs.append(("npm", "run", name))
    return argvs


def _pyproject_runners(pyproject: Mapping[str, object]) -> list[tuple[str, ...]]:
    tool = _sources.table(pyproject, "tool")
    argvs: list[tuple[str, ...]] = [("poe", n) for n in _sources.table(tool, "poe", "tasks")]
    argvs += [("pdm", "run", name) for name in _sources.table(tool, "pdm", "scripts")]
    argvs += [("task", name) for name in _sources.table(tool, "taskipy", "tasks")]
    argvs = [argv for argv in argvs if is_verification_name(argv[-1])]
    for env in _sources.table(tool, "hatch", "envs"):
        if not _SAFE_NAME.match(env):
            continue
        for name in _sources.table(tool, "hatch", "envs", env, "scripts"):
            if is_verification_name(name):
                argvs.append(("hatch", "run", name if env == "default" else f"{env}:{name}"))
    return argvs


def _is_tox_test_env(env: str) -> bool:
    """A verification name, or a python-version env (``py311``, ``pypy3-py312``): tox's tests."""
    if is_verification_name(env):
        return True
    factors = env.split("-")
    return bool(_SAFE_NAME.match(env)) and all(_PYTHON_FACTOR.match(f) for f in factors)


def _commands(argvs: Iterable[tuple[str, ...]], origin: str) -> list[VerificationCommand]:
    return [VerificationCommand(argv=argv, origin=origin) for argv in argvs]


def discover_allowlist(repo_root: Path) -> tuple[VerificationCommand, ...]:
    """Every verification command the repository itself declares, in a stable order.

    Args:
        repo_root: The repository's root directory.

    Returns:
        The builtins first (in the order of the module docstring), then the repository's own
        commands sorted by origin and argv; no argv twice. A broken or unreadable config file
        contributes nothing.
    """
    root = repo_root.resolve()
    pyproject = _sources.read_toml(root, "pyproject.toml")
    npm = _sources.package_json(root)
    builtins = _commands(_builtins(root, pyproject, npm), "builtin")
    targets = _sources.make_targets(root)
    found = [
        *_commands(
            (("make", t) for t in ("test", *VERIFICATION_NAMES) if t in targets), "Makefile"
        ),
        *_commands(_npm_scripts(npm[0] if npm else {}), "package.json"),
        *_commands(_pyproject_runners(pyproject), "pyproject.toml"),
        *_commands(
            (("tox", "-e", e) for e in _sources.tox_envs(root) if _is_tox_test_env(e)), "tox.ini"
        ),
        *_commands(
            (("nox", "-s", s) for s in _sources.nox_sessions(root) if is_verification_name(s)),
            "noxfile.py",
        ),
    ]
    found.sort(key=lambda command: (command.origin, command.argv))
    unique: dict[tuple[str, ...], VerificationCommand] = {}
    for command in (*builtins, *found):
        unique.setdefault(command.argv, command)
    return tuple(unique.values())


def default_commands(task: TaskIR) -> tuple[VerificationCommand, ...]:
    """What runs when the worker suggests no admissible command.

    Args:
        task: The compiled task.

    Returns:
        ``python -m pytest -q`` (or ``pytest -q``) when the pytest family is allowed; else
        ``npm test`` when allowed; else the first allowlist entry; empty for an empty list.
    """
    allowed = {command.argv: command for command in task.allowed_verification_commands}
    for argv in (PYTHON_PYTEST, PYTEST):
        if argv in allowed:
            return (VerificationCommand(argv=(*argv, "-q"), origin=allowed[argv].origin),)
    if ("npm", "test") in allowed:
        return (allowed[("npm", "test")],)
    return task.allowed_verification_commands[:1]
