"""The store's replica identity: one random client id per store, kept in its meta tree.

CRDT updates carry the client id of the replica that made them; every process opening the
same store (a data directory, or a database) shares it.
"""

from __future__ import annotations

import secrets
import struct
from typing import Final

from repocontext.store import _writes as w
from repocontext.store.backend import Backend, ReadTxn, WriteTxn

__all__ = ["replica_id"]

_CLIENT_ID_BITS: Final = 52
_KEY: Final = b"replica"


def replica_id(backend: Backend) -> int:
    """The store's client id, created on first open (1 for a read-only store without one)."""
    with backend.read() as txn:
        existing = _read(txn)
    if existing is not None or backend.read_only:
        return existing or 1

    def create(txn: WriteTxn) -> int:
        found = _read(txn)
        if found is not None:
            return found
        new = secrets.randbits(_CLIENT_ID_BITS) | 1
        txn.put(w.META, _KEY, struct.pack(">Q", new))
        return new

    return backend.write(create)


def _read(txn: ReadTxn) -> int | None:
    raw = txn.get(w.META, _KEY)
    return None if raw is None else int(struct.unpack(">Q", raw)[0])
