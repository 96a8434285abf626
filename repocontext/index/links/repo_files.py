"""A repository's file paths and the lookup indexes import resolution needs, built once.

:class:`RepoFiles` is what every import rule (:mod:`._import_rules`) looks paths up in, so
resolving one import is a handful of dictionary lookups.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from repocontext.index.parsing.languages import is_test_path
from repocontext.index.parsing.manifests import MANIFESTS

__all__ = [
    "PACKAGED",
    "RepoFiles",
    "ancestors_of",
    "python_modules",
    "python_prefixes",
    "python_roots",
    "stem",
]

PACKAGED: Final = (".java", ".cs")
"""Files that declare their package: import resolution reads it, and their package-wide
imports (a Java wildcard, a C# namespace) name every file of it."""


@dataclass(frozen=True, slots=True)
class RepoFiles:
    """A repository's file paths plus the lookup indexes import resolution needs.

    Build it once per repository with :meth:`build`; every field is read-only afterwards.

    Attributes:
        paths: Repository-relative posix paths.
        go_module: The ``module`` path of the root ``go.mod``, if any.
        python_modules: Module path with ``/`` separators (``src/pkg/util``) -> file
            (``__init__.py`` before ``.py`` before ``.pyi``).
        python_prefixes: Every Python module path and every directory above one, to reject
            third-party imports with one lookup per candidate root.
        python_names: Every name of those paths' segments (``src/pkg/util`` -> ``src``,
            ``pkg``, ``util``): a module whose first segment is none of them is third-party.
        python_roots: Directory holding Python files -> where its absolute imports may start.
        go_packages: Directory (``""`` for the root) -> its non-test ``.go`` files, sorted.
        by_basename: File name -> the paths with that name, sorted.
        java_classes: ``(package, class)`` -> the Java file declaring it (a non-test file
            before a test file declaring the same class).
        java_packages: Java package -> its files, sorted (test files too: import rules
            filter them out for non-test importers).
        csharp_namespaces: C# namespace -> its files, sorted (test files too, likewise).
        js_packages: Name a ``package.json`` declares -> its directory (the shallowest one
            when several declare it).
        rust_crates: Crate name a ``Cargo.toml`` declares (as code names it) -> its directory.
    """

    paths: frozenset[str]
    go_module: str | None
    python_modules: Mapping[str, str]
    python_prefixes: frozenset[str]
    python_names: frozenset[str]
    python_roots: Mapping[str, tuple[str, ...]]
    go_packages: Mapping[str, tuple[str, ...]]
    by_basename: Mapping[str, tuple[str, ...]]
    java_classes: Mapping[tuple[str, str], str]
    java_packages: Mapping[str, tuple[str, ...]]
    csharp_namespaces: Mapping[str, tuple[str, ...]]
    js_packages: Mapping[str, str]
    rust_crates: Mapping[str, str]

    @classmethod
    def build(
        cls,
        paths: Iterable[str],
        *,
        packages: Mapping[str, str | None] | None = None,
        go_mod_module: str | None = None,
    ) -> RepoFiles:
        """Index a repository's paths.

        Args:
            paths: Repository-relative posix paths of every indexed file.
            packages: Path -> declared package or namespace (:attr:`FileOutline.package`), used
                for Java and C# files, and the names manifests declare (``package.json``,
                ``Cargo.toml``: :func:`~repocontext.index.links._import_rules.manifest_name`).
            go_mod_module: The ``module`` line of the root ``go.mod``.

        Returns:
            The indexed file set.
        """
        ordered = sorted(set(paths))
        modules = python_modules(ordered)
        go_packages: dict[str, list[str]] = defaultdict(list)
        by_basename: dict[str, list[str]] = defaultdict(list)
        for path in ordered:
            directory, name = posixpath.split(path)
            if name.endswith(".go") and not name.endswith("_test.go"):
                go_packages[directory].append(path)
            by_basename[name].append(path)
        declared = packages or {}
        java: dict[str, list[str]] = defaultdict(list)
        csharp: dict[str, list[str]] = defaultdict(list)
        for path, package in sorted(declared.items()):
            if package and path.endswith(".java"):
                java[package].append(path)
            elif package and path.endswith(".cs"):
                csharp[package].append(path)
        manifests: dict[str, dict[str, str]] = {name: {} for name in MANIFESTS}
        # (shallowest first: a package's copy in a fixture or an example does not win)
        for path in sorted(declared, key=lambda p: (p.count("/"), p)):
            directory, name = posixpath.split(path)
            package = declared[path]
            if package and name in manifests:
                manifests[name].setdefault(package, directory)
        return cls(
            paths=frozenset(ordered),
            go_module=go_mod_module.strip().rstrip("/") if go_mod_module else None,
            python_modules=modules,
            python_prefixes=(prefixes := python_prefixes(modules)),
            python_names=frozenset(name for key in prefixes for name in key.split("/")),
            python_roots=python_roots(modules),
            go_packages=_freeze(go_packages),
            by_basename=_freeze(by_basename),
            java_classes={  # non-test files last: they win over a test declaring the class too
                (package, stem(path)): path
                for package, files in java.items()
                for path in sorted(files, key=lambda p: not is_test_path(p))
            },
            java_packages=_freeze(java),
            csharp_namespaces=_freeze(csharp),
            js_packages=manifests["package.json"],
            rust_crates=manifests["Cargo.toml"],
        )


def python_prefixes(modules: Iterable[str]) -> frozenset[str]:
    """Every module key and every directory above one (``a/b/c`` -> ``a``, ``a/b``, ``a/b/c``)."""
    prefixes: set[str] = set()
    for key in modules:
        while key and key not in prefixes:
            prefixes.add(key)
            key = _dir(key)
    return frozenset(prefixes)


def python_roots(modules: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Where absolute imports from each directory holding Python files may start.

    The root, ``src/``, then the importer's directories that are not packages, nearest first
    (the script directory on ``sys.path``, as pytest's rootdir-less insertion does); inside a
    package Python 3 has no implicit relative imports.
    """
    packages = {key for key, path in modules.items() if _base(path).startswith("__init__.")}
    directories = {_dir(path) for path in modules.values()}
    return {
        d: tuple(dict.fromkeys(("", "src", *(a for a in ancestors_of(d) if a not in packages))))
        for d in directories
    }


def python_modules(paths: Iterable[str]) -> dict[str, str]:
    """Module key (``src/pkg/util``) -> its file: ``__init__.py``, else ``.py``, else ``.pyi``."""
    ranked: dict[str, tuple[int, str]] = {}
    for path in paths:
        stem, ext = posixpath.splitext(path)
        if ext not in (".py", ".pyi"):
            continue
        package = _base(stem) == "__init__"
        key = _dir(stem) if package else stem
        rank = (0 if package else 2) + (ext == ".pyi")
        if key not in ranked or (rank, path) < ranked[key]:
            ranked[key] = (rank, path)
    return {key: path for key, (_, path) in ranked.items()}


def stem(path: str) -> str:
    """A path's file name without its extension (``src/Main.java`` -> ``Main``)."""
    return posixpath.splitext(_base(path))[0]


def ancestors_of(directory: str) -> Iterator[str]:
    """The directory and its parents, nearest first, without the root."""
    while directory:
        yield directory
        directory = _dir(directory)


def _dir(path: str) -> str:
    return path.rpartition("/")[0]


def _base(path: str) -> str:
    return path.rpartition("/")[2]


def _freeze(groups: Mapping[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {key: tuple(values) for key, values in groups.items()}
