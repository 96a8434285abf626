"""Entry views: what ``repocontext_recall`` and ``repocontext_scan`` return for any stored key.

A memory key reads as a :class:`~repocontext.memory.MemoryEntry`; every other key as an
:class:`EntryView`: ``key, exists, kind, repo_id`` plus the record's own fields: a file node
(without its bulky outline lists), a package node, a symbol's definitions and users, or the
repository record. Expired and deleted records do not exist.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal, TypeAlias

from repocontext.errors import InvalidInputError, NotFoundError
from repocontext.memory import MemoryEntry, memory_entry
from repocontext.store import MEMORY, STRUCTURAL, SYMBOL, XREF, Record, Store, Value, read_repo
from repocontext.store.keys import ParsedKey, family_prefix, parse_key, xref_key

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "SCOPES",
    "Entry",
    "EntryPage",
    "EntryView",
    "Scope",
    "recall",
    "scan",
]

Scope = Literal["files", "packages", "symbols", "memory", "memoryTopic"]
SCOPES: Final = ("files", "packages", "symbols", "memory", "memoryTopic")
DEFAULT_PAGE_SIZE: Final = 100
MAX_PAGE_SIZE: Final = 500
_TREE_OF: Final = {
    "repo": STRUCTURAL,
    "file": STRUCTURAL,
    "pkg": STRUCTURAL,
    "symbol": SYMBOL,
    "mem": MEMORY,
}
_KIND_OF: Final = {"repo": "repo", "file": "file", "pkg": "package", "symbol": "symbol"}
_BULKY: Final = frozenset({"symbols", "imports", "references", "memberReferences"})
_EMPTY: Final[Mapping[str, Value]] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class EntryView:
    """The entry of a code-index or repository key (memory keys read as ``MemoryEntry``).

    Attributes:
        key: The key.
        exists: A live record has the key.
        kind: ``repo``, ``file``, ``package`` or ``symbol``.
        repo_id: The repository the key belongs to.
        path: The file or directory path (file and package keys).
        fully_qualified_name: The symbol's name (symbol keys).
        fields: The record's fields (bulky lists replaced by ``{name}Count``); a symbol's
            also hold ``users`` and ``usersCount``.
        version: The change-feed sequence of the record's last write.
        expires_at: When it expires (epoch seconds); ``None``: durable.
    """

    key: str
    exists: bool
    kind: str
    repo_id: str
    path: str | None = None
    fully_qualified_name: str | None = None
    fields: Mapping[str, Value] = field(default_factory=lambda: _EMPTY)
    version: int | None = None
    expires_at: float | None = None


Entry: TypeAlias = EntryView | MemoryEntry
"""What one key reads as."""


@dataclass(frozen=True, slots=True)
class EntryPage:
    """One page of :func:`scan`."""

    entries: tuple[Entry, ...]
    continuation_token: str | None


def recall(store: Store, key: str) -> Entry:
    """Return the entry of ``key`` (``exists`` false when it is absent or expired).

    Raises:
        InvalidKeyError: The key does not follow the key grammar.
        InvalidInputError: The key's family cannot be recalled.
    """
    parsed = parse_key(key)
    tree = _TREE_OF.get(parsed.family)
    if tree is None:
        raise InvalidInputError(
            f"keys of family {parsed.family!r} cannot be recalled",
            hint="Recall repo, file, pkg, symbol or mem keys.",
        )
    record = store.get(tree, key)
    if parsed.family == "mem":
        return memory_entry(store, key, record)
    users = _users(store, parsed, record) if parsed.family == "symbol" else None
    return _entry(parsed, key, record, users)


def scan(
    store: Store,
    repo_id: str,
    scope: Scope,
    *,
    topic: str | None = None,
    path_prefix: str | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    token: str | None = None,
) -> EntryPage:
    """Return one page of entries of a repository in key order.

    Raises:
        InvalidInputError: The scope is unknown or ``memoryTopic`` lacks a topic.
        NotFoundError: A code scope (files, packages, symbols) of an unregistered repository.
        InvalidTokenError: The continuation token belongs to another scan.
    """
    code = scope in ("files", "packages", "symbols")
    if code and read_repo(store, repo_id) is None:  # (before an id no key holds: "")
        raise NotFoundError(f"no repository {repo_id!r} is registered")
    tree, prefix = _scope(repo_id, scope, topic, path_prefix)
    page = store.scan(tree, prefix, limit=min(max(page_size, 1), MAX_PAGE_SIZE), token=token)
    entries: tuple[Entry, ...] = tuple(
        memory_entry(store, r.key, r) if tree == MEMORY else _entry(parse_key(r.key), r.key, r)
        for r in page.records
    )
    return EntryPage(entries, page.next_token)


def _scope(repo_id: str, scope: str, topic: str | None, path_prefix: str | None) -> tuple[str, str]:
    if scope == "files":
        return STRUCTURAL, family_prefix(repo_id, "file", path_prefix)
    if scope == "packages":
        return STRUCTURAL, family_prefix(repo_id, "pkg", path_prefix)
    if scope == "symbols":
        return SYMBOL, family_prefix(repo_id, "symbol", path_prefix)
    if scope == "memory":
        return MEMORY, family_prefix(repo_id, "mem")
    if scope == "memoryTopic":
        if not topic:
            raise InvalidInputError("scope memoryTopic needs a topic", hint="Pass topic.")
        return MEMORY, family_prefix(repo_id, "mem", topic)
    raise InvalidInputError(f"unknown scope {scope!r}", hint=f"Use one of {', '.join(SCOPES)}.")


def _entry(
    parsed: ParsedKey,
    key: str,
    record: Record | None,
    users: Mapping[str, Value] | None = None,
) -> EntryView:
    fields: dict[str, Value] = {}
    if record is not None and isinstance(record.value, Mapping):
        fields = _fields(record.value)
        if users is not None and isinstance(fields.get("name"), str):
            fields.update(users)
    return EntryView(
        key,
        exists=record is not None,
        kind=_KIND_OF.get(parsed.family, parsed.family),
        repo_id=parsed.repo_id,
        path=parsed.path,
        fully_qualified_name=parsed.name if parsed.family == "symbol" else None,
        fields=MappingProxyType(fields),
        version=None if record is None else record.version,
        expires_at=None if record is None else record.expires_at,
    )


def _users(store: Store, parsed: ParsedKey, record: Record | None) -> Mapping[str, Value] | None:
    """The users of a symbol's bare name (kept once per name), as ``users`` and ``usersCount``."""
    value = record.value if record is not None else None
    name = value.get("name") if isinstance(value, Mapping) else None
    if not isinstance(name, str):
        return None
    xref = store.get(XREF, xref_key(parsed.repo_id, f"name:{name}"))
    found = xref.value if xref is not None and isinstance(xref.value, Mapping) else {}
    users, count = found.get("users"), found.get("count")
    return {
        "users": list(users) if isinstance(users, list) else [],
        "usersCount": count if isinstance(count, int) else 0,
    }


def _fields(value: Mapping[str, Value]) -> dict[str, Value]:
    fields: dict[str, Value] = {}
    for name, item in value.items():
        if name in _BULKY and isinstance(item, list):
            fields[f"{name}Count"] = len(item)
        elif name != "index":
            fields[name] = item
    return fields
