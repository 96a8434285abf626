"""Leased, fenced claims over memory entries, and a backlog many agents can drain.

A claim gives one owner the right to write an entry for a lease. Claiming issues a fencing
token one above the highest ever issued for that entry (the ``fence`` max-register, so tokens
only grow); every later write of the entry is checked against it (:mod:`.fence`). Each
operation is one compare-and-set inside a store write transaction, so processes sharing a
store, and threads of one, never both win.

* ``claim`` fails at once when the entry is held (``contended``), or with ``max_wait_seconds``
  waits in FIFO order: waiters enqueue in the entry's ``waiters`` set (with the time they give
  up), and a freed claim goes to the oldest waiter still waiting (``timeout`` otherwise).
  ``claim`` waits in the calling thread; ``claim_async`` waits on the event loop and holds a
  worker thread only for each short attempt, so waiters never starve a server's other calls.
* ``renew`` extends the holder's lease; after the lease lapsed it still works unless another
  holder took the entry, which answers ``superseded`` (the worker must stop).
* ``release`` answers ``missing``, ``unclaimed`` (no claim, or already released) or
  ``stale`` (a token that is not the newest).
* ``renew`` and ``release`` refuse a token above the highest issued (``claim.unissued_token``),
  as a write with it would be refused.
* ``status`` is advisory: it may be out of date by the time the caller acts on it.
* ``claim_next`` claims the first live, unclaimed, not-done entry of a topic in key order (for
  generated ids, creation order): a backlog. A worker marks an item done by an update
  carrying its token (``fields {status: done}``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
import uuid
from typing import Final

import anyio
import anyio.lowlevel
import anyio.to_thread

from repocontext.claims._backlog import Backlog
from repocontext.claims.model import (
    ClaimGrant,
    ClaimReason,
    ClaimResult,
    ClaimStatus,
    ReleaseReason,
    ReleaseResult,
    RenewReason,
    RenewResult,
)
from repocontext.errors import InvalidInputError, UnissuedTokenError
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
from repocontext.store import MEMORY, Store, Value
from repocontext.store.document import DocPatch, DocState

__all__ = ["ClaimService"]

WAITERS: Final = "waiters"
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
        self._backlog = Backlog(store)

    # -- claim -------------------------------------------------------------------------

    def claim(
        self,
        key: str,
        owner: str,
        *,
        lease_seconds: float | None = None,
        max_wait_seconds: float | None = None,
    ) -> ClaimResult:
        """Claim an entry for ``owner``; wait up to ``max_wait_seconds`` in FIFO order.

        Waits in the calling thread; code on an event loop uses :meth:`claim_async`.

        Raises:
            WrongFamilyError: The key is not a memory key.
            InvalidInputError: The owner, lease or wait is invalid.
        """
        arrived = time.monotonic()
        owner, lease, wait = self._claim_args(key, owner, lease_seconds, max_wait_seconds)
        deadline = arrived + wait
        result = self._try(key, owner, lease, ticket=None)
        if not _must_wait(result, wait):
            return result
        ticket = _ticket(self.store.clock.now(), owner, wait)
        try:
            self._enqueue(key, ticket)
            while time.monotonic() < deadline:
                time.sleep(POLL_SECONDS)
                result = self._try(key, owner, lease, ticket=ticket)
                if _settled(result):
                    return result
            return dataclasses.replace(result, reason="timeout")
        finally:
            self._dequeue(key, ticket)

    async def claim_async(
        self,
        key: str,
        owner: str,
        *,
        lease_seconds: float | None = None,
        max_wait_seconds: float | None = None,
    ) -> ClaimResult:
        """:meth:`claim` for an event loop: waits without holding a thread.

        Each attempt runs in a worker thread (a store write may wait for the write lock);
        between attempts the wait sleeps on the loop, so any number of waiters leave the
        server's threads to its other calls. The wait counts from this call. Cancelling the
        call ends the wait: the waiter leaves the queue, and a claim granted by an attempt the
        cancellation raced with is released at once, so nobody holds it for a caller that
        has gone.

        Raises:
            WrongFamilyError: The key is not a memory key.
            InvalidInputError: The owner, lease or wait is invalid.
        """
        arrived = time.monotonic()
        owner, lease, wait = self._claim_args(key, owner, lease_seconds, max_wait_seconds)
        deadline = arrived + wait
        result = await self._attempt(key, owner, lease, None)
        if not _must_wait(result, wait):
            return result
        ticket = _ticket(self.store.clock.now(), owner, wait)
        try:
            await anyio.to_thread.run_sync(self._enqueue, key, ticket)
            while time.monotonic() < deadline:
                await anyio.sleep(POLL_SECONDS)
                result = await self._attempt(key, owner, lease, ticket)
                if _settled(result):
                    return result
            return dataclasses.replace(result, reason="timeout")
        finally:
            with anyio.CancelScope(shield=True):  # leave the queue even when cancelled
                await anyio.to_thread.run_sync(self._dequeue, key, ticket)

    def claim_next(
        self, repo_id: str, topic: str, owner: str, *, lease_seconds: float | None = None
    ) -> ClaimResult:
        """Claim the first live entry of a topic, in key order, that is neither claimed nor done.

        Key order is creation order for generated ids (they sort by creation time); an entry
        remembered with an explicit id sorts by that id.

        Raises:
            NotFoundError: The repository is not registered.
            InvalidInputError: The topic, owner or lease is invalid.
        """
        prefix = self._backlog.prefix(repo_id, topic)
        owner = _owner(owner)
        lease, _ = self._lease(lease_seconds)
        now = self.store.clock.now()
        for key, doc in self._backlog.open_entries(prefix):
            if claim_state(doc).live(now) or _live_waiters(doc, now):
                continue
            result = self._try(key, owner, lease, ticket=None, open_only=True)
            if result.granted:
                return result
        return ClaimResult(None, reason="empty")

    # -- holder operations -------------------------------------------------------------

    def renew(
        self, key: str, fencing_token: int, *, lease_seconds: float | None = None
    ) -> RenewResult:
        """Extend the lease of the claim ``fencing_token`` holds.

        Answers ``missing`` (no live entry) or ``superseded`` (the token no longer holds the
        claim: a newer one was issued, or the claim was released).

        Raises:
            WrongFamilyError: The key is not a memory key.
            InvalidInputError: The token or lease is invalid.
            UnissuedTokenError: The token is above the highest issued for the entry.
        """
        memory_repo_id(key)
        token = valid_token(fencing_token)
        lease, shortened = self._lease(lease_seconds)
        now = self.store.clock.now()
        refused: list[RenewReason] = []

        def decide(live: DocState | None, stored: DocState | None) -> DocPatch | None:
            refused.clear()  # only the last run of decide counts
            if live is None:
                refused.append("missing")
                return None
            state = claim_state(live)
            _check_issued(token, state.highest)
            if state.token != token or state.highest != token or state.released:
                refused.append("superseded")
                return None
            return DocPatch(set_fields={LEASE: now + lease})

        self.store.update_doc(MEMORY, key, decide)
        if refused:
            return RenewResult(key, token, granted=False, reason=refused[-1])
        return RenewResult(
            key, token, granted=True, lease_expires_at=now + lease, lease_shortened=shortened
        )

    def release(self, key: str, fencing_token: int) -> ReleaseResult:
        """Release the claim ``fencing_token`` holds.

        Answers ``missing``, ``unclaimed`` (never claimed, or already released) or ``stale``
        (a newer token was issued).

        Raises:
            WrongFamilyError: The key is not a memory key.
            InvalidInputError: The token is invalid.
            UnissuedTokenError: The entry was claimed, but never with a token this high.
        """
        memory_repo_id(key)
        token = valid_token(fencing_token)
        refused: list[ReleaseReason] = []

        def decide(live: DocState | None, stored: DocState | None) -> DocPatch | None:
            refused.clear()  # only the last run of decide counts
            if live is None:
                refused.append("missing")
                return None
            state = claim_state(live)
            if state.highest > 0:
                _check_issued(token, state.highest)
            if state.highest == 0 or state.released:
                refused.append("unclaimed")
                return None
            if token != state.highest:
                refused.append("stale")
                return None
            return DocPatch(set_fields={RELEASED: True, OWNER: None})

        self.store.update_doc(MEMORY, key, decide)
        if refused:
            return ReleaseResult(key, token, released=False, reason=refused[-1])
        return ReleaseResult(key, token, released=True)

    def status(self, key: str) -> ClaimStatus:
        """Report an entry's claim as last seen (advisory: ``authoritative`` is false).

        Raises:
            WrongFamilyError: The key is not a memory key.
        """
        memory_repo_id(key)
        record = self.store.get(MEMORY, key)
        exists = record is not None
        state = claim_state(record.doc if record is not None else None)
        if state.live(self.store.clock.now()):
            return ClaimStatus(key, exists, True, state.token, state.owner, state.lease_until)
        released = state.token if state.released else None
        return ClaimStatus(key, exists, False, released_fencing_token=released)

    # -- internals ---------------------------------------------------------------------

    def _try(
        self, key: str, owner: str, lease: float, *, ticket: str | None, open_only: bool = False
    ) -> ClaimResult:
        now = self.store.clock.now()
        outcome: list[ClaimResult] = []  # what the last run of ``decide`` concluded

        def refuse(reason: ClaimReason) -> DocPatch | None:
            outcome.append(ClaimResult(key, reason=reason))
            return None  # nothing to write

        def decide(live: DocState | None, stored: DocState | None) -> DocPatch | None:
            if live is None:
                return refuse("missing")
            if open_only and live.fields.get("status") == "done":
                # Checked again here: the item may have been finished since it was listed.
                return refuse("done")
            state = claim_state(live)
            waiting = _live_waiters(live, now)
            first = waiting[0] if waiting else None
            if state.live(now) or (first is not None and first != ticket):
                return refuse("contended")
            grant = ClaimGrant(state.highest + 1, owner, now + lease)
            outcome.append(ClaimResult(key, grant))
            fields: dict[str, Value] = {
                TOKEN: grant.fencing_token,
                OWNER: owner,
                LEASE: grant.lease_expires_at,
                RELEASED: False,
            }
            remove = {WAITERS: [ticket]} if ticket is not None else {}
            return DocPatch(
                set_fields=fields, raise_max={FENCE: grant.fencing_token}, remove=remove
            )

        self.store.update_doc(MEMORY, key, decide)
        return outcome[-1]

    async def _attempt(self, key: str, owner: str, lease: float, ticket: str | None) -> ClaimResult:
        try_once = functools.partial(self._try, key, owner, lease, ticket=ticket)
        result = await anyio.to_thread.run_sync(try_once)
        if result.grant is not None:
            try:
                # A cancellation that came while the attempt ran is delivered here.
                await anyio.lowlevel.checkpoint_if_cancelled()
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(self.release, key, result.grant.fencing_token)
                raise
        return result

    def _claim_args(
        self, key: str, owner: str, lease_seconds: float | None, max_wait_seconds: float | None
    ) -> tuple[str, float, float]:
        memory_repo_id(key)
        owner = _owner(owner)
        lease, _ = self._lease(lease_seconds)
        wait = 0.0 if max_wait_seconds is None else _seconds(max_wait_seconds, "maxWaitSeconds")
        return owner, lease, min(wait, MAX_WAIT_SECONDS)

    def _enqueue(self, key: str, ticket: str) -> None:
        self.store.update_doc(
            MEMORY, key, lambda live, _: DocPatch(add={WAITERS: [ticket]}) if live else None
        )

    def _dequeue(self, key: str, ticket: str) -> None:
        self.store.update_doc(
            MEMORY, key, lambda live, _: DocPatch(remove={WAITERS: [ticket]}) if live else None
        )

    def _lease(self, seconds: float | None) -> tuple[float, bool]:
        lease = self.default_lease if seconds is None else _seconds(seconds, "leaseSeconds")
        return min(lease, self.max_lease), lease > self.max_lease


def _ticket(now: float, owner: str, wait: float) -> str:
    """A waiter's ticket: sorts by arrival, unique, and says when its waiter gives up."""
    return f"{int(now * 1e6):020d}|{int((now + wait) * 1000)}|{uuid.uuid4().hex}|{owner}"


def _must_wait(first: ClaimResult, wait: float) -> bool:
    return first.reason == "contended" and wait > 0


def _settled(result: ClaimResult) -> bool:
    return result.granted or result.reason == "missing"


def _check_issued(token: int, highest: int) -> None:
    if token > highest:
        raise UnissuedTokenError(f"fencing token {token} was never issued for this entry")


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
