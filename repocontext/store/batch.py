"""Batch mode: many writes per durable commit, acknowledged per commit.

Bulk work (indexing, archive restore) queues writes on a :class:`Batch`. Every
``commit_every`` writes the queue runs in one transaction; only when that transaction has
committed are its writes acknowledged (``acknowledged`` grows and ``on_commit`` receives their
keys). Writes still queued when the process dies were never acknowledged, so nothing the
caller was told about is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Protocol

from repocontext.errors import InvalidInputError
from repocontext.store import _writes as w
from repocontext.store._ops import OpFactory
from repocontext.store.document import DocPatch
from repocontext.store.records import Value

__all__ = ["Batch", "BatchTarget"]


class BatchTarget(Protocol):
    """What a :class:`Batch` needs of its store: validated operations and a transaction."""

    @property
    def ops(self) -> OpFactory:
        """Builds the validated operations the batch queues."""
        ...

    def run_batch(self, ops: list[w.Op | w.PutGroup]) -> int:
        """Run queued operations in one durable transaction; how many changed a record."""
        ...


class Batch:
    """A queue of writes committed in groups (use as a context manager)."""

    def __init__(
        self,
        store: BatchTarget,
        *,
        commit_every: int,
        on_commit: Callable[[list[str]], None] | None,
    ) -> None:
        """Create a batch over ``store``.

        Raises:
            InvalidInputError: ``commit_every`` is below 1.
        """
        if commit_every < 1:
            raise InvalidInputError("commit_every must be at least 1")
        self._store = store
        self._commit_every = commit_every
        self._on_commit = on_commit
        self._ops: list[w.Op | w.PutGroup] = []
        self._last_group: w.PutGroup | None = None
        self._keys: list[str] = []
        self.acknowledged = 0
        self.changed = 0

    def __enter__(self) -> Batch:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.flush()
        else:
            self._ops.clear()
            self._keys.clear()

    def put(
        self,
        tree: str,
        key: str,
        value: Value,
        *,
        ttl_seconds: float | None = None,
        packed: bytes | None = None,
        key_checked: bool = False,
    ) -> None:
        """Queue an LWW write (validated now, committed with its group).

        For bulk writers that have done the work already: ``packed`` is
        :func:`~repocontext.store.records.pack` of ``value`` (the projections digest it), and
        ``key_checked`` says the key came from a :mod:`repocontext.store.keys` constructor,
        which validated it, so neither is done twice.
        """
        spec, row = self._store.ops.put_row(tree, key, value, ttl_seconds, packed, key_checked)
        last = self._last_group
        if last is not None and last.spec is spec and self._ops and self._ops[-1] is last:
            last.rows.append(row)
        else:
            self._last_group = w.PutGroup(spec, [row])
            self._ops.append(self._last_group)
        self._keys.append(key)
        if len(self._keys) >= self._commit_every:
            self.flush()

    def merge_fields(self, tree: str, key: str, patch: DocPatch) -> None:
        """Queue a document merge."""
        self._queue(key, self._store.ops.merge_fields(tree, key, patch))

    def set_flag(self, tree: str, key: str, present: bool) -> None:
        """Queue a flag write."""
        self._queue(key, self._store.ops.set_flag(tree, key, present))

    def delete(self, tree: str, key: str) -> None:
        """Queue a tombstone."""
        self._queue(key, self._store.ops.delete(tree, key))

    def apply_update(self, tree: str, key: str, update: bytes) -> None:
        """Queue a foreign CRDT update."""
        self._queue(key, self._store.ops.apply_update(tree, key, update))

    @property
    def pending(self) -> int:
        """Writes queued but not yet committed (not acknowledged)."""
        return len(self._keys)

    def flush(self) -> int:
        """Commit every queued write now; return how many were acknowledged by this call."""
        if not self._ops:
            return 0
        changed = self._store.run_batch(self._ops)
        keys = self._keys
        self._ops, self._keys = [], []
        self.acknowledged += len(keys)
        self.changed += changed
        if self._on_commit is not None:
            self._on_commit(keys)
        return len(keys)

    def _queue(self, key: str, op: w.Op) -> None:
        self._ops.append(op)
        self._keys.append(key)
        if len(self._keys) >= self._commit_every:
            self.flush()
