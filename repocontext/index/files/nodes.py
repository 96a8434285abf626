"""The record codec of file nodes: store values as msgpack-able dicts, read back as types.

A file node (``repo/{id}/file/{path}`` in the structural tree) holds the stat tuple and
digest used by the fast path, the file's classification and its whole outline, so every
projection can be rebuilt from file nodes alone. Field names are camelCase (the form the
store has always held). Read views parse a record once, here, into a
:class:`~repocontext.index.model.FileNode` (:func:`node_of`, :func:`read_file_node`); the
indexer's own passes read the raw dicts through the iterators below.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from repocontext.index.files.extract import Extracted
from repocontext.index.model import FileNode, FileOutline, ImportRef, NodeStat, Symbol
from repocontext.store import CONTENT, STRUCTURAL, Store, Value
from repocontext.store.keys import content_key, family_prefix, file_key
from repocontext.tokens import DEFAULT_ENCODING

__all__ = [
    "NODE_FORMAT",
    "STAT_FIELDS",
    "ParsedNodes",
    "content_blob_ids",
    "file_node",
    "file_text",
    "flat_symbols",
    "iter_file_nodes",
    "iter_symbols",
    "load_file_nodes",
    "load_stats",
    "node_of",
    "nodes_under",
    "outline_of",
    "read_file_node",
    "stat_of",
    "stored_blob_id",
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

_BLOB_FIELDS: Final = frozenset({"path", "blobId", "hasContent"})


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


def stat_of(node: Mapping[str, Any]) -> NodeStat:
    """The :class:`NodeStat` of a file node record (or of its stat fields alone)."""
    get = node.get
    return NodeStat(
        str(get("path")),
        get("size") or 0,
        get("mtimeNs") or 0,
        get("inode") or 0,
        get("blobId"),
        get("format") or 0,
        get("tokenEncoding"),
        bool(get("hasContent")),
        bool(get("oversized")),
    )


def stored_blob_id(store: Store, repo_id: str, path: str) -> str | None:
    """The blob id the index holds for ``path`` (``None``: no node, or a file not read)."""
    record = store.get(STRUCTURAL, file_key(repo_id, path))
    if record is None or not isinstance(record.value, dict):
        return None
    return stat_of(record.value).blob_id


def content_blob_ids(store: Store, repo_id: str) -> Iterator[tuple[str, str | None]]:
    """``(path, blob id)`` of every file whose text the index holds, in path order.

    Only those three fields of each node are decoded (a fraction of a full read).
    """
    prefix = family_prefix(repo_id, "file")
    for _, node in store.iter_fields(STRUCTURAL, prefix, _BLOB_FIELDS):
        if node.get("hasContent"):
            blob = node.get("blobId")
            yield str(node.get("path")), str(blob) if blob is not None else None


def node_of(node: Mapping[str, Any]) -> FileNode:
    """Parse a file node record into a :class:`FileNode` (the one place that reads its keys).

    The record is this module's own (:func:`file_node`), so its values are taken as written;
    a key an older format lacks reads as its default. Positional: a read view parses every
    candidate a search explains.
    """
    get = node.get
    return FileNode(
        str(get("path")),
        get("language") or None,
        get("blobId"),
        get("tokenCount") or 0,
        get("tokenEncoding"),
        get("lines") or 0,
        bool(get("hasContent")),
        bool(get("isTest")),
        bool(get("isConfig")),
        bool(get("binary")),
        bool(get("oversized")),
        bool(get("undecodable")),
        bool(get("syntaxErrors")),
        get("package"),
        get("matchesGitIndex"),
        get("issue"),
        tuple(map(symbol_from_wire, get("symbols") or ())),
    )


def read_file_node(store: Store, repo_id: str, path: str) -> FileNode | None:
    """The file node of ``path``, parsed (``None``: the path has no node)."""
    record = store.get(STRUCTURAL, file_key(repo_id, path))
    value = record.value if record is not None else None
    return node_of(value) if isinstance(value, dict) else None


class ParsedNodes:
    """Parsed file nodes of one store, kept while their record is unchanged (a bounded LRU).

    A read view asking for the same file again (search explains the same candidates query
    after query) gets the :class:`FileNode` parsed before, when the record still has the same
    stamp (format, digest, stat tuple, token encoding, git index match); the record itself
    is read every time, so a changed file is parsed again at once.
    """

    def __init__(self, store: Store, size: int = 4096) -> None:
        """Keep up to ``size`` parsed nodes of ``store``."""
        self._store = store
        self._size = size
        self._lock = threading.Lock()
        self._parsed: OrderedDict[str, tuple[tuple[object, ...], FileNode]] = OrderedDict()

    def read(self, key: str) -> FileNode | None:
        """The file node stored under ``key`` (``repo/{id}/file/{path}``), parsed.

        ``None`` when there is no node under that key.
        """
        record = self._store.get(STRUCTURAL, key)
        value = record.value if record is not None else None
        if not isinstance(value, dict):
            return None
        get = value.get
        # What changes whenever anything a parsed node holds may have changed.
        stamp = (
            get("format"),
            get("blobId"),
            get("size"),
            get("mtimeNs"),
            get("inode"),
            get("tokenEncoding"),
            get("tokenCount"),
            get("matchesGitIndex"),
        )
        parsed = self._parsed
        with self._lock:
            kept = parsed.get(key)
            if kept is not None and kept[0] == stamp:
                parsed.move_to_end(key)
                return kept[1]
        node = node_of(value)
        with self._lock:
            parsed[key] = (stamp, node)  # (a new key goes last; a replaced one is fresh too)
            parsed.move_to_end(key)
            if len(parsed) > self._size:
                parsed.popitem(last=False)
        return node


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
    children = wire.get("children")
    # (positional, and no generator for a leaf: read views parse every symbol of a node)
    return Symbol(
        wire["kind"],
        wire["name"],
        wire["fullyQualifiedName"],
        wire["signature"],
        wire["startLine"],
        wire["endLine"],
        tuple(map(symbol_from_wire, children)) if children else (),
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


def load_stats(store: Store, repo_id: str) -> dict[str, NodeStat]:
    """The :class:`NodeStat` of every file node by path (:data:`STAT_FIELDS` alone are read)."""
    prefix = family_prefix(repo_id, "file")
    stats = (stat_of(fields) for _, fields in store.iter_fields(STRUCTURAL, prefix, STAT_FIELDS))
    return {stat.path: stat for stat in stats}
