"""The wire form of the projection records.

A file's links, its reverse links, a name's users, a qualified name's definitions and a
directory's package record. :mod:`repocontext.index.projections.projection` decides which records to
compute; this module is what each one holds, and the inverse for a file's links (a process
adopting the stored records reads them back instead of resolving every import and
reference again).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from repocontext.errors import InvalidKeyError
from repocontext.index.model import IMPORT, REFERENCE, FileLinks, Link, RelatedLink, Symbol
from repocontext.store import SYMBOL, XREF, Store, Value
from repocontext.store.keys import xref_key

__all__ = [
    "MAX_USERS",
    "SymbolDefinition",
    "in_record",
    "linked_paths",
    "links_of_out_record",
    "name_record",
    "out_record",
    "pkg_record",
    "read_symbol_definitions",
    "stored_links",
    "stored_xref",
    "symbol_record",
]

MAX_USERS: Final = 200
"""A name record lists at most this many users (in path order) beside their count."""


def stored_xref(store: Store, repo_id: str, name: str) -> dict[str, Any]:
    """The stored xref record ``name`` (``out:{path}``, ``in:{path}``, ``name:{name}``).

    Empty when there is none, also when no key can hold the name: the links of a file
    nested too deep for one (its node has a key, the longer xref key does not) are
    computed but never stored.
    """
    try:
        record = store.get(XREF, xref_key(repo_id, name))
    except InvalidKeyError:
        return {}
    return dict(record.value) if record is not None and isinstance(record.value, dict) else {}


def linked_paths(store: Store, repo_id: str, name: str, field_name: str) -> list[str]:
    """The paths of one link list of a stored ``out:``/``in:`` record (``imports``...).

    Only the paths, without parsing the links: the graph signal of search reads the imports
    of its top hits on every query.
    """
    wires = stored_xref(store, repo_id, name).get(field_name)
    return [str(w["path"]) for w in wires if isinstance(w, dict)] if isinstance(wires, list) else []


def stored_links(store: Store, repo_id: str, name: str) -> FileLinks:
    """The links of a stored ``out:{path}`` or ``in:{path}`` record, parsed (none: empty)."""
    record = stored_xref(store, repo_id, name)

    def parsed(field_name: str) -> tuple[RelatedLink, ...]:
        wires = record.get(field_name)
        return tuple(
            RelatedLink(str(w["path"]), str(w.get("reason", "")), tuple(w.get("names", ())))
            for w in (wires if isinstance(wires, list) else ())
            if isinstance(w, dict)
        )

    return FileLinks(
        imports=parsed("imports"),
        references=parsed("references"),
        dependents=parsed("dependents"),
        covering_tests=parsed("coveringTests"),
    )


def links_of_out_record(path: str, record: Mapping[str, Any] | None) -> list[Link]:
    """The links an :func:`out_record` of ``path`` was made of (its inverse)."""
    if not record:
        return []
    return [
        Link(path, wire["path"], kind, wire["reason"], tuple(wire.get("names", ())))
        for field_name, kind in (("imports", IMPORT), ("references", REFERENCE))
        for wire in record.get(field_name, ())
    ]


def out_record(links: Iterable[Link]) -> dict[str, Any] | None:
    """The ``out:{path}`` record of a file's import and reference links (``None``: no links)."""
    imports = [_link_wire(link.target, link) for link in links if link.kind == "import"]
    refs = [_link_wire(link.target, link) for link in links if link.kind == "reference"]
    return {"imports": imports, "references": refs} if imports or refs else None


def in_record(incoming: Iterable[Link], covering: Iterable[Link]) -> dict[str, Any] | None:
    """The ``in:{path}`` record: dependents (sorted by source, kind, reason) and covering tests."""
    ordered = sorted(incoming, key=lambda x: (x.source, x.kind, x.reason))
    deps = [_link_wire(link.source, link) for link in ordered]
    tests = [_link_wire(link.source, link) for link in covering]
    return {"dependents": deps, "coveringTests": tests} if deps or tests else None


def name_record(name: str, users: Iterable[str]) -> dict[str, Any] | None:
    """The ``name:{name}`` record: the first users in path order and their count."""
    ordered = sorted(users)
    if not ordered:
        return None
    return {"name": name, "users": ordered[:MAX_USERS], "count": len(ordered)}


def _link_wire(other: str, link: Link) -> dict[str, Any]:
    wire: dict[str, Any] = {"path": other, "reason": link.reason}
    if link.names:
        wire["names"] = list(link.names)
    return wire


def symbol_record(fq: str, found: list[tuple[str, Symbol]]) -> dict[str, Any] | None:
    """A qualified name's record: its definitions, as (path, symbol) in path order."""
    if not found:
        return None
    return {
        "fullyQualifiedName": fq,
        "name": found[0][1].name,
        "defs": [
            {
                "path": path,
                "kind": symbol.kind,
                "signature": symbol.signature,
                "startLine": symbol.start_line,
                "endLine": symbol.end_line,
            }
            for path, symbol in found
        ],
    }


@dataclass(frozen=True, slots=True)
class SymbolDefinition:
    """Where a stored symbol record says a qualified name is defined.

    Attributes:
        path: The defining file.
        start_line: First line of the definition (1-based).
        end_line: Last line of the definition (inclusive).
    """

    path: str
    start_line: int
    end_line: int


def read_symbol_definitions(store: Store, key: str) -> tuple[SymbolDefinition, ...] | None:
    """The definitions a symbol record holds, in path order (``None``: no such record).

    The inverse of :func:`symbol_record`, for the fields a reader uses.
    """
    record = store.get(SYMBOL, key)
    if record is None or not isinstance(record.value, dict):
        return None
    definitions = record.value.get("defs")
    return tuple(
        _definition(d)
        for d in (definitions if isinstance(definitions, list) else ())
        if isinstance(d, dict)
    )


def _definition(wire: Mapping[str, Value]) -> SymbolDefinition:
    start, end = wire.get("startLine", 1), wire.get("endLine", 0)
    return SymbolDefinition(
        str(wire.get("path")),
        start if isinstance(start, int) else 1,
        end if isinstance(end, int) else 0,
    )


def pkg_record(directory: str, languages: Counter[str]) -> dict[str, Any] | None:
    """A directory's package record from its files' language counts (none when empty)."""
    counts = +languages  # drops zero counts
    if not counts:
        return None
    return {
        "path": directory,
        "files": sum(counts.values()),
        "languages": dict(sorted(counts.items())),
    }
