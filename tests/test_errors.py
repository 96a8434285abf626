"""The exception tree: every error lives in (or is re-exported by) ``repocontext.errors``, and
the tree drawn in its docstring is the real one."""

import importlib
import pkgutil
import re

import repocontext
from repocontext import errors
from repocontext.errors import RepoContextError

_NODE = re.compile(r"^ {4}(?P<lead>(?:[│ ] {3})*(?:[├└]── )?)(?P<name>\w+)\s+(?P<code>[a-z_.]+)$")


def _every_error_class() -> set[type[RepoContextError]]:
    for module in pkgutil.walk_packages(repocontext.__path__, "repocontext."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    found: set[type[RepoContextError]] = set()
    pending = [RepoContextError]
    while pending:
        cls = pending.pop()
        found.add(cls)
        pending += cls.__subclasses__()
    return found


def _drawn_tree() -> dict[str, tuple[str | None, str]]:
    """``name -> (parent name, code)`` as the docstring draws it."""
    drawn: dict[str, tuple[str | None, str]] = {}
    stack: list[str] = []
    for line in (errors.__doc__ or "").splitlines():
        match = _NODE.match(line)
        if match is None:
            continue
        depth = len(match["lead"]) // 4
        del stack[depth:]
        drawn[match["name"]] = (stack[-1] if stack else None, match["code"])
        stack.append(match["name"])
    return drawn


def test_every_error_class_is_defined_in_or_exported_by_the_errors_module() -> None:
    outside = [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in _every_error_class()
        if getattr(errors, cls.__name__, None) is not cls or cls.__name__ not in errors.__all__
    ]
    assert outside == []


def test_the_drawn_tree_lists_every_error_with_its_parent_and_code() -> None:
    actual = {
        cls.__name__: (
            None if cls is RepoContextError else cls.__bases__[0].__name__,
            cls.code,
        )
        for cls in _every_error_class()
    }
    assert _drawn_tree() == actual


def test_every_error_code_is_unique() -> None:
    codes = [cls.code for cls in _every_error_class()]
    assert len(codes) == len(set(codes))
