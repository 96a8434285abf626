"""Read-side values the store hands out: records, pages, changes, statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from repocontext.store.document import DocState
from repocontext.store.records import Value

__all__ = ["Change", "Page", "Record", "StoreStats", "SweepReport"]


class Record(NamedTuple):
    """One record as read from a tree (a named tuple: reads build one per record).

    Exactly one of ``value`` (LWW trees), ``doc`` (document trees) and ``present`` (flag
    trees) is meaningful, according to the tree's merge mode.

    Attributes:
        tree: Tree name.
        key: Record key.
        version: Change-feed sequence of the record's last effective write.
        hlc: Hybrid logical clock of the last write.
        expires_at: Expiry in epoch seconds, or ``None`` when durable.
        deleted: True for a tombstone (only returned when asked for).
        value: The LWW value.
        doc: The merged document view.
        present: The flag value.
    """

    tree: str
    key: str
    version: int
    hlc: int
    expires_at: float | None
    deleted: bool
    value: Value = None
    doc: DocState | None = None
    present: bool | None = None


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a prefix scan.

    Attributes:
        records: Records in key order.
        next_token: Pass back to continue; ``None`` on the last page.
    """

    records: list[Record]
    next_token: str | None


@dataclass(frozen=True, slots=True)
class Change:
    """One change-feed event.

    Attributes:
        seq: Monotonic sequence number (per store).
        tree: Tree name.
        key: Record key.
        op: ``upsert``, ``delete`` or ``expire``.
        hlc: HLC of the change.
    """

    seq: int
    tree: str
    key: str
    op: str
    hlc: int


@dataclass(frozen=True, slots=True)
class SweepReport:
    """What one TTL sweep did.

    Attributes:
        expired: Records turned into tombstones because their expiry passed.
        compacted: Tombstones removed after their grace period.
        kept: Tombstones kept because they carry a fencing register.
        trimmed: Change-feed events dropped (older than the grace period, or beyond the
            store's event cap).
    """

    expired: int = 0
    compacted: int = 0
    kept: int = 0
    trimmed: int = 0


@dataclass(frozen=True, slots=True)
class StoreStats:
    """Store statistics.

    Attributes:
        path: The environment directory.
        engine: Backend engine name.
        replica: This store's replica id.
        last_seq: Highest change-feed sequence.
        map_bytes: Address space reserved for the map.
        used_bytes: Bytes of pages in use.
        file_bytes: Bytes the data file takes on disk.
        records: Keys per tree (tombstones included).
        feed_floor: Highest sequence trimmed from the change feed (0: none); the feed holds
            the events after it.
    """

    path: str
    engine: str
    replica: str
    last_seq: int
    map_bytes: int
    used_bytes: int
    file_bytes: int
    records: dict[str, int] = field(default_factory=dict)
    feed_floor: int = 0
