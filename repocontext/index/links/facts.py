"""What the projections keep of one file, and the definitions they read when they need them.

A :class:`~repocontext.index.projections.projection.ProjectionState` keeps every file's
:class:`Facts`: the names it defines and references, its imports and package, and the fully
qualified names it defines. The definitions themselves (:data:`Definitions`: kind, signature,
lines) are needed only to write symbol records; a state keeps them only for the files whose
records it has yet to write, and reads a file's back from its node when a change needs them
again.
"""

from __future__ import annotations

import dataclasses
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from repocontext.index.files.nodes import flat_symbols, outline_of
from repocontext.index.model import FileOutline, Symbol
from repocontext.index.parsing._lexer import MEMBER_ACCESS

__all__ = [
    "NO_FACTS",
    "Definitions",
    "Facts",
    "definitions_of",
    "file_facts",
    "local_scopes",
    "member_names",
]

Definitions = dict[str, tuple[Symbol, ...]]
"""Fully qualified name -> its definitions in one file (symbols without children)."""


@dataclass(frozen=True, slots=True)
class Facts:
    """What the projections need of one parsed file (its outline without the symbol tree)."""

    outline: FileOutline  # symbols and references dropped: the fields below hold them
    defines: tuple[str, ...]  # bare names it defines, sorted (a frozenset: 6x the memory)
    names: tuple[str, ...]  # the same plus impl blocks' (the defines object when no impl)
    refs: tuple[str, ...]  # the outline's references (sorted; a tuple is a fraction of a set)
    defs: tuple[str, ...]  # the fully qualified names it defines (each once)
    # Of ``defines``, the names it defines only as members of a type (a method, a nested
    # class), sorted; and of ``refs``, those it uses as members. Only in the languages of
    # MEMBER_ACCESS, where a name used only bare is no use of a member (reference_links).
    members: tuple[str, ...] = ()
    member_refs: tuple[str, ...] = ()


NO_FACTS: Final = Facts(FileOutline(language=""), (), (), (), ())

_LOCAL_SCOPES: Final = frozenset({"function", "method", "constructor"})
# Kinds whose direct children are members (reached as `x.name` or `Type::name`).
_TYPES: Final = frozenset({"class", "struct", "interface", "trait", "impl", "enum"})
# C has no nested functions, and a C++ function "holding" definitions is nearly always a
# macro that broke the parse (`FMT_CONSTEXPR auto f() ->`): its contents are not local.
_NO_LOCALS: Final = frozenset({"c", "cpp"})


def local_scopes(language: str | None) -> frozenset[str]:
    """Kinds whose nested definitions are local in ``language`` (none in C and C++).

    A local definition is in a function's body: not a name other files can use.
    """
    return frozenset() if language in _NO_LOCALS else _LOCAL_SCOPES


_Item = TypeVar("_Item")


def file_facts(
    node: Mapping[str, Any] | None, parsed: FileOutline | None, *, definitions: bool = True
) -> tuple[Facts, Definitions] | None:
    """A file's facts and definitions: from its parsed outline if given, else off its node.

    ``definitions`` False: none are built (empty), for a caller that will not need them.
    """
    if node is None:
        return None
    if parsed is not None:
        bare = dataclasses.replace(parsed, symbols=(), references=(), member_references=())
        walked = _walked(parsed)
        symbols = list(_childless(symbol for symbol, _, _ in walked))
        named: Iterable[tuple[str, str, str, bool, bool]] = _named(walked)
        refs: Iterable[str] = parsed.references
        member_refs: Iterable[str] = parsed.member_references
    else:
        bare_outline = outline_of(node, whole=False)  # (no symbol tree is built)
        if bare_outline is None:
            return None
        bare, refs = bare_outline, node.get("references") or ()
        member_refs = node.get("memberReferences") or ()
        wires = _scoped(
            node.get("symbols") or (),
            lambda w: (w["kind"], w.get("children") or ()),
            local_scopes(bare.language),
        )
        named = (
            (w["kind"], w["name"], w["fullyQualifiedName"], local, member)
            for w, local, member in wires
        )
        if not definitions:
            return _facts_from(bare, named, refs, member_refs), {}
        symbols = list(flat_symbols(node))
    return _facts_from(bare, named, refs, member_refs), _grouped(symbols) if definitions else {}


def member_names(outline: FileOutline) -> frozenset[str]:
    """The names ``outline`` defines only as members of a type (see :attr:`Facts.members`)."""
    return frozenset(_facts_from(outline, _named(_walked(outline)), (), ()).members)


def _walked(outline: FileOutline) -> list[tuple[Symbol, bool, bool]]:
    scopes = local_scopes(outline.language)
    return list(_scoped(outline.symbols, lambda s: (s.kind, s.children), scopes))


def _named(walked: list[tuple[Symbol, bool, bool]]) -> list[tuple[str, str, str, bool, bool]]:
    return [(s.kind, s.name, s.fq_name, local, member) for s, local, member in walked]


def definitions_of(node: Mapping[str, Any] | None) -> Definitions:
    """The definitions of a stored file node (none for ``None``)."""
    return _grouped(flat_symbols(node) if node is not None else ())


def _grouped(symbols: Iterable[Symbol]) -> Definitions:
    found: dict[str, list[Symbol]] = defaultdict(list)
    for symbol in symbols:
        found[symbol.fq_name].append(symbol)
    return {fq: tuple(group) for fq, group in found.items()}


def _childless(symbols: Iterable[Symbol]) -> Iterable[Symbol]:
    for s in symbols:
        if s.children:
            s = Symbol(s.kind, s.name, s.fq_name, s.signature, s.start_line, s.end_line)
        yield s


def _scoped(
    roots: Iterable[_Item],
    kind_and_children: Callable[[_Item], tuple[str, Iterable[_Item]]],
    scopes: frozenset[str],
) -> Iterator[tuple[_Item, bool, bool]]:
    """Each symbol (a :class:`Symbol` or its wire form), depth first in source order.

    With it, whether it is local (inside the body of one of the ``scopes`` kinds) and
    whether it is a member (directly inside a class, struct, interface, trait, impl or enum;
    the callers count any ``method`` as one too: a Go method is outlined at file level).
    """
    pending = [(root, False, False) for root in reversed(list(roots))]
    while pending:
        item, local, member = pending.pop()
        yield item, local, member
        kind, children = kind_and_children(item)
        inner, typed = local or kind in scopes, kind in _TYPES
        pending.extend((child, inner, typed) for child in reversed(list(children)))


def _facts_from(
    bare: FileOutline,
    named: Iterable[tuple[str, str, str, bool, bool]],
    refs: Iterable[str],
    member_refs: Iterable[str],
) -> Facts:
    """Facts from each symbol's ``(kind, name, fully qualified name, local, member)``.

    A local symbol (a helper nested in a function) has a qualified name and a record, but
    defines no name for other files' references.
    """
    # Names are interned: the same few thousand names recur in every file, and the state
    # keeps every file's facts for as long as the repository is served.
    intern = sys.intern
    defines: set[str] = set()
    names: set[str] = set()
    members: set[str] = set()
    outside: set[str] = set()  # (defined outside a type too: not only a member)
    qualified: dict[str, None] = {}
    for kind, name, fq, local, member in named:
        qualified[fq] = None
        if local:
            continue
        name = intern(name)
        names.add(name)
        (members if member or kind == "method" else outside).add(name)  # (a Go method too)
        if kind != "impl":
            defines.add(name)
    kept = tuple(sorted(defines))
    dotted = bare.language in MEMBER_ACCESS
    return Facts(
        outline=bare,
        defines=kept,
        names=kept if len(names) == len(defines) else tuple(sorted(names)),
        refs=tuple(sorted(map(intern, refs))),
        defs=tuple(qualified),
        members=tuple(sorted(members.difference(outside))) if dotted else (),
        member_refs=tuple(map(intern, member_refs)) if dotted else (),  # (sorted already)
    )
