"""Store values of the code index: file nodes and outlines as msgpack-able dicts.

A file node (``repo/{id}/file/{path}`` in the structural tree) holds the stat tuple and
digest used by the fast path, the file's classification and its whole outline, so every
projection can be rebuilt from file nodes alone. Field names are camelCase: they are what
the MCP tools return.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from repocontext.index.files.extract import Extracted
from repocontext.index.model import FileOutline, ImportRef, Symbol
from repocontext.store import CONTENT, STRUCTURAL, Store, Value
from repocontext.store.keys import content_key, family_prefix, file_key
from repocontext.tokens import DEFAULT_ENCODING

__all__ = [
    "NODE_FORMAT",
    "STAT_FIELDS",
    "count_symbols",
    "file_node",
    "file_text",
    "first_symbols",
    "flat_symbols",
    "iter_file_nodes",
    "iter_symbols",
    "load_file_nodes",
    "load_stat_fields",
    "nodes_under",
    "outline_of",
    "stat_matches",
    "symbol_from_wire",
    "symbol_to_wire",
    "touched_node",
]

NODE_FORMAT: Final = 13
"""Bumped when extraction changes, so that every file is parsed again."""


STAT_FIELDS: Final = frozenset(
    {"path", "format", "size", "mtimeNs", "inode", "tokenEncoding", "blobId", "hasContent"}
    | {"oversized"}
)
"""What a run needs of each stored node to tell whether its file changed."""


def file_node(
    item: Extracted, index_blob: str | None, encoding: str = DEFAULT_ENCODING
) -> dict[str, Value]:
    """Return the file node for one extracted file (``encoding``: of its token count)."""
    entry, outline = item.entry, item.outline
    node: dict[str, Value] = {
        "format": NODE_FORMAT,
        "path": entry.path,
        "language": item.language,
        "size": entry.size,
        "mtimeNs": entry.mtime_ns,
        "inode": entry.inode,
        "blobId": item.blob_id,
        "matchesGitIndex": None if index_blob is None else index_blob == item.blob_id,
        "isTest": item.is_test,
        "isConfig": item.is_config,
        "binary": item.binary,
        "oversized": entry.oversized,
        "undecodable": item.undecodable,
        "hasContent": item.text is not None,
        "lines": 0 if item.text is None else item.text.count("\n") + 1,
        "tokenCount": item.token_count,
        "tokenEncoding": encoding,
        "issue": item.issue,
        "syntaxErrors": bool(outline and outline.errors),
        "package": outline.package if outline else item.manifest,
        "symbols": [symbol_to_wire(s) for s in outline.symbols] if outline else [],
        "imports": [_import_to_wire(i) for i in outline.imports] if outline else [],
        "references": list(outline.references) if outline else [],
        "memberReferences": list(outline.member_references) if outline else [],
    }
    return node


def file_text(store: Store, repo_id: str, path: str) -> str | None:
    """Return the stored text of a file (its content record), or ``None``."""
    record = store.get(CONTENT, content_key(repo_id, path))
    value = record.value if record is not None else None
    return str(value["text"]) if isinstance(value, dict) and "text" in value else None


def touched_node(node: Mapping[str, Value], item: Extracted) -> dict[str, Value]:
    """Return ``node`` with the new stat tuple of a file whose bytes did not change."""
    updated = dict(node)
    updated.update(size=item.entry.size, mtimeNs=item.entry.mtime_ns, inode=item.entry.inode)
    return updated


def stat_matches(node: Mapping[str, Any], size: int, mtime_ns: int, inode: int) -> bool:
    """Return True when a stored node's stat tuple (and format) equals the file's."""
    return (
        node.get("format") == NODE_FORMAT
        and node.get("size") == size
        and node.get("mtimeNs") == mtime_ns
        and node.get("inode") == inode
    )


def outline_of(node: Mapping[str, Any], *, whole: bool = True) -> FileOutline | None:
    """Rebuild the outline stored in a file node (``None`` for files without one).

    ``whole`` False leaves out the symbols and references (read them with
    :func:`flat_symbols` and the node's ``references``).
    """
    language = node.get("language")
    if not language or not node.get("hasContent"):
        return None
    return FileOutline(
        language=language,
        symbols=tuple(symbol_from_wire(s) for s in node.get("symbols") or ()) if whole else (),
        imports=tuple(_import_from_wire(i) for i in node.get("imports") or ()),
        references=tuple(node.get("references") or ()) if whole else (),
        package=node.get("package"),
        errors=bool(node.get("syntaxErrors")),
        member_references=tuple(node.get("memberReferences") or ()) if whole else (),
    )


def flat_symbols(node: Mapping[str, Any]) -> Iterator[Symbol]:
    """Every symbol of a node's outline as :func:`iter_symbols` orders them, without children.

    Cheaper than rebuilding the tree when only each symbol's own fields are wanted.
    """
    for wire in wire_symbols(node):
        yield Symbol(
            wire["kind"],
            wire["name"],
            wire["fullyQualifiedName"],
            wire["signature"],
            wire["startLine"],
            wire["endLine"],
        )


def wire_symbols(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The wire form of every symbol of a node's outline, in :func:`flat_symbols` order."""
    pending = list(reversed(node.get("symbols") or ()))
    while pending:
        wire = pending.pop()
        yield wire
        children = wire.get("children")
        if children:
            pending.extend(reversed(children))


def symbol_to_wire(symbol: Symbol) -> dict[str, Value]:
    """Return the wire form of a symbol and its children."""
    wire: dict[str, Value] = {
        "kind": symbol.kind,
        "name": symbol.name,
        "fullyQualifiedName": symbol.fq_name,
        "signature": symbol.signature,
        "startLine": symbol.start_line,
        "endLine": symbol.end_line,
    }
    if symbol.children:
        wire["children"] = [symbol_to_wire(c) for c in symbol.children]
    return wire


def symbol_from_wire(wire: Mapping[str, Any]) -> Symbol:
    """Invert :func:`symbol_to_wire`."""
    return Symbol(
        kind=wire["kind"],
        name=wire["name"],
        fq_name=wire["fullyQualifiedName"],
        signature=wire["signature"],
        start_line=wire["startLine"],
        end_line=wire["endLine"],
        children=tuple(symbol_from_wire(c) for c in wire.get("children") or ()),
    )


def iter_symbols(symbols: tuple[Symbol, ...]) -> Iterator[Symbol]:
    """Yield every symbol, depth first, in source order (a stack: no generator per level)."""
    pending = list(reversed(symbols))
    while pending:
        symbol = pending.pop()
        yield symbol
        if symbol.children:
            pending.extend(reversed(symbol.children))


def _import_to_wire(ref: ImportRef) -> list[Value]:
    return [ref.spec, ref.kind, ref.line, ref.level, list(ref.names), ref.system]


def _import_from_wire(wire: list[Any]) -> ImportRef:
    spec, kind, line, level, names, system = wire
    return ImportRef(spec, kind, line, level, tuple(names), bool(system))


def iter_file_nodes(store: Store, repo_id: str) -> Iterator[dict[str, Any]]:
    """Yield every file node of a repository in path order, one page at a time."""
    return nodes_under(store, family_prefix(repo_id, "file"))


def node_reader(store: Store, repo_id: str) -> Callable[[str], dict[str, Any] | None]:
    """A function reading one file node of a repository by path (``None``: no such node)."""

    def read(path: str) -> dict[str, Any] | None:
        record = store.get(STRUCTURAL, file_key(repo_id, path))
        return record.value if record is not None and isinstance(record.value, dict) else None

    return read


def nodes_under(store: Store, prefix: str) -> Iterator[dict[str, Any]]:
    """Yield the file nodes whose keys start with ``prefix``, in key order."""
    for record in store.iter_records(STRUCTURAL, prefix, page_size=2000):
        if isinstance(record.value, dict):
            yield record.value


def load_file_nodes(store: Store, repo_id: str) -> dict[str, dict[str, Any]]:
    """Return every file node of a repository by path."""
    return {str(node.get("path")): node for node in iter_file_nodes(store, repo_id)}


def load_stat_fields(store: Store, repo_id: str) -> dict[str, dict[str, Any]]:
    """Return :data:`STAT_FIELDS` of every file node by path (a fraction of a full read)."""
    prefix = family_prefix(repo_id, "file")
    return {
        str(fields.get("path")): fields
        for _, fields in store.iter_fields(STRUCTURAL, prefix, STAT_FIELDS)
    }


def count_symbols(symbols: list[Any]) -> int:
    """How many symbols a stored symbol tree holds, nested ones included."""
    return sum(1 + count_symbols(list(s.get("children") or [])) for s in symbols)


def first_symbols(symbols: list[Any], budget: int) -> list[Any]:
    """The first ``budget`` symbols in depth-first order, nested as stored."""
    kept: list[Any] = []

    def take(level: list[Any], into: list[Any]) -> None:
        nonlocal budget
        for symbol in level:
            if budget <= 0:
                return
            budget -= 1
            children = list(symbol.get("children") or [])
            copy = {**symbol, "children": []} if children else dict(symbol)
            into.append(copy)
            if children:
                take(children, copy["children"])

    take(symbols, kept)
    return kept
