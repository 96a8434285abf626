"""Which operations a file's grant carries, by the file's class.

A worker edits source. Tests are the verdict on its edit and configuration decides how that
verdict is reached (which tests run, which linters, which dependencies), so both are
read-only: a worker that could rewrite them could make any patch "pass". Untracked files and
symlinks are read-only too (an untracked file has no committed state to return to; a symlink's
write would land wherever it points). The same classes are *protected destinations* for
``create_file``.

A slice grant (some lines) carries ``replace_text`` only; a whole-file grant carries
``replace_text``, ``replace_file`` and ``delete_file``.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path, PurePosixPath
from typing import Final

from lattice_runtime.grants._git import is_ignored as _git_ignored
from lattice_runtime.grants.model import OPERATIONS, Operation

__all__ = [
    "SLICE_OPERATIONS",
    "WHOLE_FILE_OPERATIONS",
    "is_config_path",
    "is_ignored",
    "is_protected",
    "is_test_path",
    "operations_for",
]

SLICE_OPERATIONS: Final[tuple[Operation, ...]] = ("replace_text",)
WHOLE_FILE_OPERATIONS: Final[tuple[Operation, ...]] = OPERATIONS

_TEST_DIRS: Final = frozenset({"test", "tests", "__tests__", "spec", "specs", "__snapshots__"})
_TEST_NAMES: Final = (
    "test_*.py",
    "*_test.py",
    "conftest.py",
    "*_test.go",
    "*.test.*",
    "*.spec.*",
    "*_spec.rb",
    "*Test.java",
    "*Tests.java",
    "*_test.rs",
)
_CONFIG_DIRS: Final = frozenset({".github", ".gitlab", ".circleci", ".husky", ".devcontainer"})
_CONFIG_NAMES: Final = (
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "noxfile.py",
    "tox.ini",
    "package.json",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "npm-shrinkwrap.json",
    "tsconfig*.json",
    "jsconfig*.json",
    "*.config.js",
    "*.config.cjs",
    "*.config.mjs",
    "*.config.ts",
    "Makefile",
    "GNUmakefile",
    "makefile",
    "*.mk",
    "Dockerfile*",
    "*.dockerfile",
    "docker-compose*",
    "compose.yaml",
    "compose.yml",
    "Pipfile",
    "Gemfile",
    "Cargo.toml",
    "go.mod",
    "go.sum",
    "requirements*.txt",
    "constraints*.txt",
    "*.ini",
    "*.cfg",
    "*.toml",
    "*.yaml",
    "*.yml",
    "*.lock",
)


def is_test_path(path: str) -> bool:
    """The path is a test file (under a test directory, or named like one)."""
    parts = PurePosixPath(path).parts
    if any(part in _TEST_DIRS for part in parts[:-1]):
        return True
    return bool(parts) and _matches(parts[-1], _TEST_NAMES)


def is_config_path(path: str) -> bool:
    """The path is configuration: build, packaging, CI, tool settings, lockfiles, dotfiles."""
    parts = PurePosixPath(path).parts
    if not parts:
        return False
    if any(part in _CONFIG_DIRS or part.startswith(".") for part in parts):
        return True
    return _matches(parts[-1], _CONFIG_NAMES)


def is_protected(path: str) -> bool:
    """Test or configuration file: read-only when granted, refused as a create destination."""
    return is_test_path(path) or is_config_path(path)


def is_ignored(repo_root: Path, path: str) -> bool:
    """``git check-ignore``: the path matches an ignore rule (never a create destination)."""
    return _git_ignored(repo_root, path)


def operations_for(
    repo_root: Path, path: str, *, whole_file: bool, tracked: bool, symlink: bool
) -> tuple[Operation, ...]:
    """The operations a grant on ``path`` carries (empty: read-only).

    Args:
        repo_root: The repository's work tree; a path reached through a symlinked directory,
            or leading outside it, is read-only.
        path: Repository-relative posix path.
        whole_file: The grant covers the whole file (else a slice of lines).
        tracked: The path has an index entry.
        symlink: The path is a symlink.
    """
    if symlink or not tracked or is_protected(path) or not _plainly_inside(repo_root, path):
        return ()
    return WHOLE_FILE_OPERATIONS if whole_file else SLICE_OPERATIONS


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _plainly_inside(repo_root: Path, path: str) -> bool:
    """No directory on the way to ``path`` is a symlink and the path stays in the repo."""
    parts = PurePosixPath(path).parts
    if not parts or PurePosixPath(path).is_absolute() or ".." in parts:
        return False
    current = repo_root
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink():
            return False
    return True
