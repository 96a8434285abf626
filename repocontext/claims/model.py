"""The typed answers of the claim operations (the wire form is built from them at the edge)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias, TypedDict

__all__ = [
    "ClaimGrant",
    "ClaimOptions",
    "ClaimReason",
    "ClaimResult",
    "ClaimStatus",
    "ReleaseReason",
    "ReleaseResult",
    "RenewReason",
    "RenewResult",
]

ClaimReason: TypeAlias = Literal["missing", "contended", "timeout", "done", "empty"]
"""Why a claim was not granted (``done``: a backlog item finished while it was claimed;
``empty``: ``claim_next`` found nothing open)."""
RenewReason: TypeAlias = Literal["missing", "superseded"]
ReleaseReason: TypeAlias = Literal["missing", "unclaimed", "stale"]


class ClaimOptions(TypedDict, total=False):
    """The optional keyword arguments of a claim (``claim``, ``claim_async``)."""

    lease_seconds: float | None
    max_wait_seconds: float | None


@dataclass(frozen=True, slots=True)
class ClaimGrant:
    """A granted claim.

    Attributes:
        fencing_token: One above the highest token ever issued for the entry.
        owner: Who holds it.
        lease_expires_at: When the lease ends (epoch seconds) unless renewed.
    """

    fencing_token: int
    owner: str
    lease_expires_at: float


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """The answer of ``claim`` and ``claim_next``: a grant, or the reason there is none.

    Attributes:
        key: The entry claimed (``None`` when ``claim_next`` found none).
        grant: The claim, when granted.
        reason: Why not, when not granted.
    """

    key: str | None
    grant: ClaimGrant | None = None
    reason: ClaimReason | None = None

    @property
    def granted(self) -> bool:
        """True when the claim was granted."""
        return self.grant is not None

    @property
    def fencing_token(self) -> int | None:
        """The granted claim's fencing token."""
        return None if self.grant is None else self.grant.fencing_token


@dataclass(frozen=True, slots=True)
class RenewResult:
    """The answer of ``renew``.

    Attributes:
        key: The entry.
        fencing_token: The token the renewal was asked with.
        granted: The lease was extended.
        lease_expires_at: The new end of the lease, when granted.
        lease_shortened: The lease asked for was cut to the maximum, when granted.
        reason: Why not, when not granted.
    """

    key: str
    fencing_token: int
    granted: bool
    lease_expires_at: float | None = None
    lease_shortened: bool | None = None
    reason: RenewReason | None = None


@dataclass(frozen=True, slots=True)
class ReleaseResult:
    """The answer of ``release``.

    Attributes:
        key: The entry.
        fencing_token: The token the release was asked with.
        released: The claim was released.
        reason: Why not, when not released.
    """

    key: str
    fencing_token: int
    released: bool
    reason: ReleaseReason | None = None


@dataclass(frozen=True, slots=True)
class ClaimStatus:
    """An entry's claim as last seen; advisory (it may change at once).

    Attributes:
        key: The entry.
        exists: A live entry has the key.
        claimed: A claim holds now.
        fencing_token: The holder's token, while claimed.
        owner: The holder, while claimed.
        lease_expires_at: When the holder's lease ends, while claimed.
        released_fencing_token: The token of the released last claim, if it was released.
    """

    key: str
    exists: bool
    claimed: bool
    fencing_token: int | None = None
    owner: str | None = None
    lease_expires_at: float | None = None
    released_fencing_token: int | None = None

    @property
    def is_held(self) -> bool:
        """The same as ``claimed`` (the name the wire form also carries)."""
        return self.claimed
