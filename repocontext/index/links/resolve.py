"""Turn per-file outlines into links between repository files.

Pure functions over values: no store, no tree-sitter, no filesystem. :class:`RepoFiles` holds
the repository's paths and the lookup indexes built once per repository, so resolving one
import is a handful of dictionary lookups.

* :func:`resolve_imports` — ``import`` links from a file's imports (one rule per
  :attr:`ImportRef.kind`, see ``docs/indexing.md``); external and unresolvable imports yield
  nothing.
* :func:`reference_links` — ``reference`` links from names a file uses to the one other file
  that defines them (or to the defining files it imports).
* :func:`covering_tests` — ``test`` links from test files to the source files they cover.
* :func:`dependents` — the reverse projection, target -> links pointing at it.
"""

from __future__ import annotations

import functools
import posixpath
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from repocontext.index.links._import_rules import (
    C_HEADERS,
    C_SOURCES,
    JS_EXTENSION_ORDER,
    MANIFESTS,
    RULES,
    TS_EXTENSION_ORDER,
    python_modules,
    python_prefixes,
    python_roots,
    stem,
    third_party_names,
)
from repocontext.index.links._naming import is_covered_source, naming_index
from repocontext.index.links.facts import local_scopes, member_names
from repocontext.index.model import FileOutline, Link
from repocontext.index.parsing._lexer import MEMBER_ACCESS
from repocontext.index.parsing.languages import is_test_path, language_for

__all__ = [
    "JS_EXTENSION_ORDER",
    "MAX_DEFINING_FILES",
    "PACKAGED",
    "REFERENCE_STOPLIST",
    "TS_EXTENSION_ORDER",
    "RepoFiles",
    "build_symbol_index",
    "covering_tests",
    "dependents",
    "is_covered_source",
    "link_repository",
    "naming_index",
    "reexports_of",
    "reference_links",
    "refresh_reexports",
    "resolve_imports",
    "test_links",
    "through_reexports",
]

IMPORT: Final = "import"
REFERENCE: Final = "reference"
TEST: Final = "test"

MAX_DEFINING_FILES: Final = 5
"""A name defined in more files than this is too ambiguous to make a reference link."""
# Names (compared lowercased) too common to make a reference link; so are names under 3.
# fmt: off
REFERENCE_STOPLIST: Final = frozenset((
    "self", "this", "cls", "super", "len", "str", "int", "print", "get", "set", "value",
    "values", "key", "keys", "item", "items", "name", "data", "type", "list", "dict", "map",
    "new", "run", "init", "main", "test", "error", "log", "console", "string", "object",
    "result", "args", "kwargs", "index", "size", "count", "path", "file", "open", "close",
    "read", "write", "push", "append", "format",
    # methods of standard interfaces every type implements (Rust traits, JS/Java/C# objects)
    "next", "size_hint", "hash", "peek", "fmt", "clone", "eq", "cmp", "partial_cmp", "drop",
    "deref", "deref_mut", "from", "into", "try_from", "try_into", "as_ref", "as_mut",
    "default", "index_mut", "borrow", "borrow_mut", "poll", "call", "to_string", "then",
    "catch", "equals", "hashcode", "tostring", "compareto", "iterator", "length", "std",
    # methods of the standard collections, strings and channels (a `names.remove(x)` on a
    # list is no use of a repository's own `remove`)
    "to_s", "to_a", "to_h", "to_i", "to_f", "to_sym", "inspect", "each", "remove", "contains",
    "add", "delete", "insert", "clear", "resolve", "into_iter", "iter", "iter_mut", "recv",
    "send", "unwrap", "expect", "is_empty", "isempty", "empty", "content", "join", "split",
    "strip", "replace", "sort", "filter", "find", "apply", "message", "pop", "fetch",
    "empty?", "copy", "setdefault", "update", "gettype",
    # the platform's own types and reflection (.NET `Func<T>`, the JDK's `charAt`), and the
    # `Instance` of every singleton
    "func", "action", "charat", "newinstance", "getclass", "instance",
))
# fmt: on
_NOT_DEFINITIONS: Final = frozenset({"impl"})
# Languages whose files can name each other's symbols.
_FAMILIES: Final = {"typescript": "javascript", "tsx": "javascript", "cpp": "c"}

_EXAMPLE_DIRS: Final = frozenset({"examples", "example", "demo", "demos", "samples", "sample"})
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


def resolve_imports(path: str, outline: FileOutline, files: RepoFiles) -> list[Link]:
    """Resolve a file's imports to ``import`` links, one per target file, sorted by target.

    Args:
        path: The importing file.
        outline: Its outline.
        files: The repository's indexed file set.

    Returns:
        Links with kind ``import``; external, system and unresolvable imports yield none, and
        a file never links to itself. When two imports reach one file the first reason is kept
        and the names are merged, except that an import of the file itself replaces a
        package-wide one (names ``*``: a Java wildcard, a C# namespace).
    """
    found: dict[str, Link] = {}
    for ref in outline.imports:
        rule = RULES.get(ref.kind)
        if rule is None:
            continue
        for target, reason, names in rule(path, ref, files, outline.language):
            if target == path:
                continue
            prior = found.get(target)
            if prior is not None and names == ("*",):
                continue  # a package-wide import adds nothing to a file's own import
            if prior is not None and prior.names != ("*",):
                names = prior.names + tuple(n for n in names if n not in prior.names)
                reason = prior.reason
            found[target] = Link(path, target, IMPORT, reason, names)
    return [found[target] for target in sorted(found)]


def reexports_of(path: str, outline: FileOutline, files: RepoFiles) -> tuple[str, ...]:
    """The files a JavaScript/TypeScript file re-exports (``export ... from``), sorted."""
    rule = RULES["js_export"]
    found = {
        target
        for ref in outline.imports
        if ref.kind == "js_export"
        for target, _, _ in rule(path, ref, files, outline.language)
    }
    found.discard(path)
    return tuple(sorted(found))


def refresh_reexports(
    paths: Iterable[str],
    reexports: dict[str, tuple[str, ...]],
    outline_of: Callable[[str], FileOutline],
    files: RepoFiles,
    importers: Callable[[str], Iterable[str]],
) -> set[str]:
    """Recompute the re-exports of changed files; return the files whose links that changes.

    Args:
        paths: The files to recompute (changed or relinked).
        reexports: Barrel -> the files it re-exports, updated in place.
        outline_of: A file's outline (an empty one for a file gone).
        files: The repository's file set.
        importers: A file -> the files importing it (their ``import`` links).

    Returns:
        The files that reach a barrel whose re-exports changed: its importers, and those of
        the barrels re-exporting it in turn.
    """
    changed = []
    for path in paths:
        new = reexports_of(path, outline_of(path), files)
        if new != reexports.get(path, ()):
            if new:
                reexports[path] = new
            else:
                reexports.pop(path, None)
            changed.append(path)
    reached: set[str] = set()
    seen = set(changed)
    while changed:
        barrel = changed.pop()
        for importer in importers(barrel):
            reached.add(importer)
            if barrel in reexports.get(importer, ()) and importer not in seen:
                seen.add(importer)
                changed.append(importer)
    return reached


def through_reexports(imported: Iterable[str], reexports: Mapping[str, Iterable[str]]) -> set[str]:
    """``imported`` and every file reached from them through re-exports.

    Importing a barrel (``index.ts`` holding ``export * from "./schemas"``) reaches the
    names of the files it re-exports, at any depth: they disambiguate a name as the files
    imported directly do (:func:`reference_links`).
    """
    seen = set(imported)
    pending = [path for path in seen if path in reexports]
    while pending:
        for target in reexports.get(pending.pop(), ()):
            if target not in seen:
                seen.add(target)
                pending.append(target)
    return seen


def build_symbol_index(outlines: Mapping[str, FileOutline]) -> dict[str, frozenset[str]]:
    """Map every defined name (top-level and nested, not local) to the files defining it.

    A definition nested in a function or method is local (see
    :func:`~repocontext.index.links.facts.local_scopes`): no other file can name it, so it defines
    nothing here.

    Args:
        outlines: Path -> outline for every file of the repository.

    Returns:
        Bare name -> defining paths. ``impl`` blocks are not definitions of their type's name.
    """
    definers: dict[str, set[str]] = defaultdict(set)
    for path, outline in outlines.items():
        stack = list(outline.symbols)
        scopes = local_scopes(outline.language)
        while stack:
            symbol = stack.pop()
            if symbol.kind not in scopes:  # a function's nested helpers are local
                stack.extend(symbol.children)
            if symbol.kind not in _NOT_DEFINITIONS:
                definers[symbol.name].add(path)
    return {name: frozenset(paths) for name, paths in definers.items()}


def reference_links(
    path: str,
    outline: FileOutline,
    symbol_index: Mapping[str, Collection[str]],
    imported: Collection[str] = (),
    *,
    references: Iterable[str] | None = None,
    files: RepoFiles | None = None,
    member_references: Collection[str] | None = None,
    only_members: Callable[[str, str], bool] | None = None,
) -> list[Link]:
    """Link a file to the files defining the names it references.

    Only definitions in the same language family count (JavaScript with TypeScript, C with
    C++). A name defined in exactly one other file links to it (in C and C++, a header and
    the source file of its stem count as one: both are linked); a name defined in several files
    links to those of them the file imports (in C and C++, with the source files of the
    imported headers: ``sds.h`` declares what ``sds.c`` defines). A Go file reaches only the
    files of its own package (directory) and of the packages it imports. Then a file that is
    not a test drops test files, and one outside ``examples/`` (``demo/``, ``samples/``) the
    files in one: a test's mocks and a demo's handlers are not the code a library names.
    Names shorter than 3 characters, names in :data:`REFERENCE_STOPLIST` and names defined in
    more than :data:`MAX_DEFINING_FILES` files (of any language) are skipped.

    Args:
        path: The referencing file.
        outline: Its outline (its ``references`` are used).
        symbol_index: Name -> defining files, from :func:`build_symbol_index`.
        imported: The files this file imports (targets of its ``import`` links, and the
            files those re-export: :func:`through_reexports`).
        references: The names to resolve, when not the outline's own ``references``.
        files: The repository's file set; given, the names a Python file imports from
            third-party modules (``from copy import copy``) are not resolved (see
            :func:`~repocontext.index.links._import_rules.third_party_names`).
        member_references: The names the file uses as members, when not the outline's own
            ``member_references``.
        only_members: ``(path, name)`` -> whether that file defines the name only as a
            member of a type (a method, a nested class). Given, in the languages of
            :data:`~repocontext.index.parsing._lexer.MEMBER_ACCESS`, a name the file never uses as a
            member (``x.name``, Rust ``T::name``) does not reach such a file: a local
            ``response`` is no use of ``JSONProvider.response``.

    Returns:
        One ``reference`` link per target, sorted by target, names sorted.
    """
    imported_set = frozenset(imported)
    family = _FAMILIES.get(outline.language, outline.language)
    from_test = is_test_path(path)
    from_example = _is_example(path)
    directory = posixpath.dirname(path)
    by_target: dict[str, list[str]] = defaultdict(list)
    # Set intersection (in C) first: most referenced names are defined nowhere in the repository.
    used = outline.references if references is None else references
    if files is not None and outline.language == "python":
        external = third_party_names(path, outline.imports, files)
        if external:
            used = [name for name in used if name not in external]
    member_only = only_members if outline.language in MEMBER_ACCESS else None
    members = frozenset(  # (a set: looked up for most resolvable names)
        (outline.member_references if member_references is None else member_references)
        if member_only is not None
        else ()
    )
    for name in symbol_index.keys() & used:
        definers = symbol_index[name]
        if len(definers) > MAX_DEFINING_FILES or len(name) < 3:
            continue
        if name.lower() in REFERENCE_STOPLIST:
            continue
        others = [d for d in definers if d != path and _family_of(d) == family]
        if family == "go":  # a Go name is visible in its package, else only through an import
            others = [d for d in others if d in imported_set or posixpath.dirname(d) == directory]
        if len(others) > 1 and not (family == "c" and _header_and_source(others)):
            # (a test's or a demo's definition makes a name ambiguous too)
            kept = [d for d in others if d in imported_set]
            if family == "c" and kept:  # the source file of an included header too
                stems = {_c_stem(d) for d in kept}
                kept += [d for d in others if d not in imported_set and _c_stem(d) in stems]
            others = kept
        if member_only is not None and name not in members:  # (no use of a method or field;
            others = [d for d in others if not member_only(d, name)]  # after the ambiguity)
        for target in _kept(others, from_test, from_example):
            by_target[target].append(name)
    return [
        Link(path, target, REFERENCE, _listing("references symbol", names), tuple(sorted(names)))
        for target, names in sorted(by_target.items())
    ]


def link_repository(outlines: Mapping[str, FileOutline], files: RepoFiles) -> list[Link]:
    """Resolve the imports and references of every file of a repository.

    Args:
        outlines: Path -> outline for every parsed file.
        files: The repository's indexed file set.

    Returns:
        All ``import`` and ``reference`` links, grouped by source in path order.
    """
    index = build_symbol_index(outlines)
    members = {path: member_names(outline) for path, outline in outlines.items()}
    reexports = {path: reexports_of(path, outline, files) for path, outline in outlines.items()}
    links: list[Link] = []
    for path in sorted(outlines):
        imports = resolve_imports(path, outlines[path], files)
        links += imports
        targets = through_reexports((i.target for i in imports), reexports)
        links += reference_links(
            path,
            outlines[path],
            index,
            targets,
            files=files,
            only_members=lambda target, name: name in members[target],
        )
    return links


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
            evidence[link.source].append((1, _listing("test references", link.names), link.names))
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


def dependents(links: Iterable[Link]) -> dict[str, list[Link]]:
    """Project links onto their targets: who imports, references or tests each file.

    Args:
        links: Any links.

    Returns:
        Target -> the links pointing at it, sorted by source, kind and reason.
    """
    by_target: dict[str, list[Link]] = defaultdict(list)
    for link in links:
        by_target[link.target].append(link)
    return {
        target: sorted(found, key=lambda x: (x.source, x.kind, x.reason))
        for target, found in sorted(by_target.items())
    }


# --- reference helpers ------------------------------------------------------------------------


def _kept(targets: list[str], from_test: bool, from_example: bool) -> list[str]:
    """The targets a file may reference: no test's unless a test's, no demo's unless a demo's."""
    if not from_test:
        targets = [d for d in targets if not is_test_path(d)]
    if not from_example:
        targets = [d for d in targets if not _is_example(d)]
    return targets


@functools.lru_cache(maxsize=65536)
def _is_example(path: str) -> bool:
    """Under an ``examples``, ``example``, ``demo`` or ``samples`` directory."""
    return not _EXAMPLE_DIRS.isdisjoint(path.lower().split("/")[:-1])


def _header_and_source(paths: list[str]) -> bool:
    """``sds.h`` declares what ``sds.c`` defines: one name of one unit, not an ambiguity."""
    if len(paths) != 2:
        return False
    header, source = sorted(paths, key=lambda p: p.endswith(C_SOURCES))
    return (
        header.endswith(C_HEADERS)
        and source.endswith(C_SOURCES)
        and _c_stem(header) == _c_stem(source)
    )


def _c_stem(path: str) -> str:
    """``include/sds.h`` and ``src/sds.c`` -> ``sds``: a header and its source file."""
    return posixpath.splitext(posixpath.basename(path))[0]


@functools.lru_cache(maxsize=65536)
def _family_of(path: str) -> str | None:
    language = language_for(path)
    return _FAMILIES.get(language, language) if language else None


# --- reasons -----------------------------------------------------------------------------------


def _listing(label: str, names: Iterable[str]) -> str:
    unique = sorted(set(names))
    if len(unique) == 1:
        return f"{label} {unique[0]}"
    more = f" (+{len(unique) - 3} more)" if len(unique) > 3 else ""
    plural = label.replace("symbol", "symbols")
    return f"{plural} {', '.join(unique[:3])}{more}"


def _freeze(groups: Mapping[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {key: tuple(values) for key, values in groups.items()}
