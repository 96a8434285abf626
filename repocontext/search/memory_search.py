"""Memory entries in keyword search: their index rows, and ranking them with reasons.

A memory row holds the title, the tags and topic, and the body as terms (BM25 weights
:data:`~repocontext.search.keyword.MEMORY_WEIGHTS`), plus the entry id for exact lookups. A
hit's reasons come in the fixed order of the vocabulary: ``tag:<t>`` (up to three tags sharing
a term with the query), ``topic-match``, ``content-match`` (title or body), ``key-match`` (the
query names the entry's key or id), ``semantic`` (the vectors found it). Entries that expired
since they were indexed are dropped when ranked (the store no longer returns them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from repocontext.search.keyword import KeywordIndex, MemoryDoc
from repocontext.search.terms import terms
from repocontext.store import MEMORY, Record, Store
from repocontext.store.keys import parse_key

__all__ = ["MemoryHit", "NoteEntry", "memory_doc", "rank_memory"]

MAX_TAG_REASONS: Final = 3
_MIN_ID: Final = 6  # shorter words are too likely to be ordinary words that happen to be ids
_WORD: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./%-]*")


@dataclass(frozen=True, slots=True)
class NoteEntry:
    """What a memory hit says about its entry.

    Attributes:
        topic: The entry's topic.
        id: The entry's id within the topic.
        memory_kind: The entry's kind field (``note``, ``decision``...), if set.
        title: Its title, if set.
        tags: Its tags, sorted.
        expires_at: When it expires (epoch seconds), for an entry with a TTL.
    """

    topic: str
    id: str
    memory_kind: str | None
    title: str | None
    tags: tuple[str, ...] = ()
    expires_at: float | None = None
    kind: Literal["memory"] = "memory"


@dataclass(frozen=True, slots=True)
class MemoryHit:
    """One ranked memory entry."""

    key: str
    score: float
    reasons: tuple[str, ...]
    entry: NoteEntry


def memory_doc(record: Record) -> MemoryDoc | None:
    """The index row of a live memory record (``None`` for anything else)."""
    if record.doc is None or record.deleted:
        return None
    parsed = parse_key(record.key)
    fields = record.doc.fields
    tags = sorted(record.doc.sets.get("tags", ()))
    return MemoryDoc(
        key=record.key,
        entry_id=str(parsed.id),
        title_terms=" ".join(terms(str(fields.get("title") or ""))),
        tag_terms=" ".join(terms(" ".join([*tags, str(parsed.topic)]))),
        body_terms=" ".join(terms(str(fields.get("body") or ""))),
    )


def rank_memory(
    store: Store,
    index: KeywordIndex,
    query: str,
    query_terms: list[str],
    k: int,
    similar: Sequence[str] = (),
    fusion: tuple[float, int] = (0.2, 20),
    *,
    by_words: bool = True,
) -> list[MemoryHit]:
    """Rank a repository's live memory entries for a query, best first, at most ``k``.

    ``similar``: the entries the vectors found, best first; when given, the keyword and the
    vector rankings are fused by weighted reciprocal rank, as for files (``fusion``: the
    weight of the vectors and the rank offset). ``by_words`` False (semantic mode): the
    vectors alone rank; no term match, no named id, no word reason.
    """
    named = set(_named_keys(index, query)) if by_words else set()
    found = (
        {hit.path: hit.score for hit in index.search_memory(query_terms, k * 2)} if by_words else {}
    )
    near = list(dict.fromkeys(similar))
    if near:
        fused: dict[str, float] = {}
        semantic_weight, offset = fusion
        for weight, ranking in ((1.0, list(found)), (semantic_weight, near)):
            for rank, key in enumerate(ranking, 1):
                fused[key] = fused.get(key, 0.0) + weight / (offset + rank)
        found = fused
    top = max(found.values(), default=1.0)
    for key in named:  # an entry the query names outranks every term match
        found[key] = found.get(key, 0.0) + top + 1.0
    wanted = set(query_terms) if by_words else set()
    hits = []
    for key in sorted(found, key=lambda x: (-found[x], x)):
        record = store.get(MEMORY, key)
        if record is None or record.doc is None:
            continue  # expired or forgotten since it was indexed
        hits.append(_hit(record, round(found[key], 4), wanted, key in named, key in near))
        if len(hits) >= k:
            break
    return hits


def _named_keys(index: KeywordIndex, query: str) -> list[str]:
    """Keys of the entries whose id the query names (alone, or as the end of a key)."""
    ids = {word.rsplit("/", 1)[-1] for word in _WORD.findall(query)}
    return index.memory_keys_of(i for i in ids if len(i) >= _MIN_ID)


def _hit(record: Record, score: float, query: set[str], named: bool, similar: bool) -> MemoryHit:
    assert record.doc is not None
    parsed = parse_key(record.key)
    fields = record.doc.fields
    tags = sorted(record.doc.sets.get("tags", ()))
    reasons = [f"tag:{t}" for t in tags if query & set(terms(t))][:MAX_TAG_REASONS]
    if query & set(terms(str(parsed.topic))):
        reasons.append("topic-match")
    text = " ".join(str(fields.get(name) or "") for name in ("title", "body"))
    if query & set(terms(text)):
        reasons.append("content-match")
    if named:
        reasons.append("key-match")
    if similar:
        reasons.append("semantic")
    kind, title = fields.get("kind"), fields.get("title")
    entry = NoteEntry(
        topic=str(parsed.topic),
        id=str(parsed.id),
        memory_kind=kind if isinstance(kind, str) else None,
        title=title if isinstance(title, str) else None,
        tags=tuple(tags),
        expires_at=record.expires_at,
    )
    return MemoryHit(record.key, score, tuple(reasons), entry)
