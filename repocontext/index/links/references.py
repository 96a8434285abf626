"""Reference links: from the names a file uses to the files defining them.

A name defined in one other file links to it; a name defined in several links to those of them
the file imports. The rules (language families, examples and tests, member-only names) are
spelled out in :func:`reference_links`.
"""

from __future__ import annotations

import functools
import posixpath
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Final

from repocontext.index.links._import_rules import C_HEADERS, C_SOURCES, third_party_names
from repocontext.index.links.facts import local_scopes
from repocontext.index.links.repo_files import RepoFiles
from repocontext.index.model import REFERENCE, FileOutline, Link
from repocontext.index.parsing._lexer import MEMBER_ACCESS
from repocontext.index.parsing.languages import is_test_path, language_for

__all__ = [
    "MAX_DEFINING_FILES",
    "REFERENCE_STOPLIST",
    "build_symbol_index",
    "listing",
    "reference_links",
]

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


def build_symbol_index(outlines: Mapping[str, FileOutline]) -> dict[str, frozenset[str]]:
    """Map every defined name (top-level and nested, not local) to the files defining it.

    A definition nested in a function or method is local (see
    :func:`~repocontext.index.links.facts.local_scopes`): no other file can name it, so it
    defines nothing here.

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
        Link(path, target, REFERENCE, listing("references symbol", names), tuple(sorted(names)))
        for target, names in sorted(by_target.items())
    ]


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


def listing(label: str, names: Iterable[str]) -> str:
    """A link's reason: ``label name``, or the first three names and how many more."""
    unique = sorted(set(names))
    if len(unique) == 1:
        return f"{label} {unique[0]}"
    more = f" (+{len(unique) - 3} more)" if len(unique) > 3 else ""
    plural = label.replace("symbol", "symbols")
    return f"{plural} {', '.join(unique[:3])}{more}"
