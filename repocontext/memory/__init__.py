"""Agent memory: entries under topics with TTL and typed links (``MemoryService``), the typed
values it answers with, and their archive (``MemoryArchiver``)."""

from repocontext.errors import MemoryNotFoundError, WrongFamilyError
from repocontext.memory.archiver import (
    ARCHIVE_NAME,
    ArchiveStatus,
    MemoryArchiver,
    RestoreMode,
    RestoreReport,
)
from repocontext.memory.entry import (
    EntryClaim,
    Forgotten,
    MemoryEntry,
    NeighborNode,
    Neighbors,
    NoteChanges,
    NoteFields,
    TopicCount,
    memory_entry,
)
from repocontext.memory.links import StaleLink
from repocontext.memory.service import (
    KINDS,
    MAX_CHARS,
    MAX_DEPTH,
    MAX_NODES,
    MAX_TAG_CHARS,
    MAX_TAGS_PER_CALL,
    MemoryService,
)

__all__ = [
    "ARCHIVE_NAME",
    "KINDS",
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_TAGS_PER_CALL",
    "MAX_TAG_CHARS",
    "ArchiveStatus",
    "EntryClaim",
    "Forgotten",
    "MemoryArchiver",
    "MemoryEntry",
    "MemoryNotFoundError",
    "MemoryService",
    "NeighborNode",
    "Neighbors",
    "NoteChanges",
    "NoteFields",
    "RestoreMode",
    "RestoreReport",
    "StaleLink",
    "TopicCount",
    "WrongFamilyError",
    "memory_entry",
]
