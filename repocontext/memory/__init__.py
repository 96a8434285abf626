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
from repocontext.memory.service import KINDS, MemoryService

__all__ = [
    "ARCHIVE_NAME",
    "KINDS",
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
