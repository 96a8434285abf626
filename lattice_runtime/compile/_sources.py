"""Readers of the repository files the verification allowlist is discovered from.

Each reader takes the repository root and returns plain data (names, tables); a file that is
missing, too large, a symlink out of the repository, not UTF-8 or unparsable reads as empty,
so a broken file only ever removes commands (fail closed). Nothing here runs or imports
repository code: ``noxfile.py`` is parsed with :mod:`ast`.
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

MAX_CONFIG_BYTES: Final = 1_000_000
MAX_WALK_FILES: Final = 50_000
MAX_TOX_ENVS: Final = 256

_PRUNED_DIRS: Final = frozenset(
    {"node_modules", "__pycache__", "venv", "site-packages", "build", "dist"}
)
_MAKE_RULE: Final = re.compile(r"^([^\s:#=][^:#=]*?)\s*::?(?!=)")
_BRACES: Final = re.compile(r"\{([^{}]*)\}")


def read_text(root: Path, name: str) -> str | None:
    """The file ``root/name`` as text, or ``None`` when it cannot be read safely."""
    path = root / name
    try:
        resolved = path.resolve(strict=True)
        if not resolved.is_relative_to(root) or not resolved.is_file():
            return None
        if resolved.stat().st_size > MAX_CONFIG_BYTES:
            return None
        return resolved.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def read_toml(root: Path, name: str) -> dict[str, object]:
    """The TOML file ``root/name`` as a table (empty when absent or invalid)."""
    text = read_text(root, name)
    if text is None:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def table(data: Mapping[str, object], *keys: str) -> dict[str, object]:
    """The nested table at ``keys`` (empty when a level is missing or not a table)."""
    current: object = data
    for key in keys:
        if not isinstance(current, dict) or not isinstance(current.get(key), dict):
            return {}
        current = current[key]
    return dict(current) if isinstance(current, dict) else {}


def has_table(data: Mapping[str, object], *keys: str) -> bool:
    """Whether the nested table at ``keys`` exists (an empty table counts: tools use defaults)."""
    parent = table(data, *keys[:-1]) if len(keys) > 1 else dict(data)
    return isinstance(parent.get(keys[-1]), dict)


def read_ini(root: Path, name: str) -> configparser.RawConfigParser:
    """The INI file ``root/name`` (no sections when absent or invalid)."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    text = read_text(root, name)
    if text is not None:
        try:
            parser.read_string(text)
        except configparser.Error:
            return configparser.RawConfigParser(strict=False, interpolation=None)
    return parser


def make_targets(root: Path) -> frozenset[str]:
    """The targets the repository's Makefile defines (rules, not variables or recipes)."""
    texts = (read_text(root, name) for name in ("GNUmakefile", "makefile", "Makefile"))
    text = next((found for found in texts if found is not None), None)
    if text is None:
        return frozenset()
    targets: set[str] = set()
    for line in text.splitlines():
        if line.startswith("\t"):
            continue
        match = _MAKE_RULE.match(line)
        if match is not None:
            targets.update(match.group(1).split())
    return frozenset(targets)


def package_json(root: Path) -> tuple[dict[str, str], frozenset[str]] | None:
    """The ``package.json`` scripts and dependency names, or ``None`` without a package.json."""
    text = read_text(root, "package.json")
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return {}, frozenset()
    if not isinstance(data, dict):
        return {}, frozenset()
    raw_scripts = data.get("scripts")
    scripts = (
        {k: v for k, v in raw_scripts.items() if isinstance(v, str)}
        if isinstance(raw_scripts, dict)
        else {}
    )
    dependencies: set[str] = set()
    for key in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
        section = data.get(key)
        if isinstance(section, dict):
            dependencies.update(str(name) for name in section)
    return scripts, frozenset(dependencies)


def _split_envlist(value: str) -> Iterator[str]:
    depth = 0
    current: list[str] = []
    for char in value:
        depth += (char == "{") - (char == "}")
        if depth == 0 and char in ",\n":
            yield "".join(current).strip()
            current = []
        else:
            current.append(char)
    yield "".join(current).strip()


def _expand_braces(name: str) -> list[str]:
    match = _BRACES.search(name)
    if match is None:
        return [name]
    head, tail = name[: match.start()], name[match.end() :]
    expanded: list[str] = []
    for option in match.group(1).split(","):
        expanded.extend(_expand_braces(head + option.strip() + tail))
        if len(expanded) > MAX_TOX_ENVS:
            break
    return expanded[:MAX_TOX_ENVS]


def tox_envs(root: Path) -> frozenset[str]:
    """The environments ``tox.ini`` declares: its ``envlist`` (expanded) and ``[testenv:x]``."""
    parser = read_ini(root, "tox.ini")
    names: set[str] = set()
    for key in ("envlist", "env_list"):
        if parser.has_option("tox", key):
            for item in _split_envlist(parser.get("tox", key)):
                names.update(_expand_braces(item))
    for section in parser.sections():
        if section.startswith("testenv:"):
            names.update(_expand_braces(section.removeprefix("testenv:").strip()))
    return frozenset(name for name in names if name)


def _session_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    for decorator in function.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call is not None else decorator
        is_session = (isinstance(target, ast.Attribute) and target.attr == "session") or (
            isinstance(target, ast.Name) and target.id == "session"
        )
        if not is_session:
            continue
        for keyword in call.keywords if call is not None else ():
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                return str(keyword.value.value)
        return function.name
    return None


def nox_sessions(root: Path) -> frozenset[str]:
    """The session names of ``noxfile.py``, read from its syntax tree (never imported)."""
    text = read_text(root, "noxfile.py")
    if text is None:
        return frozenset()
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return frozenset()
    names = {
        _session_name(node)
        for node in module.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    return frozenset(name for name in names if name)


def has_python_tests(root: Path) -> bool:
    """Whether a walk of the repository finds ``test_*.py``, ``*_test.py`` or ``conftest.py``.

    Hidden directories and dependency or build directories are not entered; the walk stops
    after :data:`MAX_WALK_FILES` files and directories.
    """
    seen = 0
    for _directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _PRUNED_DIRS)
        for filename in filenames:
            if filename.endswith(".py") and (
                filename.startswith("test_")
                or filename.endswith("_test.py")
                or filename == "conftest.py"
            ):
                return True
        seen += 1 + len(filenames)
        if seen > MAX_WALK_FILES:
            return False
    return False
