"""Write-side machinery shared by single writes and batches.

Every write runs inside one backend transaction through a :class:`WriteContext`, which
allocates HLC timestamps and change-feed sequence numbers from the store's meta tree (so they
stay monotonic across threads, processes and restarts), stores frames, and keeps the expiry
index, the tombstone index and the change feed in step with the records.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final, NamedTuple

import msgpack

from repocontext.errors import (
    InvalidInputError,
    InvalidUpdateError,
    MergeModeError,
    ValueTooLargeError,
)
from repocontext.store.backend import ReadTxn, WriteTxn
from repocontext.store.clock import hlc_millis, next_hlc
from repocontext.store.document import (
    DocMeta,
    DocPatch,
    DocState,
    apply_patch,
    doc_merge_meta,
    read_doc,
)
from repocontext.store.keys import key_bytes
from repocontext.store.records import (
    Envelope,
    FlagState,
    Frame,
    Value,
    decode_frame,
    decode_update,
    encode_frame,
    encode_lww_frame,
    flag_merge,
    lww_merge,
    pack,
)
from repocontext.store.trees import MergeMode, TreeSpec

META: Final = "repo-context-meta"
FEED: Final = "repo-context-feed"
EXPIRY: Final = "repo-context-expiry"
TOMBSTONES: Final = "repo-context-tombstones"
INTERNAL_TREES: Final = (META, FEED, EXPIRY, TOMBSTONES)

_U64: Final = struct.Struct(">Q")
FEED_UPSERT: Final = 1
FEED_DELETE: Final = 2
FEED_OPS: Final = {FEED_UPSERT: "upsert", FEED_DELETE: "delete"}
FEED_FLOOR: Final = b"feed-floor"
"""Meta key: the highest sequence number trimmed from the feed (0: nothing trimmed)."""

Op = Callable[["WriteContext"], Frame | None]
"""A queued write: runs inside a transaction, returns the frame it stored (None: no change)."""


def read_meta_int(txn: ReadTxn, name: bytes) -> int:
    """Return an integer from the meta tree (0 when unset)."""
    raw = txn.get(META, name)
    return 0 if raw is None else int(_U64.unpack(raw)[0])


def index_key(millis: int, tag: int, key: bytes) -> bytes:
    """Key of an expiry or tombstone index entry: time, tree tag, record key."""
    return _U64.pack(max(millis, 0)) + bytes([tag]) + key


def split_index_key(raw: bytes) -> tuple[int, int, bytes]:
    """Invert :func:`index_key`."""
    return int(_U64.unpack(raw[:8])[0]), raw[8], raw[9:]


def seq_key(seq: int) -> bytes:
    """Key of a change-feed event."""
    return _U64.pack(seq)


@dataclass
class WriteContext:
    """The state of one write transaction."""

    txn: WriteTxn
    client_id: int
    now_ms: int
    max_value_bytes: int
    hlc: int = 0
    seq: int = 0

    def __post_init__(self) -> None:
        self.replica = f"{self.client_id:x}"
        self.hlc = read_meta_int(self.txn, b"hlc")
        self.seq = read_meta_int(self.txn, b"seq")
        # The wall clock is read once per transaction, so its HLC floor is fixed too.
        self._physical = next_hlc(0, self.now_ms / 1000)
        self._first_seq = self.seq + 1
        self._events: list[tuple[int, int, int, str]] = []

    def tick(self) -> int:
        """Allocate the next HLC timestamp."""
        hlc = self.hlc + 1
        self.hlc = hlc if hlc > self._physical else self._physical
        return self.hlc

    def put_rows(self, group: PutGroup, *, want_frames: bool = True) -> list[Frame]:
        """Run a group of LWW writes (the bulk path: one tight loop, no per-row closures).

        With ``want_frames`` False only frames that had to be built anyway are returned.

        Raises:
            ValueTooLargeError: A frame exceeds the value limit.
        """
        spec = group.spec
        get, put = self.txn.bind(spec.name)
        replica, physical, events, limit = (
            self.replica,
            self._physical,
            self._events,
            self.max_value_bytes,
        )
        hlc, seq = self.hlc, self.seq
        frames: list[Frame] = []
        # The stored values in one request (a remote engine's round trips add up), unless a
        # key repeats: then each row must see the write of the one before it.
        kbs = [row.kb for row in group.rows]
        olds = self.txn.get_many(spec.name, kbs) if len(set(kbs)) == len(kbs) else None
        try:
            for index, (key, kb, value, expires, packed) in enumerate(group.rows):
                raw = get(kb) if olds is None else olds[index]
                hlc = hlc + 1 if hlc + 1 > physical else physical
                seq += 1
                data = encode_lww_frame(seq, hlc, replica, expires, False, value, packed)
                if len(data) > limit:
                    raise ValueTooLargeError(
                        f"record {key[:80]!r} encodes to {len(data)} bytes; the limit is {limit}"
                    )
                put(kb, data)
                events.append((spec.tag, FEED_UPSERT, hlc, key))
                if raw is not None or expires is not None or want_frames:
                    envelope = Envelope(hlc, replica, value, expires)
                    frame = Frame(MergeMode.LWW, seq, hlc, expires, False, envelope)
                    if raw is not None or expires is not None:
                        old = None if raw is None else decode_frame(raw)
                        self._reindex(spec, kb, old, frame)
                    frames.append(frame)
        finally:
            self.hlc, self.seq = hlc, seq
        return frames

    def observe(self, hlc: int) -> None:
        """Move the clock past a timestamp received from another replica."""
        self.hlc = max(self.hlc, hlc)

    def load(self, spec: TreeSpec, key: str) -> Frame | None:
        """Return the stored frame of ``key`` (tombstones included)."""
        raw = self.txn.get(spec.name, key.encode())
        return None if raw is None else decode_frame(raw)

    def store(self, spec: TreeSpec, key: str, old: Frame | None, frame: Frame) -> Frame:
        """Write ``frame`` (its version is assigned here) and maintain indexes and the feed.

        Raises:
            ValueTooLargeError: The encoded frame exceeds the value limit.
        """
        self.seq += 1
        mode, _, hlc, expires, deleted, state = frame
        stored = Frame(mode, self.seq, hlc, expires, deleted, state)
        data = encode_frame(stored)
        if len(data) > self.max_value_bytes:
            raise ValueTooLargeError(
                f"record {key[:80]!r} encodes to {len(data)} bytes; "
                f"the limit is {self.max_value_bytes}"
            )
        kb = key.encode()
        self.txn.put(spec.name, kb, data)
        if old is not None or expires is not None or deleted:
            self._reindex(spec, kb, old, stored)
        self._events.append((spec.tag, FEED_DELETE if deleted else FEED_UPSERT, hlc, key))
        return stored

    def _reindex(self, spec: TreeSpec, kb: bytes, old: Frame | None, new: Frame) -> None:
        if old is not None and old.expires_at_ms is not None and not old.deleted:
            self.txn.delete(EXPIRY, index_key(old.expires_at_ms, spec.tag, kb))
        if new.expires_at_ms is not None and not new.deleted:
            self.txn.put(EXPIRY, index_key(new.expires_at_ms, spec.tag, kb), b"")
        if old is not None and old.deleted:
            self.txn.delete(TOMBSTONES, index_key(hlc_millis(old.hlc), spec.tag, kb))
        if new.deleted:
            self.txn.put(TOMBSTONES, index_key(hlc_millis(new.hlc), spec.tag, kb), b"")

    def finish(self) -> None:
        """Persist the transaction's change-feed events, the clock and the sequence counter.

        The events of one transaction form one feed entry keyed by its last sequence number,
        so a reader seeking ``after + 1`` lands on the entry that holds it.
        """
        if self._events:
            self.txn.put(
                FEED, _U64.pack(self.seq), pack([self._first_seq, *self._events]), append=True
            )
        self.txn.put(META, b"hlc", _U64.pack(self.hlc))
        self.txn.put(META, b"seq", _U64.pack(self.seq))


class PutRow(NamedTuple):
    """One validated LWW write, ready for a transaction."""

    key: str
    kb: bytes
    value: Value
    expires_at_ms: int | None
    packed: bytes  # pack(value), made once when the write is validated


@dataclass(slots=True)
class PutGroup:
    """Consecutive LWW writes into one tree, run by :meth:`WriteContext.put_rows`."""

    spec: TreeSpec
    rows: list[PutRow]


def prepare_put(
    spec: TreeSpec,
    key: str,
    value: Value,
    expires_at_ms: int | None,
    max_value_bytes: int,
    packed: bytes | None = None,
    key_checked: bool = False,
) -> PutRow:
    """Validate a whole-value LWW write; key and value are encoded before any transaction.

    ``packed``: ``pack(value)`` when the caller has already made it, and ``key_checked``:
    the key was validated already (both are trusted).

    Raises:
        MergeModeError: The tree is not an LWW tree.
        InvalidKeyError: The key breaks the key rules.
        InvalidInputError: The value is not made of storable types.
        ValueTooLargeError: The packed value alone exceeds ``max_value_bytes``.
    """
    if spec.mode is not MergeMode.LWW:
        _require(spec, MergeMode.LWW, "put")
    kb = key.encode() if key_checked else key_bytes(key)
    try:
        packed = pack(value) if packed is None else packed
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidInputError(
            f"the value of {key[:80]!r} cannot be stored: {exc}",
            hint="Values are None, bool, int, float, str, bytes, lists and str-keyed dicts.",
        ) from exc
    if len(packed) > max_value_bytes:
        raise ValueTooLargeError(
            f"the value of {key[:80]!r} is {len(packed)} bytes; the limit is {max_value_bytes}"
        )
    return PutRow(key, kb, value, expires_at_ms, packed)


def op_merge_fields(spec: TreeSpec, key: str, patch: DocPatch) -> Op:
    """A field-level document write."""
    _require(spec, MergeMode.DOC, "merge_fields")

    def run(ctx: WriteContext) -> Frame:
        old = ctx.load(spec, key)
        state = apply_patch(_doc_bytes(old), patch, client_id=ctx.client_id, hlc=ctx.tick())
        return ctx.store(spec, key, old, _doc_frame(*state))

    return run


DocDecision = Callable[[DocState | None, DocState | None], DocPatch | None]
"""Given a document's live view (``None`` when absent, deleted or expired) and its stored view
(tombstones and expired documents included), return the patch to apply, or ``None``."""


def op_update_doc(spec: TreeSpec, key: str, decide: DocDecision) -> Op:
    """A read-modify-write of a document inside the write transaction (compare and set).

    ``decide`` may raise to refuse: the transaction then writes nothing.
    """
    _require(spec, MergeMode.DOC, "update_doc")

    def run(ctx: WriteContext) -> Frame | None:
        old = ctx.load(spec, key)
        stored = read_doc(old.state) if old is not None and isinstance(old.state, bytes) else None
        live = (
            stored
            if old is not None
            and not old.deleted
            and (old.expires_at_ms is None or old.expires_at_ms > ctx.now_ms)
            else None
        )
        patch = decide(live, stored)
        if patch is None:
            return None
        state = apply_patch(_doc_bytes(old), patch, client_id=ctx.client_id, hlc=ctx.tick())
        return ctx.store(spec, key, old, _doc_frame(*state))

    return run


def op_set_flag(spec: TreeSpec, key: str, present: bool) -> Op:
    """An observed-remove flag write."""
    _require(spec, MergeMode.FLAG, "set_flag")

    def run(ctx: WriteContext) -> Frame | None:
        old = ctx.load(spec, key)
        current = old.state if old is not None and isinstance(old.state, FlagState) else FlagState()
        hlc = ctx.tick()
        if present:
            state = FlagState(current.adds | {f"{hlc:x}.{ctx.replica}"}, current.removes)
        elif current.present:
            state = FlagState(current.adds, current.removes | current.adds)
        else:
            return None
        return ctx.store(spec, key, old, Frame(MergeMode.FLAG, 0, hlc, None, False, state))

    return run


def op_delete(spec: TreeSpec, key: str) -> Op:
    """Turn a live record into a tombstone (no-op when missing or already deleted)."""

    def run(ctx: WriteContext) -> Frame | None:
        old = ctx.load(spec, key)
        if old is None or old.deleted:
            return None
        return ctx.store(spec, key, old, tombstone_frame(ctx, spec, old))

    return run


def tombstone_frame(ctx: WriteContext, spec: TreeSpec, old: Frame) -> Frame:
    """Return the tombstone that replaces ``old``."""
    if spec.mode is MergeMode.DOC:
        state = apply_patch(
            _doc_bytes(old), DocPatch(delete=True), client_id=ctx.client_id, hlc=ctx.tick()
        )
        return _doc_frame(*state)
    if spec.mode is MergeMode.FLAG:
        flag = old.state if isinstance(old.state, FlagState) else FlagState()
        return Frame(spec.mode, 0, ctx.tick(), None, False, FlagState(flag.adds, flag.adds))
    return _lww_frame(Envelope(ctx.tick(), ctx.replica, None, None, deleted=True))


def op_apply_update(spec: TreeSpec, key: str, update: bytes) -> Op:
    """Merge foreign CRDT state into a record (no write when nothing changes).

    Raises:
        InvalidUpdateError: The update does not decode.
        MergeModeError: The update's mode is not the tree's.
    """
    mode, incoming = decode_update(update)
    if mode is not spec.mode:
        raise MergeModeError(
            f"a {mode.value} update cannot merge into {spec.name} ({spec.mode.value})"
        )
    if isinstance(incoming, bytes):
        read_doc(incoming)  # validate before the transaction

    def run(ctx: WriteContext) -> Frame | None:
        old = ctx.load(spec, key)
        merged = _merge_state(old, incoming)
        if merged is None:
            return None
        ctx.observe(merged.hlc)
        return ctx.store(spec, key, old, merged)

    return run


def _merge_state(old: Frame | None, incoming: Envelope | FlagState | bytes) -> Frame | None:
    if isinstance(incoming, Envelope):
        current = old.state if old is not None else None
        if isinstance(current, Envelope) and lww_merge(current, incoming) is current:
            return None
        return _lww_frame(incoming)
    if isinstance(incoming, FlagState):
        base = old.state if old is not None and isinstance(old.state, FlagState) else FlagState()
        merged_flag = flag_merge(base, incoming)
        if old is not None and merged_flag == base:
            return None
        hlc = old.hlc if old is not None else 0
        return Frame(MergeMode.FLAG, 0, hlc, None, False, merged_flag)
    current_doc = _doc_bytes(old)
    if current_doc:
        merged_doc, meta = doc_merge_meta(current_doc, incoming)
    else:
        merged_doc, meta = doc_merge_meta(incoming, b"")
    if current_doc is not None and merged_doc == current_doc:
        return None
    return _doc_frame(merged_doc, meta)


def _lww_frame(envelope: Envelope) -> Frame:
    return Frame(MergeMode.LWW, 0, envelope.hlc, envelope.expires_at_ms, envelope.deleted, envelope)


def _doc_frame(state: bytes, meta: DocMeta) -> Frame:
    return Frame(MergeMode.DOC, 0, meta.hlc, meta.expires_at_ms, meta.deleted, state)


def _doc_bytes(frame: Frame | None) -> bytes | None:
    if frame is None:
        return None
    if not isinstance(frame.state, bytes):
        raise InvalidUpdateError("stored document record holds no document state")
    return frame.state


def _require(spec: TreeSpec, mode: MergeMode, operation: str) -> None:
    if spec.mode is not mode:
        raise MergeModeError(
            f"{operation} needs a {mode.value} tree; {spec.name} merges as {spec.mode.value}"
        )


def trim_feed(txn: WriteTxn, *, before_ms: int, keep_events: int, limit: int) -> int:
    """Drop the oldest change-feed entries; return how many events they held.

    An entry goes when its newest event is older than ``before_ms`` or when more than
    ``keep_events`` events are kept; whole entries (one per write transaction), oldest
    first, at most ``limit`` of them. :data:`FEED_FLOOR` rises to the last sequence dropped.
    """
    head, start = read_meta_int(txn, b"seq"), read_meta_int(txn, FEED_FLOOR)
    floor = start
    dropped: list[bytes] = []
    for key, raw in txn.iterate(FEED, b"", None):
        if len(dropped) >= limit:
            break
        over_cap = head - floor > keep_events  # (then the entry is not decoded)
        if not over_cap and hlc_millis(msgpack.unpackb(raw, raw=False)[-1][2]) >= before_ms:
            break  # (entries are in time order: the rest are younger)
        dropped.append(key)
        floor = int(_U64.unpack(key)[0])
    for key in dropped:
        txn.delete(FEED, key)
    if dropped:
        txn.put(META, FEED_FLOOR, _U64.pack(floor))
    return floor - start


def decode_feed_entry(raw: bytes) -> Iterator[tuple[int, int, str, int, str]]:
    """Yield ``(seq, tree tag, op, hlc, key)`` for every event of one stored feed entry."""
    first, *events = msgpack.unpackb(raw, raw=False)
    for offset, (tag, op, hlc, key) in enumerate(events):
        yield first + offset, tag, FEED_OPS[op], hlc, key
