"""Record values and their merge functions: the CRDT layer below the store.

Three record shapes, one per merge mode:

* :class:`Envelope` (LWW) — a whole value stamped with (hlc, replica); the larger stamp wins.
* :class:`FlagState` (FLAG) — an observed-remove flag: unique add-tags and removed tags;
  present while some add-tag is not removed; merge is set union.
* document state (DOC) — pycrdt update bytes, see :mod:`repocontext.store.document`.

Each merge is commutative, associative and idempotent; the property tests prove it.

The stored *frame* wraps a value with what the store needs without decoding the CRDT:
the record's version (change-feed sequence), its latest HLC, its expiry and whether it is a
tombstone. The *update* is the replica-neutral CRDT state exchanged by archives and replicas.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, TypeAlias

import msgpack

from repocontext.errors import InvalidUpdateError
from repocontext.store.trees import MergeMode

__all__ = [
    "Envelope",
    "FlagState",
    "Frame",
    "Value",
    "decode_frame",
    "decode_lww",
    "decode_lww_fields",
    "decode_lww_packed",
    "decode_update",
    "encode_frame",
    "encode_lww_frame",
    "encode_update",
    "flag_merge",
    "frame_liveness",
    "lww_merge",
    "pack",
    "unpack",
]

Value: TypeAlias = bool | int | float | str | bytes | list["Value"] | dict[str, "Value"] | None
"""What an LWW record or a document field may hold (msgpack-encodable, str keys)."""

FORMAT: Final = 1
_MODE_CODES: Final = {MergeMode.LWW: "l", MergeMode.DOC: "d", MergeMode.FLAG: "f"}
_CODE_MODES: Final = {code: mode for mode, code in _MODE_CODES.items()}


class Envelope(NamedTuple):
    """A last-writer-wins value (a tuple: built on every write, so it must be cheap).

    Attributes:
        hlc: Hybrid logical clock of the write.
        replica: Id of the writing replica (tie-breaker).
        value: The value; ``None`` for a tombstone.
        expires_at_ms: Expiry in epoch milliseconds, or ``None`` for durable.
        deleted: True for a tombstone.
    """

    hlc: int
    replica: str
    value: Value
    expires_at_ms: int | None = None
    deleted: bool = False

    def stamp(self) -> tuple[int, str]:
        """Return the total-order stamp ``(hlc, replica)``."""
        return (self.hlc, self.replica)


@dataclass(frozen=True, slots=True)
class FlagState:
    """An observed-remove flag.

    Attributes:
        adds: Unique tags of every add.
        removes: Tags whose add was observed by a remove.
    """

    adds: frozenset[str] = frozenset()
    removes: frozenset[str] = frozenset()

    @property
    def present(self) -> bool:
        """True while some add has not been removed."""
        return bool(self.adds - self.removes)


def lww_merge(a: Envelope, b: Envelope) -> Envelope:
    """Return the envelope with the larger ``(hlc, replica)`` stamp."""
    return a if a.stamp() >= b.stamp() else b


def flag_merge(a: FlagState, b: FlagState) -> FlagState:
    """Return the union of two flag states."""
    return FlagState(adds=a.adds | b.adds, removes=a.removes | b.removes)


class Frame(NamedTuple):
    """A stored record: CRDT state plus what the store reads without decoding it.

    Attributes:
        mode: Merge mode of the tree the record lives in.
        version: Change-feed sequence of the last effective write.
        hlc: Latest hybrid logical clock seen in the state.
        expires_at_ms: Expiry in epoch milliseconds, or ``None``.
        deleted: True for a tombstone.
        state: ``Envelope``, ``FlagState`` or document update bytes.
    """

    mode: MergeMode
    version: int
    hlc: int
    expires_at_ms: int | None
    deleted: bool
    state: Envelope | FlagState | bytes


def encode_frame(frame: Frame) -> bytes:
    """Serialize a frame for storage."""
    mode, version, hlc, expires, deleted, state = frame
    if isinstance(state, Envelope):
        return encode_lww_frame(version, hlc, state.replica, expires, deleted, state.value)
    return pack([FORMAT, _MODE_CODES[mode], version, hlc, expires, deleted, _state_to_wire(state)])


def encode_lww_frame(
    version: int,
    hlc: int,
    replica: str,
    expires: int | None,
    deleted: bool,
    value: Value,
    packed: bytes | None = None,
) -> bytes:
    """Serialize an LWW frame: ``[format, "l", version, hlc, expires, deleted, replica, value]``.

    An LWW frame's stamp, expiry and tombstone flag are its envelope's, so they are stored
    once and a point read unpacks one flat array. ``packed``: ``pack(value)`` when the caller
    already has it (the value is the array's last element, so its bytes are appended as-is).
    """
    head = pack([FORMAT, "l", version, hlc, expires, deleted, replica])
    # A msgpack fixarray's header is one byte, 0x90 | length: 7 elements become 8.
    return b"\x98" + head[1:] + (pack(value) if packed is None else packed)


def decode_lww(data: bytes) -> tuple[int, int, int | None, bool, Value]:
    """Return ``(version, hlc, expires_at_ms, deleted, value)`` of a stored LWW frame.

    The point-read fast path: no intermediate Frame or Envelope is built.

    Raises:
        InvalidUpdateError: The bytes are not an LWW frame.
    """
    try:
        fmt, code, version, hlc, expires, deleted, _, value = unpack(data)
        if fmt != FORMAT or code != "l":
            raise ValueError(f"frame format {fmt}/{code}")
        return version, hlc, expires, deleted, value
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise InvalidUpdateError(f"stored record is not a valid LWW frame: {exc}") from exc


def frame_liveness(data: bytes) -> tuple[int | None, bool]:
    """Return ``(expires_at_ms, deleted)`` of a stored frame without decoding its state.

    Raises:
        InvalidUpdateError: The bytes are not a frame.
    """
    try:
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        unpacker.feed(data)
        unpacker.read_array_header()
        fmt = unpacker.unpack()
        for _ in range(3):  # code, version, hlc
            unpacker.skip()
        expires, deleted = unpacker.unpack(), unpacker.unpack()
        if fmt != FORMAT:
            raise ValueError(f"frame format {fmt}")
        return expires, bool(deleted)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise InvalidUpdateError(f"stored record is not a valid frame: {exc}") from exc


def decode_lww_fields(
    data: bytes, names: frozenset[str]
) -> tuple[int | None, bool, dict[str, Value] | None]:
    """Return ``(expires_at_ms, deleted, fields)`` of an LWW frame whose value is a map.

    Only the entries of the value named in ``names`` are decoded; the rest are skipped, so
    reading a few small fields of large values costs a fraction of a full decode. ``fields``
    is ``None`` when the value is not a map.

    Raises:
        InvalidUpdateError: The bytes are not an LWW frame.
    """
    try:
        unpacker, expires, deleted = _lww_head(data)
        try:
            size = unpacker.read_map_header()
        except msgpack.UnpackValueError:
            return expires, deleted, None
        fields: dict[str, Value] = {}
        for _ in range(size):
            name = unpacker.unpack()
            if name in names:
                fields[name] = unpacker.unpack()
            else:
                unpacker.skip()
        return expires, deleted, fields
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise InvalidUpdateError(f"stored record is not a valid LWW frame: {exc}") from exc


def decode_lww_packed(data: bytes) -> tuple[int | None, bool, bytes]:
    """Return ``(expires_at_ms, deleted, packed)`` of an LWW frame, its value left packed.

    ``packed`` is the value's bytes as :func:`pack` made them when it was written, so a
    digest of them equals a digest of ``pack(value)`` without decoding anything.

    Raises:
        InvalidUpdateError: The bytes are not an LWW frame.
    """
    try:
        unpacker, expires, deleted = _lww_head(data)
        return expires, deleted, data[unpacker.tell() :]
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise InvalidUpdateError(f"stored record is not a valid LWW frame: {exc}") from exc


def _lww_head(data: bytes) -> tuple[msgpack.Unpacker, int | None, bool]:
    """Read an LWW frame up to its value: the unpacker (positioned there), expiry, tombstone."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(data)
    unpacker.read_array_header()
    fmt, code = unpacker.unpack(), unpacker.unpack()
    if fmt != FORMAT or code != "l":
        raise ValueError(f"frame format {fmt}/{code}")
    unpacker.skip()  # version
    unpacker.skip()  # hlc
    expires, deleted = unpacker.unpack(), bool(unpacker.unpack())
    unpacker.skip()  # replica
    return unpacker, expires, deleted


def decode_frame(data: bytes) -> Frame:
    """Deserialize a stored frame (frames are written only by the store itself).

    Raises:
        InvalidUpdateError: The bytes are not a frame of a known format.
    """
    try:
        fmt, code, version, hlc, expires, deleted, *rest = unpack(data)
        if fmt != FORMAT:
            raise ValueError(f"frame format {fmt}")
        if code == "l":
            replica, value = rest
            envelope = Envelope(hlc, replica, value, expires, deleted)
            return Frame(MergeMode.LWW, version, hlc, expires, deleted, envelope)
        mode = _CODE_MODES[code]
        (wire,) = rest
        return Frame(mode, version, hlc, expires, bool(deleted), _state_from_wire(mode, wire))
    except (ValueError, TypeError, KeyError, msgpack.UnpackException) as exc:
        raise InvalidUpdateError(f"stored record is not a valid frame: {exc}") from exc


def encode_update(mode: MergeMode, state: Envelope | FlagState | bytes) -> bytes:
    """Serialize CRDT state for exchange (archive, replication)."""
    return pack([FORMAT, _MODE_CODES[mode], _state_to_wire(state)])


def decode_update(data: bytes) -> tuple[MergeMode, Envelope | FlagState | bytes]:
    """Deserialize exchanged CRDT state.

    Raises:
        InvalidUpdateError: The bytes are not an update of a known format.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InvalidUpdateError("an update must be bytes")
    try:
        fmt, code, wire = _unpack(bytes(data))
        if fmt != FORMAT or not isinstance(code, str):
            raise ValueError(f"update format {fmt}")
        mode = _CODE_MODES[code]
        return mode, _state_from_wire(mode, wire)
    except (ValueError, TypeError, KeyError, msgpack.UnpackException) as exc:
        raise InvalidUpdateError(f"not a valid record update: {exc}") from exc


def _state_to_wire(state: Envelope | FlagState | bytes) -> object:
    if isinstance(state, Envelope):
        return [state.hlc, state.replica, state.deleted, state.expires_at_ms, state.value]
    if isinstance(state, FlagState):
        return [sorted(state.adds), sorted(state.removes)]
    return bytes(state)


def _state_from_wire(mode: MergeMode, wire: object) -> Envelope | FlagState | bytes:
    if mode is MergeMode.DOC:
        if not isinstance(wire, bytes):
            raise ValueError("document state must be bytes")
        return wire
    if not isinstance(wire, list):
        raise ValueError("state must be an array")
    if mode is MergeMode.FLAG:
        adds, removes = wire
        return FlagState(frozenset(map(str, adds)), frozenset(map(str, removes)))
    hlc, replica, deleted, expires, value = wire
    if not isinstance(hlc, int) or not isinstance(replica, str):
        raise ValueError("envelope stamp must be (int, str)")
    if expires is not None and not isinstance(expires, int):
        raise ValueError("envelope expiry must be an int")
    return Envelope(hlc, replica, value, expires, bool(deleted))


_local = threading.local()


def unpack(data: bytes) -> Any:
    """Deserialize msgpack written by :func:`pack` (map keys of any packable type)."""
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


def pack(obj: object) -> bytes:
    """Serialize with msgpack (bin type on), reusing one packer per thread."""
    # A Packer per thread: packb() would build a new Packer on every call.
    packer = getattr(_local, "packer", None)
    if packer is None:
        packer = _local.packer = msgpack.Packer(use_bin_type=True)
    return packer.pack(obj)


def _unpack(data: bytes) -> list[object]:
    obj = unpack(data)
    if not isinstance(obj, list):
        raise ValueError("expected an array")
    return obj
