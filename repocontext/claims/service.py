"""Leased, fenced claims over memory entries, and a backlog many agents can drain.

A claim gives one owner the right to write an entry for a lease. Claiming issues a fencing
token one above the highest ever issued for that entry (the ``fence`` max-register, so tokens
only grow); every later write of the entry is checked against it (:mod:`.fence`). Each
operation is one compare-and-set inside a store write transaction, so processes sharing a
store, and threads of one, never both win.

* ``claim`` fails at once when the entry is held (``contended``), or with ``max_wait_seconds``
  waits in FIFO order: waiters enqueue in the entry's ``waiters`` set (with the time they give
  up), and a freed claim goes to the oldest waiter still waiting (``timeout`` otherwise).
* ``renew`` extends the holder's lease; after the lease lapsed it still works unless another
  holder took the entry, which answers ``superseded`` (the worker must stop).
* ``release`` answers ``missing``, ``unclaimed`` (no claim, or already released) or
  ``stale`` (a token that is not the newest).
* ``status`` is advisory: it may be out of date by the time the caller acts on it.
* ``claim_next`` claims the oldest live, unclaimed, not-done entry of a topic: a backlog.
  A worker marks an item done by an update carrying its token (``fields {status: done}``).
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any, Final

from repocontext.errors import InvalidInputError
from repocontext.memory.fence import (
    FENCE,
    LEASE,
    OWNER,
    RELEASED,
    TOKEN,
    claim_state,
    valid_token,
)
from repocontext.memory.service import memory_repo_id
from repocontext.store import MEMORY, Record, Store, Value
from repocontext.store.document import DocPatch, DocState
from repocontext.store.keys import family_prefix

__all__ = ["ClaimService"]

WAITERS: Final = "waiters"
RESCAN_EVERY: Final = 100
"""claim_next scans a backlog from its start once in this many calls (else from its cursor)."""
POLL_SECONDS: Final = 0.02
MAX_WAIT_SECONDS: Final = 300.0
MAX_OWNER_CHARS: Final = 200


class ClaimService:
    """Claims over the memory entries of one store."""

    def __init__(
        self,
        store: Store,
        *,
        default_lease_seconds: float = 60.0,
        max_lease_seconds: float = 3600.0,
    ) -> None:
        """Serve claims; leases default to and are capped at the given lengths."""
        self.store = store
        self.default_lease = default_lease_seconds
        self.max_lease = max_lease_seconds
        # Per backlog: the first entry not known to be done, and calls since the last full
        # scan. Done items form a growing prefix of a drained topic; skipping it keeps
        # claim_next from decoding every finished item on every call.
        self._cursors: dict[str, tuple[str, int]] = {}
        self._cursor_lock = threading.Lock()

    # -- claim -------------------------------------------------------------------------

    def claim(
        self,
        key: str,
        owner: str,
        *,
        lease_seconds: float | None = None,
        max_wait_seconds: float | None = None,
    ) -> dict[str, Value]:
        """Claim an entry for ``owner``; wait up to ``max_wait_seconds`` in FIFO order.

        Raises:
            WrongFamilyError: The key is not a memory key.
            InvalidInputError: The owner, lease or wait is invalid.
        """
        memory_repo_id(key)
        owner = _owner(owner)
        lease, _ = self._lease(lease_seconds)
        wait = 0.0 if max_wait_seconds is None else _seconds(max_wait_seconds, "maxWaitSeconds")
        wait = min(wait, MAX_WAIT_SECONDS)
        result = self._try(key, owner, lease, ticket=None)
        if result["granted"] or result.get("reason") != "contended" or wait <= 0:
            return result
        deadline = time.monotonic() + wait
        ticket = self._enqueue(key, owner, wait)
        try:
            while time.monotonic() < deadline:
                time.sleep(POLL_SECONDS)
                result = self._try(key, owner, lease, ticket=ticket)
                if result["granted"] or result.get("reason") == "missing":
                    return result
            return {**result, "reason": "timeout"}
        finally:
            self._dequeue(key, ticket)

    def claim_next(
        self, repo_id: str, topic: str, owner: str, *, lease_seconds: float | None = None
    ) -> dict[str, Value]:
        """Claim the oldest live entry of a topic that is neither claimed nor done.

        Raises:
            InvalidInputError: The owner or lease is invalid.
        """
        owner = _owner(owner)
        lease, _ = self._lease(lease_seconds)
        now = self.store.clock.now()
        prefix = family_prefix(repo_id, "mem", topic)
        start, done_prefix = self._cursor(prefix), True
        for record in self._records_from(prefix, start):
            doc = record.doc
            if doc is None or doc.fields.get("status") == "done":
                if done_prefix:
                    self._advance(prefix, record.key + "\x00")
                continue
            done_prefix = False
            if claim_state(doc).live(now) or _live_waiters(doc, now):
                continue
            result = self._try(record.key, owner, lease, ticket=None, open_only=True)
            if result["granted"]:
                return result
        return {"key": None, "granted": False, "reason": "empty"}

    # -- holder operations -------------------------------------------------------------

    def renew(
        self, key: str, fencing_token: int, *, lease_seconds: float | None = None
    ) -> dict[str, Value]:
        """Extend the lease of the claim ``fencing_token`` holds.

        Raises:
            WrongFamilyError: The key is not a memory key.
            InvalidInputError: The token or lease is invalid.
        """
        memory_repo_id(key)
        token = valid_token(fencing_token)
        lease, shortened = self._lease(lease_seconds)
        now = self.store.clock.now()
        outcome: dict[str, Value] = {}

        def decide(live: DocState | None, stored: DocState | None) -> DocPatch | None:
            if live is None:
                outcome.update(granted=False, reason="missing")
                return None
            state = claim_state(live)
            if state.token != token or state.highest != token or state.released:
                outcome.update(granted=False, reason="superseded")
                return None
            until = now + lease
            outcome.update(granted=True, leaseExpiresAt=until, leaseShortened=shortened)
            return DocPatch(set_fields={LEASE: until})

        self.store.update_doc(MEMORY, key, decide)
        return {"key": key, "fencingToken": token, **outcome}

    def release(self, key: str, fencing_token: int) -> dict[str, Value]:
        """Release the claim ``fencing_token`` holds.

        Raises:
            WrongFamilyError: The key is not a memory key.
            InvalidInputError: The token is invalid.
        """
        memory_repo_id(key)
        token = valid_token(fencing_token)
        outcome: dict[str, Value] = {}

        def decide(live: DocState | None, stored: DocState | None) -> DocPatch | None:
            if live is None:
                outcome.update(released=False, reason="missing")
                return None
            state = claim_state(live)
            if state.highest == 0 or state.released:
                outcome.update(released=False, reason="unclaimed")
                return None
            if token != state.highest:
                outcome.update(released=False, reason="stale")
                return None
            outcome.update(released=True)
            return DocPatch(set_fields={RELEASED: True, OWNER: None})

        self.store.update_doc(MEMORY, key, decide)
        return {"key": key, "fencingToken": token, **outcome}

    def status(self, key: str) -> dict[str, Value]:
        """Report an entry's claim as last seen (advisory: ``authoritative`` is false).

        Raises:
            WrongFamilyError: The key is not a memory key.
        """
        memory_repo_id(key)
        record = self.store.get(MEMORY, key)
        view: dict[str, Value] = {"key": key, "exists": record is not None, "authoritative": False}
        state = claim_state(record.doc if record is not None else None)
        claimed = state.live(self.store.clock.now())
        view.update(claimed=claimed, isHeld=claimed)
        if claimed:
            view.update(
                fencingToken=state.token, owner=state.owner, leaseExpiresAt=state.lease_until
            )
        elif state.released:
            view["releasedFencingToken"] = state.token
        return view

    # -- internals ---------------------------------------------------------------------

    def _cursor(self, prefix: str) -> str:
        with self._cursor_lock:
            start, calls = self._cursors.get(prefix, (prefix, 0))
            if calls >= RESCAN_EVERY:  # now and then from the start: an item may be reopened
                start, calls = prefix, 0
            self._cursors[prefix] = (start, calls + 1)
            return start

    def _advance(self, prefix: str, start: str) -> None:
        with self._cursor_lock:
            current, calls = self._cursors.get(prefix, (prefix, 0))
            self._cursors[prefix] = (max(current, start), calls)

    def _records_from(self, prefix: str, start: str) -> Iterator[Record]:
        while True:
            page = self.store.scan(MEMORY, prefix, limit=200, start=start)
            yield from page.records
            if page.next_token is None or not page.records:
                return
            start = page.records[-1].key + "\x00"

    def _try(
        self, key: str, owner: str, lease: float, *, ticket: str | None, open_only: bool = False
    ) -> dict[str, Any]:
        now = self.store.clock.now()
        outcome: dict[str, Any] = {"key": key}

        def decide(live: DocState | None, stored: DocState | None) -> DocPatch | None:
            if live is None:
                outcome.update(granted=False, reason="missing")
                return None
            if open_only and live.fields.get("status") == "done":
                # Checked again here: the item may have been finished since it was listed.
                outcome.update(granted=False, reason="done")
                return None
            state = claim_state(live)
            waiting = _live_waiters(live, now)
            first = waiting[0] if waiting else None
            if state.live(now) or (first is not None and first != ticket):
                outcome.update(granted=False, reason="contended")
                return None
            token = state.highest + 1
            until = now + lease
            outcome.update(granted=True, fencingToken=token, owner=owner, leaseExpiresAt=until)
            fields: dict[str, Value] = {TOKEN: token, OWNER: owner, LEASE: until, RELEASED: False}
            remove = {WAITERS: [ticket]} if ticket is not None else {}
            return DocPatch(set_fields=fields, raise_max={FENCE: token}, remove=remove)

        self.store.update_doc(MEMORY, key, decide)
        return outcome

    def _enqueue(self, key: str, owner: str, wait: float) -> str:
        now = self.store.clock.now()
        # Sortable by arrival (epoch microseconds), unique (uuid), and it says when it gives up.
        ticket = f"{int(now * 1e6):020d}|{int((now + wait) * 1000)}|{uuid.uuid4().hex}|{owner}"
        self.store.update_doc(
            MEMORY, key, lambda live, _: DocPatch(add={WAITERS: [ticket]}) if live else None
        )
        return ticket

    def _dequeue(self, key: str, ticket: str) -> None:
        self.store.update_doc(
            MEMORY, key, lambda live, _: DocPatch(remove={WAITERS: [ticket]}) if live else None
        )

    def _lease(self, seconds: float | None) -> tuple[float, bool]:
        lease = self.default_lease if seconds is None else _seconds(seconds, "leaseSeconds")
        return min(lease, self.max_lease), lease > self.max_lease


def _live_waiters(doc: DocState, now: float) -> list[str]:
    """The waiters of an entry that have not given up, oldest first."""
    live = []
    for ticket in doc.sets.get(WAITERS, ()):
        parts = ticket.split("|", 3)
        if len(parts) == 4 and parts[1].isdigit() and int(parts[1]) > now * 1000:
            live.append(ticket)
    return sorted(live)


def _owner(owner: str) -> str:
    if not isinstance(owner, str) or not owner.strip() or len(owner) > MAX_OWNER_CHARS:
        raise InvalidInputError(
            "owner must be non-empty text of at most 200 characters",
            hint="Name the agent or worker that claims, e.g. worker-3.",
        )
    return owner.strip()


def _seconds(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInputError(f"{name} must be a number of seconds, got {value!r}")
    if value <= 0 and name == "leaseSeconds":
        raise InvalidInputError(f"{name} must be positive, got {value!r}")
    return max(float(value), 0.0)
