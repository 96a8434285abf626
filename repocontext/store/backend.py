"""The storage-engine interface the store is written against.

A backend offers named key-value trees with ordered byte keys and atomic, durable write
transactions. LMDB (:mod:`repocontext.store.lmdb_backend`) is the embedded default; a second
engine implements these three protocols and nothing above the store changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, TypeVar

__all__ = ["Backend", "BackendStats", "ReadTxn", "WriteTxn", "prefix_end"]

T = TypeVar("T")


class ReadTxn(Protocol):
    """A consistent snapshot of every tree."""

    def get(self, tree: str, key: bytes) -> bytes | None:
        """Return the value stored under ``key``, or ``None``."""
        ...

    def iterate(self, tree: str, start: bytes, stop: bytes | None) -> Iterator[tuple[bytes, bytes]]:
        """Yield ``(key, value)`` pairs with ``start <= key < stop`` in key order."""
        ...

    def entries(self, tree: str) -> int:
        """Return the number of keys in ``tree`` (tombstones included)."""
        ...


class WriteTxn(ReadTxn, Protocol):
    """A snapshot that can also change trees; committed durably as a whole or not at all."""

    def put(self, tree: str, key: bytes, value: bytes, *, append: bool = False) -> None:
        """Store ``value`` under ``key``; ``append`` promises the key sorts after every other."""
        ...

    def delete(self, tree: str, key: bytes) -> bool:
        """Remove ``key``; return whether it existed."""
        ...

    def bind(
        self, tree: str
    ) -> tuple[Callable[[bytes], bytes | None], Callable[[bytes, bytes], object]]:
        """Return ``(get, put)`` bound to one tree, for tight loops over many keys."""
        ...

    def get_many(self, tree: str, keys: list[bytes]) -> list[bytes | None]:
        """Return the values of ``keys`` (``None`` for a missing one), in their order.

        One request where the engine is remote; the same as many :meth:`get` calls locally.
        """
        ...


@dataclass(frozen=True, slots=True)
class BackendStats:
    """Physical facts about a backend.

    Attributes:
        engine: Engine name.
        path: Where the data lives.
        map_bytes: Current address-space reservation.
        used_bytes: Bytes in use by pages.
        file_bytes: Bytes the data file takes on disk.
        entries: Keys per tree.
    """

    engine: str
    path: str
    map_bytes: int
    used_bytes: int
    file_bytes: int
    entries: dict[str, int]


class Backend(Protocol):
    """An engine of named, ordered, transactional trees."""

    read_only: bool
    engine: str
    """The engine's name (``lmdb``, ``postgresql``)."""

    @property
    def location(self) -> str:
        """Where the data lives (a directory, or a database URL without its password)."""
        ...

    def read(self) -> AbstractContextManager[ReadTxn]:
        """Open a read snapshot for the ``with`` block."""
        ...

    def get(self, tree: str, key: bytes) -> bytes | None:
        """Read one value in its own snapshot."""
        ...

    def write(self, fn: Callable[[WriteTxn], T]) -> T:
        """Run ``fn`` in a write transaction and commit it durably before returning.

        ``fn`` may run more than once (after the engine grows its storage), so it must
        derive everything it writes from the transaction it is given.
        """
        ...

    def stats(self) -> BackendStats:
        """Return physical statistics."""
        ...

    def ping(self) -> float:
        """Return the seconds one minimal read takes, without retrying (a health probe).

        Raises:
            StoreUnavailableError: The engine does not answer.
        """
        ...

    def exclusive(self, name: str) -> AbstractContextManager[bool]:
        """Hold the lock ``name`` against other processes for the ``with`` block.

        Yields False, holding nothing, when another process holds it. The lock goes with
        its holder, also when the process is killed.
        """
        ...

    def close(self) -> None:
        """Release the engine; later calls raise ``StoreUnavailableError``."""
        ...


def prefix_end(prefix: bytes) -> bytes | None:
    """Return the smallest key greater than every key starting with ``prefix``."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])
