"""Agent memory: notes, decisions and memories under topics, with TTL and typed links.

An entry is a document record ``repo/{repoId}/mem/{topic}/{id}`` in the memory tree:
``kind`` (note, decision, memory), ``title``, ``body``, ``author`` and ``provenance`` are
last-writer-wins fields; ``tags`` and ``links`` are add-wins sets; the expiry is a
max-register. So concurrent writers never lose a field, tag or link, and an entry's expiry
only ever moves later.

TTL rules: an explicit TTL must be positive (one over :data:`MAX_TTL_SECONDS` is cut to it);
an entry created without one gets its repository's default TTL (none: durable); ``update``
keeps the remaining TTL unless the new one ends later; ``forget`` deletes, or with ``lapse``
sets a short TTL that cannot shorten a later expiry. Expired entries are gone for every read
(the store hides them); the clock is the store's, so tests inject one and never sleep.
``remember`` of an id whose entry expired or was forgotten makes a new entry: only its claim
state and fencing register carry over.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from typing import Final

from repocontext.errors import (
    InvalidInputError,
    MemoryNotFoundError,
    NotFoundError,
    RepoContextError,
    WrongFamilyError,
)
from repocontext.memory.entry import (
    TAG_SET,
    Forgotten,
    MemoryEntry,
    NeighborNode,
    Neighbors,
    TopicCount,
    entry_links,
    memory_entry,
)
from repocontext.memory.fence import CLAIM_FIELDS, check_write, valid_token
from repocontext.memory.ids import new_id
from repocontext.memory.links import LINK_SET, Link, capture, check_links, exists, parse_links
from repocontext.store import (
    MEMORY,
    MEMORY_DEFAULT_TTL_FIELD,
    STRUCTURAL,
    Record,
    RepoRecord,
    Store,
    Value,
    read_repo,
    stored_repo_value,
)
from repocontext.store.document import DocPatch, DocState
from repocontext.store.keys import family_prefix, mem_key, parse_key, repo_key

__all__ = [
    "KINDS",
    "MAX_TTL_SECONDS",
    "MemoryService",
    "check_topic",
    "memory_repo_id",
]

KINDS: Final = ("note", "decision", "memory")
STATUSES: Final = ("open", "done")
"""Values of the ``status`` field: a backlog worker marks its item ``done``."""
TEXT_FIELDS: Final = ("title", "body", "author", "provenance")
MAX_CHARS: Final = {"title": 300, "body": 64_000, "author": 200, "provenance": 2_000}
MAX_TAGS_PER_CALL: Final = 32
MAX_TAG_CHARS: Final = 64
DEFAULT_LAPSE_SECONDS: Final = 60.0
MAX_TTL_SECONDS: Final = 10 * 365 * 86_400.0
"""The longest TTL (ten years); a longer ``ttlSeconds`` or ``lapseSeconds`` is cut to it."""
MAX_DEPTH: Final = 3
MAX_NODES: Final = 100
_TOPIC: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class MemoryService:
    """Remember, update, forget and read memory entries of registered repositories."""

    def __init__(self, store: Store, on_write: Callable[[str], None] | None = None) -> None:
        """Serve the memory tree of ``store`` (its clock decides what has expired).

        ``on_write`` is called with the repository id after each write that changed an entry
        (the workspace schedules the embedding of the changed entries with it).
        """
        self.store = store
        self._on_write = on_write

    # -- writes ------------------------------------------------------------------------

    def remember(
        self,
        repo_id: str,
        topic: str,
        *,
        entry_id: str | None = None,
        kind: str | None = None,
        title: str | None = None,
        body: str | None = None,
        author: str | None = None,
        provenance: str | None = None,
        tags: Iterable[str] | None = None,
        add_links: Mapping[str, Iterable[str]] | None = None,
        ttl_seconds: float | None = None,
        fencing_token: int | None = None,
    ) -> MemoryEntry:
        """Create an entry, or merge into the entry with ``entry_id``; return it.

        Raises:
            NotFoundError: The repository is not registered.
            InvalidInputError: A topic, id, kind, field, tag, link or TTL is invalid.
            RepoContextError: The entry's claim refuses the write (``claim.*`` codes).
        """
        repo = self._repo(repo_id)
        check_topic(topic)
        if entry_id is not None and not _ID.match(str(entry_id)):
            raise InvalidInputError(
                f"entry id {str(entry_id)[:80]!r} is invalid",
                hint="Ids are 1-128 letters, digits, '_', '.' or '-'; omit id to get a new one.",
            )
        now = self.store.clock.now()
        key = mem_key(repo_id, topic, entry_id or new_id(now))
        fields = _text_fields(
            {"title": title, "body": body, "author": author, "provenance": provenance},
            clear=False,
        )
        if kind is not None:
            fields["kind"] = _kind(kind)
        patch = self._patch(
            repo_id, fields, tags=tags, add_links=add_links, ttl_seconds=ttl_seconds
        )
        default_ttl = repo.memory_default_ttl_seconds if ttl_seconds is None else None
        token = _token(fencing_token)

        def decide(live: DocState | None, stored: DocState | None) -> DocPatch:
            check_write(stored, token, now)
            if live is not None:
                return patch
            created = {"kind": "note", **patch.set_fields, "createdAt": now}
            expires = patch.expires_at_ms
            if default_ttl is not None:
                expires = int((now + default_ttl) * 1000)
            new = dataclasses.replace(patch, set_fields=created, expires_at_ms=expires)
            return new if stored is None else _afresh(stored, new)

        return self._write(key, decide)

    def update(
        self,
        key: str,
        *,
        fields: Mapping[str, Value] | None = None,
        add_tags: Iterable[str] | None = None,
        remove_tags: Iterable[str] | None = None,
        add_links: Mapping[str, Iterable[str]] | None = None,
        remove_links: Mapping[str, Iterable[str]] | None = None,
        ttl_seconds: float | None = None,
        fencing_token: int | None = None,
    ) -> MemoryEntry:
        """Merge fields, tags and links into a live entry; return it.

        A ``None`` field value clears the field (``kind`` cannot be cleared: ``None`` is
        refused). The TTL, when given, only takes effect if it ends later than the entry's
        current expiry.

        Raises:
            MemoryNotFoundError: No live entry has the key.
            WrongFamilyError: The key is not a memory key.
            InvalidInputError: A field, tag, link or TTL is invalid.
            RepoContextError: The entry's claim refuses the write (``claim.*`` codes).
        """
        repo_id = memory_repo_id(key)
        token = _token(fencing_token)
        if self.store.get(MEMORY, key) is None:
            raise MemoryNotFoundError(f"no memory entry {key!r}")
        changes = dict(fields or {})
        unknown = sorted(set(changes) - {"kind", "status", *TEXT_FIELDS})
        if unknown:
            raise InvalidInputError(
                f"unknown field(s) {', '.join(map(repr, unknown))}",
                hint=f"Fields are kind, status, {', '.join(TEXT_FIELDS)}.",
            )
        values = _text_fields({n: changes[n] for n in TEXT_FIELDS if n in changes}, clear=True)
        if "kind" in changes:
            values["kind"] = _kind(changes["kind"])
        if "status" in changes:
            values["status"] = _status(changes["status"])
        removed = parse_links(remove_links, repo_id)
        patch = self._patch(
            repo_id,
            values,
            tags=add_tags,
            add_links=add_links,
            ttl_seconds=ttl_seconds,
            remove_tags=remove_tags,
            remove_links=removed,
        )
        now = self.store.clock.now()

        def decide(live: DocState | None, stored: DocState | None) -> DocPatch:
            if live is None:  # forgotten or expired since the check above
                raise MemoryNotFoundError(f"no memory entry {key!r}")
            check_write(stored, token, now)
            return patch

        return self._write(key, decide)

    def forget(
        self,
        key: str,
        *,
        lapse: bool = False,
        lapse_seconds: float | None = None,
        fencing_token: int | None = None,
    ) -> Forgotten:
        """Delete an entry, or with ``lapse`` let it expire soon; ``forgotten`` false if absent.

        A lapse never shortens a later expiry: the entry expires at the later of the two.

        Raises:
            WrongFamilyError: The key is not a memory key.
            InvalidInputError: ``lapse_seconds`` is not positive.
            RepoContextError: The entry's claim refuses the write (``claim.*`` codes).
        """
        memory_repo_id(key)
        token = _token(fencing_token)
        now = self.store.clock.now()
        patch = DocPatch(delete=True)
        if lapse:
            seconds = _ttl(DEFAULT_LAPSE_SECONDS if lapse_seconds is None else lapse_seconds)
            patch = DocPatch(expires_at_ms=int((now + seconds) * 1000))

        def decide(live: DocState | None, stored: DocState | None) -> DocPatch | None:
            if live is None:
                return None
            check_write(stored, token, now)
            return patch

        record = self.store.update_doc(MEMORY, key, decide)
        if record is None:
            return Forgotten(key, forgotten=False)
        self._written(key)
        return Forgotten(key, forgotten=True, lapses_at=record.expires_at if lapse else None)

    def set_default_ttl(self, repo_id: str, seconds: float | None) -> None:
        """Set (or with ``None`` clear) the TTL given to new entries of a repository.

        Raises:
            NotFoundError: The repository is not registered.
            InvalidInputError: ``seconds`` is not positive.
        """
        self._repo(repo_id)
        ttl = None if seconds is None else _ttl(seconds)
        repo = stored_repo_value(self.store, repo_id) or {}
        self.store.put(STRUCTURAL, repo_key(repo_id), {**repo, MEMORY_DEFAULT_TTL_FIELD: ttl})

    # -- reads -------------------------------------------------------------------------

    def default_ttl(self, repo_id: str) -> float | None:
        """Return the TTL new entries of a repository get (``None``: durable).

        Raises:
            NotFoundError: The repository is not registered.
        """
        return self._repo(repo_id).memory_default_ttl_seconds

    def recall(self, key: str) -> MemoryEntry:
        """Return a memory entry (``exists`` false when absent or expired).

        Raises:
            WrongFamilyError: The key is not a memory key.
        """
        memory_repo_id(key)
        return memory_entry(self.store, key, self.store.get(MEMORY, key))

    def list_topics(self, repo_id: str) -> list[TopicCount]:
        """Return the topics of a repository's live entries with their counts, by topic.

        Raises:
            NotFoundError: The repository is not registered.
        """
        self._repo(repo_id)
        counts: Counter[str] = Counter()
        for record in self.store.iter_records(MEMORY, family_prefix(repo_id, "mem")):
            topic = parse_key(record.key).topic
            if topic is not None:
                counts[topic] += 1
        return [TopicCount(topic, counts[topic]) for topic in sorted(counts)]

    def neighbors(
        self, key: str, *, relation: str | None = None, depth: int = 1, max_nodes: int = 50
    ) -> Neighbors:
        """Walk outbound links breadth first from a memory entry.

        Each reached key is reported once, at its smallest depth, with the relation and the
        entry it was reached from; ``stale`` marks a link whose target drifted or is gone.
        Only memory entries are walked further. ``truncated`` says the node limit cut the
        walk short.

        Raises:
            MemoryNotFoundError: No live entry has the key.
            WrongFamilyError: The key is not a memory key.
        """
        memory_repo_id(key)
        depth = min(max(int(depth), 1), MAX_DEPTH)
        max_nodes = min(max(int(max_nodes), 1), MAX_NODES)
        start = self.store.get(MEMORY, key)
        if start is None:
            raise MemoryNotFoundError(f"no memory entry {key!r}")
        nodes: list[NeighborNode] = []
        seen = {key}
        queue: deque[tuple[Record, int]] = deque([(start, 0)])
        truncated = False
        while queue and not truncated:
            record, level = queue.popleft()
            doc = record.doc
            if doc is None or level >= depth:
                continue
            links = entry_links(doc)
            stale = {(s.relation, s.key) for s in check_links(self.store, links, doc.fields)}
            for link in links:
                if (relation is not None and link.relation != relation) or link.key in seen:
                    continue
                if len(nodes) >= max_nodes:
                    truncated = True
                    break
                seen.add(link.key)
                live = exists(self.store, link.key)
                stale_link = (link.relation, link.key) in stale
                nodes.append(
                    NeighborNode(link.key, live, level + 1, link.relation, record.key, stale_link)
                )
                if live and parse_key(link.key).family == "mem":
                    target = self.store.get(MEMORY, link.key)
                    if target is not None:
                        queue.append((target, level + 1))
        return Neighbors(key, tuple(nodes), truncated)

    # -- helpers -----------------------------------------------------------------------

    def _patch(
        self,
        repo_id: str,
        fields: dict[str, Value],
        *,
        tags: Iterable[str] | None,
        add_links: Mapping[str, Iterable[str]] | None,
        ttl_seconds: float | None,
        remove_tags: Iterable[str] | None = None,
        remove_links: list[Link] | None = None,
    ) -> DocPatch:
        added = parse_links(add_links, repo_id)
        for link in added:
            fields[link.digest_field] = capture(self.store, link.key)
        for link in remove_links or []:
            fields[link.digest_field] = None
        expires = None
        if ttl_seconds is not None:
            expires = int((self.store.clock.now() + _ttl(ttl_seconds)) * 1000)
        add: dict[str, list[str]] = {}
        remove: dict[str, list[str]] = {}
        if tags:
            add[TAG_SET] = _tags(tags)
        if added:
            add[LINK_SET] = [link.element for link in added]
        if remove_tags:
            remove[TAG_SET] = _tags(remove_tags)
        if remove_links:
            remove[LINK_SET] = [link.element for link in remove_links]
        return DocPatch(set_fields=fields, add=add, remove=remove, expires_at_ms=expires)

    def _write(
        self, key: str, decide: Callable[[DocState | None, DocState | None], DocPatch]
    ) -> MemoryEntry:
        record = self.store.update_doc(MEMORY, key, decide)
        if record is None:  # decide always returns a patch, so something was stored
            raise MemoryNotFoundError(f"no memory entry {key!r}")
        self._written(key)
        return memory_entry(self.store, key, record)

    def _written(self, key: str) -> None:
        if self._on_write is not None:
            self._on_write(memory_repo_id(key))

    def _repo(self, repo_id: str) -> RepoRecord:
        repo = read_repo(self.store, repo_id)
        if repo is None:
            raise NotFoundError(
                f"no repository {repo_id!r} is registered",
                hint="Register it with repocontext_bootstrap or repocontext index.",
            )
        return repo


def memory_repo_id(key: str) -> str:
    """Return the repository id of a memory key.

    Raises:
        WrongFamilyError: The key is malformed or not a memory key.
    """
    try:
        parsed = parse_key(key)
    except RepoContextError as exc:
        raise WrongFamilyError(f"{key[:80]!r} is not a record key: {exc.message}") from exc
    if parsed.family != "mem":
        raise WrongFamilyError(f"{key[:80]!r} is a {parsed.family} key, not a memory key")
    return parsed.repo_id


def check_topic(topic: str) -> None:
    """Refuse a topic no memory entry can have (``input.invalid``)."""
    if not isinstance(topic, str) or not _TOPIC.match(topic):
        raise InvalidInputError(
            f"topic {str(topic)[:80]!r} is invalid",
            hint="Topics are 1-64 letters, digits, '_', '.' or '-' (decisions, gotchas, todo).",
        )


def _afresh(stored: DocState, patch: DocPatch) -> DocPatch:
    """Write ``patch`` as a new entry over an expired or forgotten one (``stored``).

    The old fields, tags, links and expiry are dropped; the claim fields and the fencing
    register (a patch never lowers it) carry over, so fencing tokens keep growing.
    """
    cleared: dict[str, Value] = {n: None for n in stored.fields if n not in CLAIM_FIELDS}
    remove = {
        name: sorted(stored.sets[name] - set(patch.add.get(name, ())))
        for name in (TAG_SET, LINK_SET)
        if name in stored.sets
    }
    set_fields = {**cleared, **patch.set_fields}
    return dataclasses.replace(patch, set_fields=set_fields, remove=remove, drop_expiry=True)


def _kind(kind: Value) -> str:
    if kind is None:
        raise InvalidInputError(
            "kind cannot be cleared: every entry has one", hint=f"Use one of {', '.join(KINDS)}."
        )
    if kind not in KINDS:
        raise InvalidInputError(f"kind {kind!r} is invalid", hint=f"Use one of {', '.join(KINDS)}.")
    return str(kind)


def _status(status: Value) -> str | None:
    if status is not None and status not in STATUSES:
        raise InvalidInputError(
            f"status {status!r} is invalid", hint=f"Use one of {', '.join(STATUSES)}, or null."
        )
    return None if status is None else str(status)


def _text_fields(values: Mapping[str, Value], *, clear: bool) -> dict[str, Value]:
    """Validate text fields; ``None`` clears a field when ``clear``, else leaves it alone."""
    fields: dict[str, Value] = {}
    for name, value in values.items():
        if value is None:
            if clear:
                fields[name] = None
            continue
        if not isinstance(value, str):
            raise InvalidInputError(f"field {name!r} must be text")
        limit = MAX_CHARS[name]
        if len(value) > limit:
            raise InvalidInputError(
                f"field {name!r} has {len(value):,} characters; at most {limit:,}",
                hint="Store a summary and link the file it comes from (addLinks).",
            )
        fields[name] = value
    return fields


def _tags(tags: Iterable[str]) -> list[str]:
    if isinstance(tags, str):
        tags = [tags]
    found = []
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip() or len(tag) > MAX_TAG_CHARS:
            raise InvalidInputError(
                f"tag {str(tag)[:80]!r} is invalid",
                hint=f"Tags are non-empty text of at most {MAX_TAG_CHARS} characters.",
            )
        if _CONTROL.search(tag):
            raise InvalidInputError(f"tag {tag[:40]!r} holds a control character")
        found.append(tag.strip())
    if len(found) > MAX_TAGS_PER_CALL:
        raise InvalidInputError(
            f"{len(found)} tags in one call; at most {MAX_TAGS_PER_CALL}",
            hint="Add the tags in several updates.",
        )
    return sorted(set(found))


def _token(token: int | None) -> int | None:
    return None if token is None else valid_token(token)


def _ttl(seconds: float) -> float:
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        raise InvalidInputError(
            f"a TTL must be a positive number of seconds, got {seconds!r}",
            hint="Omit the TTL for a durable entry.",
        )
    return min(float(seconds), MAX_TTL_SECONDS)
