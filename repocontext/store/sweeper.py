"""TTL sweeping: expired records become tombstones; old tombstones are compacted.

Reads already hide expired records; the sweep makes the expiry durable (a tombstone that
replicas and the change feed see) and reclaims space. A document tombstone that carries a
fencing register is kept, so a fencing token can never move backwards after compaction.
The same transaction trims the change feed to the grace period and the store's event cap.
"""

from __future__ import annotations

import threading
from typing import Protocol

from repocontext.store import _writes as w
from repocontext.store.backend import Backend, WriteTxn
from repocontext.store.clock import Clock, hlc_millis
from repocontext.store.document import read_doc
from repocontext.store.records import Frame
from repocontext.store.trees import TREES_BY_TAG, MergeMode
from repocontext.store.view import SweepReport

__all__ = ["Sweeper", "SweptStore", "sweep_once"]


class SweptStore(Protocol):
    """What a sweep reads of its store: the backend, the clock and the retention settings."""

    @property
    def backend(self) -> Backend:
        """Where the sweep's transaction runs."""
        ...

    @property
    def clock(self) -> Clock:
        """What "expired" is measured against."""
        ...

    @property
    def client_id(self) -> int:
        """The replica id the tombstones are written under."""
        ...

    @property
    def max_value_bytes(self) -> int:
        """The value cap of the writes the sweep makes."""
        ...

    @property
    def tombstone_grace_seconds(self) -> float:
        """How long a tombstone (and a change-feed entry) is kept."""
        ...

    @property
    def feed_max_events(self) -> int:
        """How many change-feed events are kept at most."""
        ...


def sweep_once(store: SweptStore, *, limit: int = 10_000) -> SweepReport:
    """Run one sweep of at most ``limit`` index and feed entries each, in one transaction."""
    now_ms = int(store.clock.now() * 1000)
    grace_ms = int(store.tombstone_grace_seconds * 1000)

    def transaction(txn: WriteTxn) -> SweepReport:
        ctx = w.WriteContext(txn, store.client_id, now_ms, store.max_value_bytes)
        expired = _expire(ctx, now_ms, limit)
        compacted, kept = _compact(ctx, now_ms - grace_ms, limit)
        trimmed = w.trim_feed(
            ctx.txn, before_ms=now_ms - grace_ms, keep_events=store.feed_max_events, limit=limit
        )
        ctx.finish()
        return SweepReport(expired=expired, compacted=compacted, kept=kept, trimmed=trimmed)

    return store.backend.write(transaction)


def _expire(ctx: w.WriteContext, now_ms: int, limit: int) -> int:
    due = list(_due(ctx.txn, w.EXPIRY, now_ms, limit))
    expired = 0
    for raw in due:
        millis, tag, kb = w.split_index_key(raw)
        spec = TREES_BY_TAG[tag]
        frame = ctx.load(spec, kb.decode())
        if frame is None or frame.deleted or frame.expires_at_ms != millis:
            ctx.txn.delete(w.EXPIRY, raw)  # stale index entry
            continue
        ctx.store(spec, kb.decode(), frame, w.tombstone_frame(ctx, spec, frame))
        expired += 1
    return expired


def _compact(ctx: w.WriteContext, before_ms: int, limit: int) -> tuple[int, int]:
    compacted = kept = 0
    for raw in list(_due(ctx.txn, w.TOMBSTONES, before_ms, limit)):
        millis, tag, kb = w.split_index_key(raw)
        spec = TREES_BY_TAG[tag]
        ctx.txn.delete(w.TOMBSTONES, raw)
        frame = ctx.load(spec, kb.decode())
        if frame is None or not frame.deleted or hlc_millis(frame.hlc) != millis:
            continue
        if _carries_fence(frame):
            kept += 1
            continue
        ctx.txn.delete(spec.name, kb)
        compacted += 1
    return compacted, kept


def _due(txn: WriteTxn, tree: str, until_ms: int, limit: int) -> list[bytes]:
    stop = w.index_key(until_ms + 1, 0, b"")
    keys: list[bytes] = []
    for key, _ in txn.iterate(tree, b"", stop):
        keys.append(key)
        if len(keys) >= limit:
            break
    return keys


def _carries_fence(frame: Frame) -> bool:
    if frame.mode is not MergeMode.DOC or not isinstance(frame.state, bytes):
        return False
    return bool(read_doc(frame.state).maxima)


class Sweeper:
    """A daemon thread that sweeps a store every ``interval_seconds``."""

    def __init__(self, store: SweptStore, *, interval_seconds: float = 60.0) -> None:
        """Prepare a sweeper; call :meth:`start` to run it."""
        self._store = store
        self._interval = interval_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="repocontext-sweeper", daemon=True)
        self.last_report: SweepReport | None = None

    def start(self) -> None:
        """Start sweeping in the background."""
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the thread to stop and wait for it."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.last_report = sweep_once(self._store)
