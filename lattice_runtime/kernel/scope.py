"""The task's scope as a path test: which repository files the kernel may show.

A path is in scope when it matches one of ``scope.include`` (or the list is empty) and none of
``scope.exclude``. Globs are git-style (``.gitignore`` syntax: ``src/**``, ``*.py``,
``docs/``), matched against repository-relative posix paths.
"""

from __future__ import annotations

import pathspec

from lattice_runtime.compile.task import Scope
from lattice_runtime.errors import TaskInvalidError

__all__ = ["ScopeFilter"]


class ScopeFilter:
    """Decides whether a repository path is inside a task's scope."""

    def __init__(self, scope: Scope) -> None:
        """Compile the scope's globs.

        Raises:
            TaskInvalidError: A glob is not a usable git-style pattern.
        """
        self.scope = scope
        self._include = _spec(scope.include) if scope.include else None
        self._exclude = _spec(scope.exclude) if scope.exclude else None

    def __contains__(self, path: object) -> bool:
        """Whether ``path`` is in scope (a non-string never is)."""
        if not isinstance(path, str):
            return False
        if self._include is not None and not self._include.match_file(path):
            return False
        return self._exclude is None or not self._exclude.match_file(path)


def _spec(globs: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """The globs as one spec.

    Raises:
        TaskInvalidError: A glob cannot be parsed, or can never match (blank, a comment, an
            unclosed ``[``): an include list of it would silently hide every file.
    """
    for glob in globs:
        try:
            patterns = pathspec.GitIgnoreSpec.from_lines([glob]).patterns
        except ValueError as exc:  # (pathspec's GitIgnorePatternError)
            raise _unusable(glob, str(exc)) from exc
        if not any(pattern.regex for pattern in patterns):
            raise _unusable(glob, "it can never match")
    return pathspec.GitIgnoreSpec.from_lines(globs)


def _unusable(glob: str, why: str) -> TaskInvalidError:
    return TaskInvalidError(
        f"the scope glob {glob[:200]!r} is not usable: {why}",
        hint="Use git-style globs such as 'src/**' or '*.py'.",
    )
