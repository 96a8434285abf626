"""Entry views: what ``repocontext_recall`` and ``repocontext_scan`` return for any stored key.

An entry is ``{key, exists, kind, repoId, ...}`` plus the family's own fields: a file node
(without its bulky outline lists), a package node, a symbol's definitions and users, the
repository record, or a memory document's fields and tags. Expired and deleted records do
not exist.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from repocontext.errors import InvalidInputError, NotFoundError
from repocontext.memory.service import memory_view
from repocontext.store import MEMORY, STRUCTURAL, SYMBOL, XREF, Record, Store, Value, repo_record
from repocontext.store.keys import ParsedKey, family_prefix, parse_key, xref_key

__all__ = ["DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "SCOPES", "EntryPage", "Scope", "recall", "scan"]

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
_KIND_OF: Final = {
    "repo": "repo",
    "file": "file",
    "pkg": "package",
    "symbol": "symbol",
    "mem": "memory",
}
_BULKY: Final = frozenset({"symbols", "imports", "references", "memberReferences"})


@dataclass(frozen=True, slots=True)
class EntryPage:
    """One page of :func:`scan`."""

    entries: list[dict[str, Value]]
    continuation_token: str | None


def recall(store: Store, key: str) -> dict[str, Value]:
    """Return the entry view of ``key`` (``exists`` false when it is absent or expired).

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
    if parsed.family == "mem":
        return memory_view(store, key, store.get(tree, key))
    entry = _entry(parsed, key, store.get(tree, key))
    return _with_users(store, entry, parsed) if parsed.family == "symbol" else entry


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
    if code and repo_record(store, repo_id) is None:  # (before an id no key holds: "")
        raise NotFoundError(f"no repository {repo_id!r} is registered")
    tree, prefix = _scope(repo_id, scope, topic, path_prefix)
    page = store.scan(tree, prefix, limit=min(max(page_size, 1), MAX_PAGE_SIZE), token=token)
    entries = [
        memory_view(store, r.key, r) if tree == MEMORY else _entry(parse_key(r.key), r.key, r)
        for r in page.records
    ]
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


def _entry(parsed: ParsedKey, key: str, record: Record | None) -> dict[str, Value]:
    entry: dict[str, Value] = {
        "key": key,
        "exists": record is not None,
        "kind": _KIND_OF.get(parsed.family, parsed.family),
        "repoId": parsed.repo_id,
    }
    if parsed.path is not None:
        entry["path"] = parsed.path
    if parsed.family == "symbol":
        entry["fullyQualifiedName"] = parsed.name
    if parsed.family == "mem":
        entry["topic"] = parsed.topic
        entry["id"] = parsed.id
    if record is None:
        return entry
    if record.doc is not None:
        entry["fields"] = dict(record.doc.fields)
        entry["tags"] = list[Value](sorted(record.doc.sets.get("tags", frozenset())))
    elif isinstance(record.value, Mapping):
        entry["fields"] = _fields(record.value)
    entry["version"] = record.version
    if record.expires_at is not None:
        entry["expiresAt"] = record.expires_at
    return entry


def _with_users(store: Store, entry: dict[str, Value], parsed: ParsedKey) -> dict[str, Value]:
    """Join a symbol entry with the users of its bare name (kept once per name)."""
    fields = entry.get("fields")
    name = fields.get("name") if isinstance(fields, dict) else None
    if not isinstance(fields, dict) or not isinstance(name, str):
        return entry
    record = store.get(XREF, xref_key(parsed.repo_id, f"name:{name}"))
    value: Mapping[str, Any] = (
        record.value if record is not None and isinstance(record.value, Mapping) else {}
    )
    fields["users"] = list(value.get("users") or [])
    fields["usersCount"] = int(value.get("count") or 0)
    return entry


def _fields(value: Mapping[str, Any]) -> dict[str, Value]:
    fields: dict[str, Value] = {}
    for name, item in value.items():
        if name in _BULKY and isinstance(item, list):
            fields[f"{name}Count"] = len(item)
        elif name != "index":
            fields[name] = item
    return fields
