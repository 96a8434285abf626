"""The typed values of agent memory, and the codec that reads them from a stored record.

:func:`memory_entry` is the storage edge: it turns a memory document (``repo/{id}/mem/...``)
into a :class:`MemoryEntry` once; everything above passes the typed value. The free-form
``fields`` of an entry stay a mapping of store values: they are data, not a record shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, TypedDict

from repocontext.memory.fence import CLAIM_FIELDS, claim_state
from repocontext.memory.links import LINK_FIELD, LINK_SET, Link, StaleLink, check_links, decode_link
from repocontext.store import Record, Store, Value
from repocontext.store.document import DocState
from repocontext.store.keys import parse_key

__all__ = [
    "TAG_SET",
    "EntryClaim",
    "Forgotten",
    "MemoryEntry",
    "NeighborNode",
    "Neighbors",
    "NoteChanges",
    "NoteFields",
    "TopicCount",
    "entry_links",
    "memory_entry",
]

TAG_SET: Final = "tags"
_EMPTY: Final[Mapping[str, Value]] = MappingProxyType({})


class NoteFields(TypedDict, total=False):
    """The optional keyword arguments of ``remember`` (a new entry or a rewrite of one)."""

    entry_id: str | None
    kind: str | None
    title: str | None
    body: str | None
    author: str | None
    provenance: str | None
    tags: Iterable[str] | None
    add_links: Mapping[str, Iterable[str]] | None
    ttl_seconds: float | None
    fencing_token: int | None


class NoteChanges(TypedDict, total=False):
    """The optional keyword arguments of ``update`` (changes to a live entry)."""

    fields: Mapping[str, Value] | None
    add_tags: Iterable[str] | None
    remove_tags: Iterable[str] | None
    add_links: Mapping[str, Iterable[str]] | None
    remove_links: Mapping[str, Iterable[str]] | None
    ttl_seconds: float | None
    fencing_token: int | None


@dataclass(frozen=True, slots=True)
class EntryClaim:
    """The claim of an entry as its recall shows it (present once it was ever claimed).

    Attributes:
        claimed: A claim holds now (issued, not released, lease not over).
        owner: Who holds (or last held) it; ``None`` after a release.
        fencing_token: The current claim's token; after a forget or an expiry, the highest
            token ever issued (the next claim goes above it).
        lease_expires_at: When the lease ends (epoch seconds).
        released: The last claim was released.
    """

    claimed: bool
    owner: str | None
    fencing_token: int
    lease_expires_at: float | None
    released: bool


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One memory entry (``exists`` false: absent, forgotten or expired; only the key parts).

    Attributes:
        key: ``repo/{repo_id}/mem/{topic}/{id}``.
        repo_id: The repository the entry belongs to.
        topic: Its topic.
        id: Its id within the topic.
        exists: A live entry has the key.
        kind: The entry's kind (note, decision, memory), also in ``fields``.
        fields: Its fields (kind, status, title, body, author, provenance, createdAt).
        tags: Its tags, sorted.
        links: ``{relation: target keys}``, both sorted.
        version: The change-feed sequence of its last write.
        expires_at: When it expires (epoch seconds); ``None``: durable.
        remaining_seconds: Seconds until it expires, with ``expires_at``.
        stale_links: Links whose target drifted or is gone.
        claim: Its claim, once it was ever claimed.
    """

    key: str
    repo_id: str
    topic: str
    id: str
    exists: bool
    kind: str | None = None
    fields: Mapping[str, Value] = field(default_factory=lambda: _EMPTY)
    tags: tuple[str, ...] = ()
    links: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    version: int | None = None
    expires_at: float | None = None
    remaining_seconds: float | None = None
    stale_links: tuple[StaleLink, ...] = ()
    claim: EntryClaim | None = None

    @property
    def stale(self) -> bool:
        """True when a link's target drifted or is gone."""
        return bool(self.stale_links)

    @property
    def title(self) -> str | None:
        """The ``title`` field."""
        return _text(self.fields.get("title"))

    @property
    def body(self) -> str | None:
        """The ``body`` field."""
        return _text(self.fields.get("body"))

    @property
    def status(self) -> str | None:
        """The ``status`` field (``open``, ``done`` or unset)."""
        return _text(self.fields.get("status"))


@dataclass(frozen=True, slots=True)
class Forgotten:
    """What ``forget`` did: ``forgotten`` false when no live entry had the key.

    Attributes:
        key: The entry's key.
        forgotten: A live entry was deleted (or set to lapse).
        lapses_at: With a lapse, when the entry now expires (epoch seconds).
    """

    key: str
    forgotten: bool
    lapses_at: float | None = None


@dataclass(frozen=True, slots=True)
class TopicCount:
    """One memory topic and its number of live entries."""

    topic: str
    count: int


@dataclass(frozen=True, slots=True)
class NeighborNode:
    """One key reached by a walk of memory links.

    Attributes:
        key: The key reached.
        exists: Whether it is live.
        depth: Links followed to reach it (1: a direct link).
        via: The relation of the link it was reached by.
        from_key: The entry that link belongs to.
        stale: The link's target drifted or is gone.
    """

    key: str
    exists: bool
    depth: int
    via: str
    from_key: str
    stale: bool = False


@dataclass(frozen=True, slots=True)
class Neighbors:
    """A breadth-first walk of memory links from ``key``.

    Attributes:
        key: The entry the walk started from.
        nodes: Each key reached once, at its smallest depth, in walk order.
        truncated: The node limit cut the walk short.
    """

    key: str
    nodes: tuple[NeighborNode, ...]
    truncated: bool


def memory_entry(store: Store, key: str, record: Record | None) -> MemoryEntry:
    """Read the entry of a memory record (``record`` ``None``: the key holds nothing)."""
    parsed = parse_key(key)
    repo_id, topic, entry_id = parsed.repo_id, str(parsed.topic), str(parsed.id)
    if record is None or record.doc is None:
        return MemoryEntry(key, repo_id, topic, entry_id, exists=False)
    doc = record.doc
    now = store.clock.now()
    links = entry_links(doc)
    grouped: dict[str, list[str]] = {}
    for link in links:
        grouped.setdefault(link.relation, []).append(link.key)
    fields = {
        name: value
        for name, value in doc.fields.items()
        if not name.startswith(LINK_FIELD) and name not in CLAIM_FIELDS
    }
    remaining = None
    if record.expires_at is not None:
        remaining = round(max(record.expires_at - now, 0.0), 3)
    return MemoryEntry(
        key,
        repo_id,
        topic,
        entry_id,
        exists=True,
        kind=_text(fields.get("kind")),
        fields=MappingProxyType(fields),
        tags=tuple(sorted(doc.sets.get(TAG_SET, ()))),
        links=MappingProxyType({relation: tuple(keys) for relation, keys in grouped.items()}),
        version=record.version,
        expires_at=record.expires_at,
        remaining_seconds=remaining,
        stale_links=tuple(check_links(store, links, doc.fields)),
        claim=_claim(doc, now),
    )


def entry_links(doc: DocState) -> list[Link]:
    """The links of a memory document, by relation and key."""
    return _sorted_links(doc.sets.get(LINK_SET, ()))


def _sorted_links(elements: Iterable[str]) -> list[Link]:
    found = (decode_link(element) for element in elements)
    return sorted((link for link in found if link is not None), key=lambda x: (x.relation, x.key))


def _claim(doc: DocState, now: float) -> EntryClaim | None:
    state = claim_state(doc)
    if not state.highest:
        return None
    return EntryClaim(
        claimed=state.live(now),
        owner=state.owner,
        # A forget or an expiry clears the claim fields but keeps the fencing register:
        # the token shown is then the highest issued, which the next claim goes above.
        fencing_token=state.token or state.highest,
        lease_expires_at=state.lease_until,
        released=state.released,
    )


def _text(value: Value) -> str | None:
    return value if isinstance(value, str) else None
