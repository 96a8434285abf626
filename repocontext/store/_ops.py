"""Validated write operations, checked before any transaction runs.

What :class:`~repocontext.store.store.Store` and its batches queue.
"""

from __future__ import annotations

import math
from typing import Final, Protocol

from repocontext.errors import InvalidInputError
from repocontext.store import _writes as w
from repocontext.store.clock import Clock
from repocontext.store.document import SEP, DocPatch
from repocontext.store.keys import validate_key
from repocontext.store.records import Value, pack
from repocontext.store.trees import TREES, TreeSpec, tree_spec

__all__ = ["MAX_EXPIRY_MS", "OpFactory", "StoreLimits", "check_patch"]

MAX_EXPIRY_MS: Final = 2**63 - 1
"""The latest expiry a record frame can hold (epoch ms, a signed 64-bit integer)."""


class StoreLimits(Protocol):
    """What an :class:`OpFactory` reads of its store: the value cap and the clock for TTLs."""

    @property
    def max_value_bytes(self) -> int:
        """The largest packed value a put accepts."""
        ...

    @property
    def clock(self) -> Clock:
        """The clock a TTL counts from."""
        ...


class OpFactory:
    """Builds validated write operations bound to one store's settings."""

    def __init__(self, store: StoreLimits) -> None:
        self._store = store

    def put_row(
        self,
        tree: str,
        key: str,
        value: Value,
        ttl_seconds: float | None = None,
        packed: bytes | None = None,
        key_checked: bool = False,
    ) -> tuple[TreeSpec, w.PutRow]:
        spec = TREES.get(tree) or tree_spec(tree)
        expiry = None if ttl_seconds is None else self._expiry(ttl_seconds)
        limit = self._store.max_value_bytes
        return spec, w.prepare_put(spec, key, value, expiry, limit, packed, key_checked)

    def merge_fields(self, tree: str, key: str, patch: DocPatch) -> w.Op:
        check_patch(patch)
        return w.op_merge_fields(tree_spec(tree), validate_key(key), patch)

    def set_flag(self, tree: str, key: str, present: bool) -> w.Op:
        return w.op_set_flag(tree_spec(tree), validate_key(key), present)

    def delete(self, tree: str, key: str) -> w.Op:
        return w.op_delete(tree_spec(tree), validate_key(key))

    def apply_update(self, tree: str, key: str, update: bytes) -> w.Op:
        return w.op_apply_update(tree_spec(tree), validate_key(key), update)

    def _expiry(self, ttl_seconds: float | None) -> int | None:
        if ttl_seconds is None:
            return None
        if not math.isfinite(ttl_seconds) or ttl_seconds <= 0:
            raise InvalidInputError(
                f"ttlSeconds must be a positive number, got {ttl_seconds!r}",
                hint="Omit the TTL for a durable record.",
            )
        expiry = int((self._store.clock.now() + ttl_seconds) * 1000)
        if expiry > MAX_EXPIRY_MS:
            raise InvalidInputError(
                f"ttlSeconds {ttl_seconds:g} ends too far in the future for a record",
                hint="Omit the TTL for a durable record.",
            )
        return expiry


def check_patch(patch: DocPatch) -> None:
    """Refuse a document patch with bad field names, set elements or values."""
    names = [*patch.set_fields, *patch.add, *patch.remove, *patch.raise_max]
    for name in names:
        if not isinstance(name, str) or not name or SEP in name or name.startswith("_"):
            raise InvalidInputError(
                f"field, set or register name {name!r} is invalid",
                hint="Names are non-empty, do not start with '_' and hold no \\x1f.",
            )
    for elements in (*patch.add.values(), *patch.remove.values()):
        if isinstance(elements, str) or not all(isinstance(e, str) and e for e in elements):
            raise InvalidInputError("set elements must be a list of non-empty strings")
    if any(not isinstance(v, int) or isinstance(v, bool) for v in patch.raise_max.values()):
        raise InvalidInputError("register values must be integers")
    if patch.expires_at_ms is not None and not 0 <= patch.expires_at_ms <= MAX_EXPIRY_MS:
        raise InvalidInputError(f"expiry {patch.expires_at_ms} ms is out of range")
    for name, value in patch.set_fields.items():
        try:
            pack(value)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InvalidInputError(
                f"field {name!r} cannot be stored: {exc}",
                hint="Values are None, bool, int, float, str, bytes, lists and str-keyed dicts.",
            ) from exc
