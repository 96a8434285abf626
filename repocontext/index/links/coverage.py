"""Covering tests: the test files that import, reference or are named after each source file.

:func:`covering_tests` makes the ``test`` links of a whole repository; :func:`test_links` those
of one source file from the links pointing at it, as the projections recompute them.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable

from repocontext.index.links._naming import is_covered_source, naming_index
from repocontext.index.links.references import listing
from repocontext.index.links.repo_files import PACKAGED
from repocontext.index.model import IMPORT, REFERENCE, TEST, Link
from repocontext.index.parsing.languages import is_test_path

__all__ = ["covering_tests", "test_links"]


def covering_tests(links: Iterable[Link], all_files: Iterable[str]) -> dict[str, list[Link]]:
    """Find the test files covering each non-test source file.

    A test covers a file when it imports it, references its symbols, or is named after it
    (``test_x.py``, ``x_test.go``, ``x.test.ts``, ``XTest.java``, ``XTests.cs``,
    ``x_spec.rb``; next to the file or in a test tree mirroring its directories).

    Args:
        links: ``import`` and ``reference`` links of the repository.
        all_files: Every indexed path.

    Returns:
        Every non-test source file -> ``test`` links (see :func:`test_links`).
    """
    everything = sorted(set(all_files))
    sources = [p for p in everything if is_covered_source(p)]
    source_set = set(sources)
    into: dict[str, list[Link]] = defaultdict(list)
    for link in links:
        if link.target in source_set:
            into[link.target].append(link)
    named = naming_index(everything)
    return {p: test_links(p, into.get(p, ()), named.get(p, ())) for p in sources}


def test_links(target: str, incoming: Iterable[Link], named_tests: Iterable[str]) -> list[Link]:
    """Return the ``test`` links covering one source file.

    Args:
        target: The covered source file.
        incoming: ``import`` and ``reference`` links pointing at it (others are ignored).
        named_tests: Test files named after it (from :func:`naming_index`).

    Returns:
        One link per test (source = test file), sorted by test. The reason lists the evidence
        strongest first (import, then reference, then naming), separated by ``"; "``. A Java
        wildcard import or a C# ``using`` of a namespace (an import link with names ``*``)
        reaches every file of the package: it is evidence only beside another.
    """
    evidence: dict[str, list[tuple[int, str, tuple[str, ...]]]] = defaultdict(list)
    package_wide: set[str] = set()
    for link in incoming:
        if link.target != target or not is_test_path(link.source):
            continue
        if link.kind == IMPORT and link.names == ("*",) and link.source.endswith(PACKAGED):
            package_wide.add(link.source)  # every file of a package: evidence with another
        elif link.kind == IMPORT:
            evidence[link.source].append((0, f"test imports {target}", ()))
        elif link.kind == REFERENCE:
            evidence[link.source].append((1, listing("test references", link.names), link.names))
    for test in named_tests:
        evidence[test].append((2, f"naming {posixpath.basename(test)}", ()))
    for test in package_wide & evidence.keys():
        evidence[test].append((0, f"test imports {target}", ()))
    covered: list[Link] = []
    for test, found in sorted(evidence.items()):
        found.sort()
        reason = "; ".join(dict.fromkeys(r for _, r, _ in found))
        names = tuple(sorted({n for _, _, ns in found for n in ns}))
        covered.append(Link(test, target, TEST, reason, names))
    return covered
