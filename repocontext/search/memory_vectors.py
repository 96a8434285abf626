"""How memory entries become rows of a repository's memory vector plane.

Each live entry is one chunk (its title, tags and body) under the plane path
``MEMORY_PATH_PREFIX + key``, which no file path can have, with a digest of that text as the
chunk's ``symbol``: an entry is re-embedded only when its text changes.
:class:`~repocontext.search.semantic.SemanticService` embeds what :func:`memory_todo` returns,
and search tells the entries' hits from files' by :func:`memory_key_of`.
"""

from __future__ import annotations

import hashlib
from typing import Final

from repocontext.search.embed import Chunk
from repocontext.search.vectors import VectorPlane
from repocontext.store import MEMORY, Record, Store
from repocontext.store.keys import family_prefix

__all__ = ["MEMORY_PATH_PREFIX", "memory_key_of", "memory_todo"]

MEMORY_PATH_PREFIX: Final = "\x1fmem\x1f"
"""Plane paths of memory entries start with this (file paths never hold control characters)."""


def memory_key_of(path: str) -> str | None:
    """The memory key a plane path stands for (``None`` for a file path)."""
    return path[len(MEMORY_PATH_PREFIX) :] if path.startswith(MEMORY_PATH_PREFIX) else None


def memory_todo(
    store: Store, repo_id: str, plane: VectorPlane, current: dict[str, str | None]
) -> list[Chunk]:
    """Record every live memory entry in ``current``; return those ``plane`` lacks or has stale."""
    notes: list[Chunk] = []
    for record in store.iter_records(MEMORY, family_prefix(repo_id, "mem")):
        note = _memory_chunk(record)
        if note is None:
            continue
        current[note.path] = note.symbol
        if plane.files.get(note.path) != note.symbol:
            notes.append(note)
    return notes


def _memory_chunk(record: Record) -> Chunk | None:
    """The one chunk of a live memory entry; its ``symbol`` holds a digest of the text."""
    if record.doc is None:
        return None
    fields = record.doc.fields
    tags = " ".join(sorted(record.doc.sets.get("tags", ())))
    text = "\n".join(
        part
        for part in (str(fields.get("title") or ""), tags, str(fields.get("body") or ""))
        if part
    )
    if not text:
        return None
    digest = hashlib.sha256(text.encode()).hexdigest()[:24]
    return Chunk(MEMORY_PATH_PREFIX + record.key, "memory", 0, 0, digest, text)
