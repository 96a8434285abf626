"""Claim state kept inside a memory document, and the fence check every memory write goes through.

A claimed entry carries, besides its own fields:

* the max-register ``fence``: the highest fencing token ever issued for it. A register merge
  keeps the maximum, so tokens never go backwards — not across restarts, lease expiry, replica
  merges or deletion (the store keeps a tombstone that carries a fence);
* LWW fields ``claimToken``, ``claimOwner``, ``claimLeaseUntil`` (epoch seconds) and
  ``claimReleased``: the current (or last) claim.

:func:`check_write` is the fence on write of ``repocontext_remember``, ``_update`` and
``_forget``, in the fixed order of TOOLS.md. It runs inside the write transaction, so a
stale holder's write can never land between the check and the write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from repocontext.errors import (
    ClaimRequiredError,
    InvalidInputError,
    ReleasedTokenError,
    StaleTokenError,
    UnissuedTokenError,
)
from repocontext.store.document import DocState

__all__ = [
    "CLAIM_FIELDS",
    "FENCE",
    "ClaimState",
    "check_write",
    "claim_state",
    "valid_token",
]

FENCE: Final = "fence"
TOKEN: Final = "claimToken"
OWNER: Final = "claimOwner"
LEASE: Final = "claimLeaseUntil"
RELEASED: Final = "claimReleased"
CLAIM_FIELDS: Final = frozenset({TOKEN, OWNER, LEASE, RELEASED})


@dataclass(frozen=True, slots=True)
class ClaimState:
    """The claim of one entry as its document records it."""

    highest: int  # the fence register: highest token ever issued (0: never claimed)
    token: int
    owner: str | None
    lease_until: float | None
    released: bool

    def live(self, now: float) -> bool:
        """True while a claim holds: issued, not released, lease not over."""
        return (
            self.token > 0
            and not self.released
            and self.lease_until is not None
            and self.lease_until > now
        )


def claim_state(doc: DocState | None) -> ClaimState:
    """Read the claim state of a document (all zero for ``None`` or a never-claimed one)."""
    if doc is None:
        return ClaimState(0, 0, None, None, False)
    fields = doc.fields
    token = fields.get(TOKEN)
    lease = fields.get(LEASE)
    owner = fields.get(OWNER)
    return ClaimState(
        highest=int(doc.maxima.get(FENCE, 0)),
        token=token if isinstance(token, int) else 0,
        owner=owner if isinstance(owner, str) else None,
        lease_until=float(lease) if isinstance(lease, int | float) else None,
        released=bool(fields.get(RELEASED)),
    )


def valid_token(token: object) -> int:
    """Return ``token`` if it can be a fencing token (a positive integer).

    Raises:
        InvalidInputError: It is not.
    """
    if isinstance(token, bool) or not isinstance(token, int) or token < 1:
        raise InvalidInputError(
            f"fencingToken must be a positive integer, got {token!r}",
            hint="Pass the fencingToken that repocontext_claim returned.",
        )
    return token


def check_write(doc: DocState | None, token: int | None, now: float) -> None:
    """Refuse a write the claim does not allow (TOOLS.md "Fence on write", in order).

    Raises:
        ClaimRequiredError: A live claim and no token.
        StaleTokenError: The token is below the highest issued.
        UnissuedTokenError: The token is above the highest issued.
        ReleasedTokenError: The claim was released and the token is its own (or newer).
    """
    state = claim_state(doc)
    if state.highest == 0:
        return  # 1. never claimed
    if token is None:
        if state.live(now):
            raise ClaimRequiredError("the entry is claimed; this write carries no fencing token")
        return  # 3. released (or lapsed) claim, no token
    if token < state.highest:
        raise StaleTokenError(f"fencing token {token} is older than {state.highest}")
    if token > state.highest:
        raise UnissuedTokenError(f"fencing token {token} was never issued for this entry")
    if state.released:
        raise ReleasedTokenError(f"the claim with fencing token {token} was released")
