r"""Document records: pycrdt documents with typed, conflict-free fields.

A document has three root maps, all flat (nested maps created concurrently would shadow each
other in Yjs, losing writes):

* ``f`` — LWW scalar fields. Key ``{field}\\x1f{replica}`` holds msgpack ``[hlc, value]``; the
  field's value is the entry with the largest ``(hlc, replica)``, so concurrent writers resolve
  by time, not by client id. ``None`` marks a cleared field.
* ``s`` — add-wins sets. Key ``{set}\\x1f{element}``; a remove deletes only the entries it has
  observed, so a concurrent add survives it.
* ``m`` — max-registers. Key ``{name}\\x1f{replica}`` holds a msgpack integer; the register's
  value is the maximum over replicas, so a lower value never wins. The store keeps three of its
  own: ``_w`` (latest write HLC), ``_d`` (latest delete HLC) and ``_exp`` (expiry, epoch ms,
  which therefore only ever moves later — until a patch with ``drop_expiry`` deletes the
  entries it has observed, as a record written anew after it expired or was deleted does).
  A document is deleted while ``_d >= _w``.

Bytes in ``f`` and ``m`` keep integers exact: pycrdt would return them as floats.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

import msgpack
from pycrdt import Doc, Map

from repocontext.errors import InvalidUpdateError
from repocontext.store.records import Value, unpack

__all__ = [
    "DocMeta",
    "DocPatch",
    "DocState",
    "apply_patch",
    "doc_merge",
    "doc_merge_meta",
    "read_doc",
    "validate_doc_update",
]

SEP: Final = "\x1f"
WRITE_REG: Final = "_w"
DELETE_REG: Final = "_d"
EXPIRY_REG: Final = "_exp"
RESERVED: Final = frozenset({WRITE_REG, DELETE_REG, EXPIRY_REG})


@dataclass(frozen=True, slots=True)
class DocPatch:
    """A change to a document record.

    Attributes:
        set_fields: Field values to write; ``None`` clears a field.
        add: Elements to add, by set name.
        remove: Elements to remove, by set name (only observed adds are removed).
        raise_max: Max-registers to raise, by name; a lower value is ignored.
        expires_at_ms: New expiry; ignored unless later than the current one.
        delete: Make the record a tombstone (fields and sets observed are cleared;
            max-registers, the fencing token among them, are kept).
        drop_expiry: Drop the expiry this replica has observed before ``expires_at_ms``
            applies, so a record written anew after it expired or was deleted is durable (or
            gets the new expiry). An expiry a concurrent replica set without observing the
            drop survives the merge, as a concurrent add survives a remove.
    """

    set_fields: Mapping[str, Value] = field(default_factory=dict)
    add: Mapping[str, Collection[str]] = field(default_factory=dict)
    remove: Mapping[str, Collection[str]] = field(default_factory=dict)
    raise_max: Mapping[str, int] = field(default_factory=dict)
    expires_at_ms: int | None = None
    delete: bool = False
    drop_expiry: bool = False


@dataclass(frozen=True, slots=True)
class DocState:
    """The merged view of a document record.

    Attributes:
        fields: Live field values.
        sets: Elements by set name (empty sets omitted).
        maxima: Max-register values by name (store registers excluded).
        expires_at_ms: Expiry in epoch milliseconds, or ``None``.
        deleted: True when the latest delete is not older than the latest write.
        hlc: Latest write or delete HLC.
    """

    fields: Mapping[str, Value]
    sets: Mapping[str, frozenset[str]]
    maxima: Mapping[str, int]
    expires_at_ms: int | None
    deleted: bool
    hlc: int


class DocMeta(NamedTuple):
    """What the store keeps outside a document: its clock, expiry and liveness."""

    hlc: int
    expires_at_ms: int | None
    deleted: bool


def apply_patch(
    state: bytes | None, patch: DocPatch, *, client_id: int, hlc: int
) -> tuple[bytes, DocMeta]:
    """Apply ``patch`` as replica ``client_id`` at ``hlc``; return the new state and its meta.

    Raises:
        InvalidUpdateError: ``state`` is not a document update.
    """
    replica = _replica(client_id)
    doc = _load(state, client_id)
    fields, sets, maxima = _roots(doc)
    with doc.transaction():
        if patch.drop_expiry:
            _drop_register(maxima, EXPIRY_REG)
        if patch.delete:
            _raise_register(maxima, DELETE_REG, replica, hlc)
            for key in list(fields.keys()):
                del fields[key]
            for key in list(sets.keys()):
                del sets[key]
        else:
            _raise_register(maxima, WRITE_REG, replica, hlc)
        for name, value in patch.set_fields.items():
            _set_field(fields, name, replica, hlc, value)
        for name, elements in patch.add.items():
            for element in elements:
                sets[f"{name}{SEP}{element}"] = True
        for name, elements in patch.remove.items():
            for element in elements:
                sets.pop(f"{name}{SEP}{element}", None)
        for name, value in patch.raise_max.items():
            _raise_register(maxima, name, replica, value)
        if patch.expires_at_ms is not None:
            _raise_register(maxima, EXPIRY_REG, replica, patch.expires_at_ms)
    return bytes(doc.get_update()), _meta(maxima)


def doc_merge(a: bytes, b: bytes) -> bytes:
    """Merge two document states into one.

    Raises:
        InvalidUpdateError: Either input is not a document update.
    """
    return doc_merge_meta(a, b)[0]


def doc_merge_meta(a: bytes, b: bytes) -> tuple[bytes, DocMeta]:
    """Merge two document states; return the merged state and its meta.

    Raises:
        InvalidUpdateError: Either input is not a document update.
    """
    doc = _load(a, 0)
    if b:
        _apply(doc, b)
    return bytes(doc.get_update()), _meta(_roots(doc)[2])


def _meta(maxima: Map[Any]) -> DocMeta:
    registers = _registers(maxima)
    write_hlc = registers.get(WRITE_REG, 0)
    delete_hlc = registers.get(DELETE_REG, 0)
    return DocMeta(
        max(write_hlc, delete_hlc),
        registers.get(EXPIRY_REG),
        delete_hlc > 0 and delete_hlc >= write_hlc,
    )


def read_doc(state: bytes) -> DocState:
    """Decode a document state into its merged view.

    Raises:
        InvalidUpdateError: ``state`` is not a document update.
    """
    doc = _load(state, 0)
    fields_map, sets_map, maxima_map = _roots(doc)
    best: dict[str, tuple[int, str, Value]] = {}
    for key, raw in fields_map.items():
        name, _, replica = key.rpartition(SEP)
        stamp_hlc, value = unpack(bytes(raw))
        current = best.get(name)
        if current is None or (stamp_hlc, replica) > current[:2]:
            best[name] = (stamp_hlc, replica, value)
    sets: dict[str, set[str]] = {}
    for key in sets_map.keys():  # noqa: SIM118 - pycrdt types Map iteration loosely
        name, _, element = key.partition(SEP)
        sets.setdefault(name, set()).add(element)
    registers = _registers(maxima_map)
    write_hlc = registers.pop(WRITE_REG, 0)
    delete_hlc = registers.pop(DELETE_REG, 0)
    expiry = registers.pop(EXPIRY_REG, None)
    return DocState(
        fields={name: entry[2] for name, entry in best.items() if entry[2] is not None},
        sets={name: frozenset(elements) for name, elements in sets.items()},
        maxima=registers,
        expires_at_ms=expiry,
        deleted=delete_hlc > 0 and delete_hlc >= write_hlc,
        hlc=max(write_hlc, delete_hlc),
    )


def validate_doc_update(state: bytes) -> None:
    """Check that ``state`` decodes as a document record.

    Raises:
        InvalidUpdateError: It does not.
    """
    try:
        read_doc(state)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise InvalidUpdateError(f"document state has malformed entries: {exc}") from exc


def _replica(client_id: int) -> str:
    return f"{client_id:x}"


def _load(state: bytes | None, client_id: int) -> Doc[Any]:
    doc: Doc[Any] = Doc(client_id=client_id) if client_id else Doc()
    if state:
        _apply(doc, state)
    return doc


def _apply(doc: Doc[Any], update: bytes) -> None:
    try:
        doc.apply_update(bytes(update))
    except Exception as exc:
        raise InvalidUpdateError(f"not a pycrdt document update: {exc}") from exc


def _roots(doc: Doc[Any]) -> tuple[Map[Any], Map[Any], Map[Any]]:
    return doc.get("f", type=Map), doc.get("s", type=Map), doc.get("m", type=Map)


def _set_field(fields: Map[Any], name: str, replica: str, hlc: int, value: Value) -> None:
    prefix = f"{name}{SEP}"
    keys: list[str] = list(fields.keys())  # a copy: entries are deleted while walking
    for key in [k for k in keys if k.startswith(prefix)]:
        stamp_hlc = unpack(bytes(fields[key]))[0]
        if stamp_hlc < hlc and key.rpartition(SEP)[2] != replica:
            del fields[key]
    fields[f"{prefix}{replica}"] = msgpack.packb([hlc, value], use_bin_type=True)


def _raise_register(maxima: Map[Any], name: str, replica: str, value: int) -> None:
    key = f"{name}{SEP}{replica}"
    current = maxima.get(key)
    if current is None or msgpack.unpackb(bytes(current)) < value:
        maxima[key] = msgpack.packb(int(value))


def _drop_register(maxima: Map[Any], name: str) -> None:
    """Delete every replica's entry of a register that this document has observed."""
    keys: list[str] = list(maxima.keys())
    for key in [k for k in keys if k.startswith(f"{name}{SEP}")]:
        del maxima[key]


def _registers(maxima: Map[Any]) -> dict[str, int]:
    registers: dict[str, int] = {}
    for key, raw in maxima.items():
        name = key.rpartition(SEP)[0]
        value = int(msgpack.unpackb(bytes(raw)))
        if value > registers.get(name, value - 1):
            registers[name] = value
    return registers
