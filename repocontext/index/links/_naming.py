"""Covering tests by naming: the test files each source file's name is given by.

``test_x.py`` covers ``x.py``, ``XTests.cs`` covers ``X.cs``, a Rust ``tests/x.rs`` the
module ``x`` of its crate, and so on (docs/indexing.md, *Covering tests*). A file next to
the test wins; otherwise the candidates whose directories the test tree mirrors best.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from repocontext.index.links._import_rules import C_SOURCES
from repocontext.index.parsing.languages import is_test_path, language_for

__all__ = ["is_covered_source", "naming_index"]

_TEST_DIRS: Final = frozenset({"test", "tests", "spec", "specs", "__tests__", "testing"})
_JS_SOURCES: Final = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
# (test file extension, prefix, suffix, covered extensions, same directory only)
_NAMING_RULES: Final[tuple[tuple[str, str, str, tuple[str, ...], bool], ...]] = (
    (".py", "test_", "", (".py",), False),
    (".py", "", "_test", (".py",), False),
    (".go", "", "_test", (".go",), True),
    *(
        (ext, "", marker, _JS_SOURCES, False)
        for ext in _JS_SOURCES
        for marker in (".test", ".spec")
    ),
    (".java", "", "Tests", (".java",), False),
    (".java", "", "Test", (".java",), False),
    (".cs", "", "Tests", (".cs",), False),
    (".cs", "", "Test", (".cs",), False),
    (".cs", "", "Specs", (".cs",), False),
    (".cs", "", "Spec", (".cs",), False),
    (".rb", "", "_spec", (".rb",), False),
    (".rb", "", "_test", (".rb",), False),
    (".rb", "test_", "", (".rb",), False),
    *(
        (ext, prefix, suffix, C_SOURCES, False)
        for ext in C_SOURCES
        for prefix, suffix in (("test_", ""), ("", "_test"), ("", "-test"), ("", "_unittest"))
    ),
)


def is_covered_source(path: str) -> bool:
    """Return True for files tests can cover: known language, not a test themselves."""
    return language_for(path) is not None and not is_test_path(path)


def naming_index(all_files: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Map each source file to the test files named after it, sorted.

    Args:
        all_files: Every indexed path.

    Returns:
        Source path -> test paths (only sources some test is named after).
    """
    everything = sorted(set(all_files))
    tests = [p for p in everything if is_test_path(p)]
    sources = [p for p in everything if is_covered_source(p)]
    found: dict[str, list[str]] = defaultdict(list)
    for test, target in _naming_pairs(tests, sources):
        found[target].append(test)
    return {target: tuple(sorted(set(named))) for target, named in found.items()}


def _naming_pairs(tests: list[str], sources: list[str]) -> Iterator[tuple[str, str]]:
    by_name: dict[str, list[str]] = defaultdict(list)
    rust_modules: dict[str, list[str]] = defaultdict(list)
    for source in sources:
        name = posixpath.basename(source)
        by_name[name].append(source)
        if name.endswith(".rs"):
            rust_modules[_rust_module(source)].append(source)
    for test in tests:
        if test.endswith(".rs"):
            yield from ((test, target) for target in _rust_named(test, rust_modules))
            continue
        names, same_dir_only = _covered_names(posixpath.basename(test))
        candidates = [c for n in names for c in by_name.get(n, ())]
        for target in _pick(posixpath.dirname(test), candidates, same_dir_only):
            yield test, target


def _rust_module(path: str) -> str:
    """The module a Rust file is: its stem, or its directory's name for ``x/mod.rs``."""
    stem = posixpath.splitext(posixpath.basename(path))[0]
    return posixpath.basename(posixpath.dirname(path)) if stem == "mod" else stem


def _rust_named(test: str, modules: Mapping[str, list[str]]) -> list[str]:
    """The source module a Rust integration test is named after, in its own crate.

    ``tests/client.rs``, ``tests/test_client.rs`` and ``tests/client_test(s).rs`` name the
    crate's ``client`` module (``src/client.rs``, ``src/clients/client.rs``,
    ``src/client/mod.rs``): the files named so under the ``src`` beside the first ``tests``
    directory, the shallowest if they differ in depth (``src/server.rs`` before
    ``src/bin/server.rs``), none if several are equally shallow.
    """
    parts = test.split("/")
    if "tests" not in parts[:-1]:
        return []  # (a test by file name only: Rust names none so)
    crate = parts[: parts.index("tests")]
    src = "/".join([*crate, "src", ""])
    base = posixpath.splitext(parts[-1])[0]
    if base in ("main", "mod"):  # a test of several files, `tests/cli/main.rs`: named `cli`
        base = parts[-2]
    for prefix, suffix in (("test_", ""), ("", "_tests"), ("", "_test")):
        long_enough = len(base) > len(prefix) + len(suffix)
        if long_enough and base.startswith(prefix) and base.endswith(suffix):
            base = base[len(prefix) : len(base) - len(suffix)]
            break
    if base in ("tests", "main", "lib"):  # (a crate's root is no module a test is named after)
        return []
    found = [m for m in modules.get(base, ()) if m.startswith(src)]
    if not found:
        return []
    shallowest = min(m.count("/") for m in found)
    found = [m for m in found if m.count("/") == shallowest]
    return found if len(found) == 1 else []


def _covered_names(test_name: str) -> tuple[tuple[str, ...], bool]:
    stem, ext = posixpath.splitext(test_name)
    for rule_ext, prefix, suffix, covered, same_dir_only in _NAMING_RULES:
        named = len(stem) > len(prefix) + len(suffix)  # an empty base names no file
        if ext == rule_ext and named and stem.startswith(prefix) and stem.endswith(suffix):
            base = stem[len(prefix) : len(stem) - len(suffix)]
            return tuple(base + e for e in covered), same_dir_only
    return (), False


def _pick(test_dir: str, candidates: list[str], same_dir_only: bool) -> list[str]:
    """Candidates next to the test, else those whose directories the test tree mirrors best."""
    near = [c for c in candidates if posixpath.dirname(c) == test_dir]
    if near or same_dir_only or not candidates:
        return near
    scored = [(_mirror_score(test_dir, posixpath.dirname(c)), c) for c in candidates]
    best = max(score for score, _ in scored)
    winners = [c for score, c in scored if score == best]
    return winners if best > 0 or len(winners) == 1 else []


def _mirror_score(test_dir: str, source_dir: str) -> int:
    """How many trailing directories match once test directories are left out."""
    mirrored = [
        s.removesuffix(".Tests").removesuffix(".Test")
        for s in test_dir.split("/")
        if s and s.lower() not in _TEST_DIRS
    ]
    score = 0
    for ours, theirs in zip(reversed(mirrored), reversed(source_dir.split("/")), strict=False):
        if ours != theirs:
            break
        score += 1
    return score
