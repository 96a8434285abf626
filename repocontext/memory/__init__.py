"""Agent memory: entries under topics with TTL and typed links (``MemoryService``), and
their archive (``MemoryArchiver``)."""

from repocontext.memory.archiver import (
    ARCHIVE_NAME,
    ArchiveStatus,
    MemoryArchiver,
    RestoreMode,
    RestoreReport,
)
from repocontext.memory.service import KINDS, MemoryNotFoundError, MemoryService, WrongFamilyError

__all__ = [
    "ARCHIVE_NAME",
    "KINDS",
    "ArchiveStatus",
    "MemoryArchiver",
    "MemoryNotFoundError",
    "MemoryService",
    "RestoreMode",
    "RestoreReport",
    "WrongFamilyError",
]
