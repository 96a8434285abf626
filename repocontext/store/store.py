"""The store facade: CRDT records in named trees, with TTL, tombstones and a change feed.

Reads hide tombstones and expired records. Writes are acknowledged (the method returns) only
after their transaction committed durably; :meth:`Store.batch` groups many writes per commit
and acknowledges each group only once it committed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Final, TypeVar

from repocontext.errors import MergeModeError, StoreUnavailableError
from repocontext.store import _writes as w
from repocontext.store import feed
from repocontext.store._ops import OpFactory, check_patch
from repocontext.store.backend import Backend, WriteTxn, prefix_end
from repocontext.store.batch import Batch
from repocontext.store.clock import Clock, SystemClock
from repocontext.store.document import DocPatch, DocState
from repocontext.store.engines import backend_exists, open_backend
from repocontext.store.frame_view import live_header, record_of
from repocontext.store.keys import key_bytes, validate_key
from repocontext.store.lmdb_backend import DEFAULT_MAP_BYTES
from repocontext.store.records import (
    Frame,
    Value,
    decode_frame,
    decode_lww,
    decode_lww_fields,
    decode_lww_packed,
    encode_update,
    frame_liveness,
)
from repocontext.store.replica import replica_id
from repocontext.store.scan_token import resume_after, scan_token
from repocontext.store.trees import TREES, MergeMode, tree_spec
from repocontext.store.view import Change, Page, Record, StoreStats, SweepReport

__all__ = ["DEFAULT_MAX_VALUE_BYTES", "Store"]

DEFAULT_MAX_VALUE_BYTES: Final = 4 * 1024 * 1024
DEFAULT_TOMBSTONE_GRACE_SECONDS: Final = 7 * 24 * 3600
DEFAULT_FEED_MAX_EVENTS: Final = 1_000_000
"""Change-feed events kept at most (about 80 MB; a cold index of 25,000 files writes ~520,000)."""
_FENCE_REGISTER: Final = "fence"
_T = TypeVar("_T")


class Store:
    """CRDT records over a :class:`~repocontext.store.backend.Backend`."""

    def __init__(
        self,
        backend: Backend,
        *,
        clock: Clock | None = None,
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
        tombstone_grace_seconds: float = DEFAULT_TOMBSTONE_GRACE_SECONDS,
        feed_max_events: int = DEFAULT_FEED_MAX_EVENTS,
    ) -> None:
        """Wrap an open backend (use :meth:`open` for the embedded LMDB store).

        The sweep drops change-feed entries older than ``tombstone_grace_seconds`` and any
        beyond the newest ``feed_max_events`` events (see :meth:`changes`).
        """
        self.backend = backend
        self.clock: Clock = clock or SystemClock()
        self.max_value_bytes = max_value_bytes
        self.tombstone_grace_seconds = tombstone_grace_seconds
        self.feed_max_events = feed_max_events
        self.client_id = replica_id(backend)
        self.replica = f"{self.client_id:x}"
        self.ops = OpFactory(self)
        """Validated write operations, for :class:`Batch` and the single-write methods."""

    @staticmethod
    def exists(data_dir: Path, store_url: str | None = None) -> bool:
        """Whether ``data_dir`` (or the database of ``store_url``) holds a store.

        True means :meth:`open` would open, not create, one.

        Raises:
            InvalidInputError: ``store_url`` is not a supported store URL.
            StoreUnavailableError: The database of ``store_url`` cannot be reached.
        """
        return backend_exists(data_dir, [*TREES, *w.INTERNAL_TREES], store_url)

    @classmethod
    def open(
        cls,
        data_dir: Path,
        *,
        read_only: bool = False,
        clock: Clock | None = None,
        map_bytes: int = DEFAULT_MAP_BYTES,
        max_map_bytes: int | None = None,
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
        tombstone_grace_seconds: float = DEFAULT_TOMBSTONE_GRACE_SECONDS,
        feed_max_events: int = DEFAULT_FEED_MAX_EVENTS,
        store_url: str | None = None,
    ) -> Store:
        """Open (creating when writable) the store: LMDB under ``data_dir/store`` by default.

        A ``store_url`` of ``postgresql://`` (or ``postgres://``) opens the PostgreSQL backend
        on that database instead (see :mod:`repocontext.store.postgres_backend`); ``data_dir``
        then holds only what the server derives (indexes) and its locks.

        Raises:
            InvalidInputError: ``store_url`` is not a supported store URL.
            StoreNotFoundError: ``read_only`` and the database of ``store_url`` holds no store.
            StoreReadOnlyError: ``data_dir`` cannot be written and ``read_only`` is False.
            StoreUnavailableError: The environment or the database cannot be opened.
        """
        backend = open_backend(
            data_dir,
            [*TREES, *w.INTERNAL_TREES],
            store_url=store_url,
            read_only=read_only,
            map_bytes=map_bytes,
            max_map_bytes=max_map_bytes,
        )
        return cls(
            backend,
            clock=clock,
            max_value_bytes=max_value_bytes,
            tombstone_grace_seconds=tombstone_grace_seconds,
            feed_max_events=feed_max_events,
        )

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def exclusive(self, name: str) -> AbstractContextManager[bool]:
        """Hold the lock ``name`` against other processes for the ``with`` block.

        Yields False, holding nothing, when another process holds it; the lock is dropped
        with its holder, also when that process is killed.

        Raises:
            StoreReadOnlyError: The store is open read-only.
        """
        return self.backend.exclusive(name)

    def close(self) -> None:
        """Close the store (idempotent)."""
        self.backend.close()

    # -- reads -------------------------------------------------------------------------

    def get(self, tree: str, key: str, *, include_deleted: bool = False) -> Record | None:
        """Return the live record at ``key``, or ``None``.

        Raises:
            UnknownTreeError: ``tree`` is not a named tree.
            InvalidKeyError: ``key`` breaks the key rules.
        """
        spec = TREES.get(tree) or tree_spec(tree)
        raw = self.backend.get(spec.name, key_bytes(key))
        if raw is None:
            return None
        if spec.mode is MergeMode.LWW and not include_deleted:
            version, hlc, expires, deleted, value = decode_lww(raw)
            if deleted or (expires is not None and expires <= self.clock.now() * 1000):
                return None
            seconds = None if expires is None else expires / 1000
            return Record(spec.name, key, version, hlc, seconds, False, value)
        frame = decode_frame(raw)
        if not include_deleted and not self._live(frame):
            return None
        return record_of(spec, key, frame)

    def scan(
        self,
        tree: str,
        prefix: str,
        *,
        limit: int = 100,
        token: str | None = None,
        include_deleted: bool = False,
        start: str | None = None,
    ) -> Page:
        """Return up to ``limit`` records whose key starts with ``prefix``, in key order.

        ``start`` begins the scan at that key (inclusive) instead of the start of the prefix,
        which lets a caller skip whole key ranges; ``token`` continues a previous page.

        Raises:
            UnknownTreeError: ``tree`` is not a named tree.
            InvalidTokenError: ``token`` did not come from the same scan.
        """
        spec = tree_spec(tree)
        limit = min(max(int(limit), 1), 10_000)
        first = resume_after(spec, prefix, token)
        if start is not None and token is None:
            first = max(first, start.encode())
        records: list[Record] = []
        last: bytes | None = None
        with self.backend.read() as txn:
            for kb, raw in txn.iterate(spec.name, first, prefix_end(prefix.encode())):
                frame = decode_frame(raw)
                if include_deleted or self._live(frame):
                    if len(records) == limit:
                        return Page(records, scan_token(spec, prefix, last or kb))
                    records.append(record_of(spec, kb.decode(), frame))
                last = kb
        return Page(records, None)

    def iter_records(
        self, tree: str, prefix: str = "", *, include_deleted: bool = False, page_size: int = 1000
    ) -> Iterator[Record]:
        """Iterate every record under ``prefix``, one page per read transaction."""
        token: str | None = None
        while True:
            page = self.scan(
                tree, prefix, limit=page_size, token=token, include_deleted=include_deleted
            )
            yield from page.records
            if page.next_token is None:
                return
            token = page.next_token

    def count(self, tree: str, prefix: str = "") -> int:
        """Return the number of live records under ``prefix``.

        Raises:
            UnknownTreeError: ``tree`` is not a named tree.
        """
        spec = tree_spec(tree)
        now_ms = self.clock.now() * 1000
        with self.backend.read() as txn:
            return sum(
                1
                for _, raw in txn.iterate(spec.name, prefix.encode(), prefix_end(prefix.encode()))
                if live_header(*frame_liveness(raw), now_ms)
            )

    def keys(self, tree: str, prefix: str, *, include_deleted: bool = False) -> list[str]:
        """Return the keys under ``prefix`` in key order, of live records unless told otherwise.

        No value is decoded (with ``include_deleted`` not even a liveness header): the fast
        path for the names or paths of many records. One read transaction.

        Raises:
            UnknownTreeError: ``tree`` is not a named tree.
        """
        spec, start, now_ms = tree_spec(tree), prefix.encode(), self.clock.now() * 1000
        with self.backend.read() as txn:
            return [
                kb.decode()
                for kb, raw in txn.iterate(spec.name, start, prefix_end(start))
                if include_deleted or live_header(*frame_liveness(raw), now_ms)
            ]

    def iter_fields(
        self, tree: str, prefix: str, names: frozenset[str], *, page_size: int = 5000
    ) -> Iterator[tuple[str, dict[str, Value]]]:
        """Yield ``(key, fields)`` of every live LWW record under ``prefix`` whose value is a map.

        Only the value's entries named in ``names`` are decoded (the fast path for reading a
        few small fields of many large records). One read transaction per page.

        Raises:
            UnknownTreeError: ``tree`` is not a named tree.
            MergeModeError: ``tree`` is not an LWW tree.
        """
        for key, fields in self._iter_lww(
            tree, prefix, lambda raw: decode_lww_fields(raw, names), page_size
        ):
            if fields is not None:
                yield key, fields

    def iter_packed(
        self, tree: str, prefix: str, *, page_size: int = 5000
    ) -> Iterator[tuple[str, bytes]]:
        """Yield ``(key, packed value)`` of every live LWW record under ``prefix``.

        The value stays as the msgpack bytes it was written as (see
        :func:`~repocontext.store.records.decode_lww_packed`): for comparing many stored
        values with computed ones by digest, nothing is decoded. One read transaction per page.

        Raises:
            UnknownTreeError: ``tree`` is not a named tree.
            MergeModeError: ``tree`` is not an LWW tree.
        """
        return self._iter_lww(tree, prefix, decode_lww_packed, page_size)

    def get_packed(self, tree: str, key: str) -> bytes | None:
        """The live LWW record's value as its stored msgpack bytes (see :meth:`iter_packed`)."""
        spec = TREES.get(tree) or tree_spec(tree)
        if spec.mode is not MergeMode.LWW:
            raise MergeModeError(f"{tree} is not a last-writer-wins tree")
        raw = self.backend.get(spec.name, key_bytes(key))
        expires, deleted, packed = decode_lww_packed(raw) if raw else (None, True, b"")
        return packed if live_header(expires, deleted, self.clock.now() * 1000) else None

    def _iter_lww(
        self,
        tree: str,
        prefix: str,
        decode: Callable[[bytes], tuple[int | None, bool, _T]],
        page_size: int,
    ) -> Iterator[tuple[str, _T]]:
        spec = tree_spec(tree)
        if spec.mode is not MergeMode.LWW:
            raise MergeModeError(f"{tree} is not a last-writer-wins tree")
        first, end = prefix.encode(), prefix_end(prefix.encode())
        while True:
            now_ms = self.clock.now() * 1000
            page: list[tuple[bytes, _T, bool]] = []
            with self.backend.read() as txn:
                for kb, raw in txn.iterate(spec.name, first, end):
                    if len(page) == page_size:
                        break
                    expires, deleted, payload = decode(raw)
                    page.append((kb, payload, live_header(expires, deleted, now_ms)))
            for kb, payload, live in page:
                if live:
                    yield kb.decode(), payload
            if len(page) < page_size:
                return
            first = page[-1][0] + b"\x00"

    def export_update(self, tree: str, key: str) -> bytes | None:
        """Return the record's full CRDT state (tombstones included) for another replica."""
        spec = tree_spec(tree)
        validate_key(key)
        with self.backend.read() as txn:
            raw = txn.get(spec.name, key.encode())
        return None if raw is None else encode_update(spec.mode, decode_frame(raw).state)

    def export_tree(self, tree: str, prefix: str = "") -> list[tuple[str, bytes]]:
        """Return ``(key, update)`` for every record under ``prefix``, from one snapshot."""
        spec = tree_spec(tree)
        with self.backend.read() as txn:
            return [
                (kb.decode(), encode_update(spec.mode, decode_frame(raw).state))
                for kb, raw in txn.iterate(spec.name, prefix.encode(), prefix_end(prefix.encode()))
            ]

    # -- writes ------------------------------------------------------------------------

    def put(self, tree: str, key: str, value: Value, *, ttl_seconds: float | None = None) -> Record:
        """Replace the value of an LWW record; acknowledged once durable.

        Raises:
            MergeModeError: ``tree`` is not an LWW tree.
            InvalidInputError: ``ttl_seconds`` is not positive.
            ValueTooLargeError: The record exceeds the value limit.
        """
        spec, row = self.ops.put_row(tree, key, value, ttl_seconds)
        return self._commit_live(tree, key, w.PutGroup(spec, [row]))

    def merge_fields(self, tree: str, key: str, patch: DocPatch) -> Record:
        """Merge a field-level change into a document record; acknowledged once durable.

        Raises:
            MergeModeError: ``tree`` is not a document tree.
            InvalidInputError: A field, set or register name is invalid.
        """
        return self._commit_live(tree, key, self.ops.merge_fields(tree, key, patch))

    def update_doc(self, tree: str, key: str, decide: w.DocDecision) -> Record | None:
        """Read a document and write the patch ``decide`` returns, in one write transaction.

        ``decide(live, stored)`` sees the merged view (``live`` is ``None`` when the record is
        absent, deleted or expired; ``stored`` includes those) and returns a patch or ``None``
        to write nothing; an exception it raises aborts the transaction. Writers of all
        processes are serialized, so this is a compare-and-set. Returns the new record, or
        ``None`` when nothing was written.

        Raises:
            MergeModeError: ``tree`` is not a document tree.
            InvalidInputError: The patch names an invalid field, set or register.
        """

        def checked(live: DocState | None, stored: DocState | None) -> DocPatch | None:
            patch = decide(live, stored)
            if patch is not None:
                check_patch(patch)
            return patch

        spec = tree_spec(tree)
        return self._commit_one(tree, key, w.op_update_doc(spec, validate_key(key), checked))

    def set_flag(self, tree: str, key: str, present: bool) -> Record | None:
        """Add or remove an observed-remove flag.

        Raises:
            MergeModeError: ``tree`` is not a flag tree.
        """
        return self._commit_one(tree, key, self.ops.set_flag(tree, key, present))

    def delete(self, tree: str, key: str) -> Record | None:
        """Tombstone a record; return the tombstone, or ``None`` when nothing was live."""
        return self._commit_one(tree, key, self.ops.delete(tree, key))

    def apply_update(self, tree: str, key: str, update: bytes) -> Record | None:
        """Merge foreign CRDT state; return the new record, or ``None`` when nothing changed.

        Raises:
            InvalidUpdateError: ``update`` does not decode.
            MergeModeError: The update's merge mode is not the tree's.
        """
        return self._commit_one(tree, key, self.ops.apply_update(tree, key, update))

    def batch(
        self,
        *,
        commit_every: int = 1000,
        on_commit: Callable[[list[str]], None] | None = None,
    ) -> Batch:
        """Return a batch that commits every ``commit_every`` writes (see :class:`Batch`)."""
        return Batch(self, commit_every=commit_every, on_commit=on_commit)

    def run_ops(self, ops: list[w.Op | w.PutGroup]) -> list[Frame | None]:
        """Run write operations in one durable transaction and return their frames."""
        return self._run(ops, want_frames=True)[0]

    def run_batch(self, ops: list[w.Op | w.PutGroup]) -> int:
        """Run write operations in one durable transaction; return how many changed a record."""
        return self._run(ops, want_frames=False)[1]

    def _run(
        self, ops: list[w.Op | w.PutGroup], *, want_frames: bool
    ) -> tuple[list[Frame | None], int]:
        now_ms = int(self.clock.now() * 1000)

        def transaction(txn: WriteTxn) -> tuple[list[Frame | None], int]:
            ctx = w.WriteContext(txn, self.client_id, now_ms, self.max_value_bytes)
            frames: list[Frame | None] = []
            changed = 0
            for op in ops:
                if isinstance(op, w.PutGroup):
                    frames += ctx.put_rows(op, want_frames=want_frames)
                    changed += len(op.rows)
                else:
                    frame = op(ctx)
                    frames.append(frame)
                    changed += frame is not None
            ctx.finish()
            return frames, changed

        return self.backend.write(transaction)

    def _commit_live(self, tree: str, key: str, op: w.Op | w.PutGroup) -> Record:
        record = self._commit_one(tree, key, op)
        if record is None:  # put and merge_fields always store a frame
            raise StoreUnavailableError(f"the write of {key!r} stored nothing")
        return record

    def _commit_one(self, tree: str, key: str, op: w.Op | w.PutGroup) -> Record | None:
        frame = self.run_ops([op])[0]
        return None if frame is None else record_of(tree_spec(tree), key, frame)

    # -- feed, TTL, stats --------------------------------------------------------------

    def changes(self, after: int = 0, *, limit: int = 1000) -> list[Change]:
        """Return change-feed events with ``seq > after``, oldest first.

        Raises:
            FeedTrimmedError: Events after ``after`` were already trimmed by a sweep (``after``
                is below :meth:`feed_floor`): the caller must resynchronise from the records.
        """
        retention = (
            f"at most {self.feed_max_events:,} events, none older than "
            f"{self.tombstone_grace_seconds:g} s"
        )
        return feed.read_changes(self.backend, after, limit, retention)

    def feed_floor(self) -> int:
        """Return the highest sequence number trimmed from the feed (0: none)."""
        return feed.feed_floor(self.backend)

    def cursor(self, name: str) -> int:
        """Return the saved feed position of consumer ``name`` (0 when new)."""
        return feed.read_cursor(self.backend, name)

    def save_cursor(self, name: str, seq: int) -> None:
        """Durably record that consumer ``name`` has processed the feed up to ``seq``."""
        feed.write_cursor(self.backend, name, seq)

    def last_seq(self) -> int:
        """Return the highest sequence number handed out."""
        return feed.last_seq(self.backend)

    def sweep(self, *, limit: int = 10_000) -> SweepReport:
        """Expire records, compact old tombstones and trim the feed (see :meth:`changes`)."""
        from repocontext.store.sweeper import sweep_once

        return sweep_once(self, limit=limit)

    @property
    def engine(self) -> str:
        """The backend's engine name (``lmdb``, ``postgresql``)."""
        return self.backend.engine

    @property
    def location(self) -> str:
        """Where the store lives (a directory, or a database URL without its password)."""
        return self.backend.location

    def ping(self) -> float:
        """Return the seconds one minimal read takes, without retrying (a health probe).

        Raises:
            StoreUnavailableError: The store is closed or its engine does not answer.
        """
        return self.backend.ping()

    def stats(self) -> StoreStats:
        """Return store statistics."""
        raw = self.backend.stats()
        return StoreStats(
            path=raw.path,
            engine=raw.engine,
            replica=self.replica,
            last_seq=self.last_seq(),
            map_bytes=raw.map_bytes,
            used_bytes=raw.used_bytes,
            file_bytes=raw.file_bytes,
            records={name: n for name, n in raw.entries.items() if name in TREES},
            feed_floor=self.feed_floor(),
        )

    # -- internals ---------------------------------------------------------------------

    def _live(self, frame: Frame) -> bool:
        if frame.deleted:
            return False
        expires = frame.expires_at_ms
        return expires is None or expires > self.clock.now() * 1000
