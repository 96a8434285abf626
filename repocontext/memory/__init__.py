"""Agent memory: entries under topics with TTL and typed links (``MemoryService``)."""

from repocontext.memory.service import KINDS, MemoryNotFoundError, MemoryService, WrongFamilyError

__all__ = ["KINDS", "MemoryNotFoundError", "MemoryService", "WrongFamilyError"]
