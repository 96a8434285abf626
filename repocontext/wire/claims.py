"""The wire form of claim answers: claim, claim_next, renew_claim, release_claim, claim_status."""

from __future__ import annotations

from repocontext import claims
from repocontext.wire._base import WireModel

__all__ = ["ClaimResult", "ClaimStatusResult", "ReleaseResult", "RenewResult"]


class ClaimResult(WireModel):
    """Result of ``repocontext_claim`` and ``repocontext_claim_next``."""

    key: str | None
    granted: bool
    fencing_token: int | None = None
    owner: str | None = None
    lease_expires_at: float | None = None
    reason: str | None = None

    @classmethod
    def of(cls, result: claims.ClaimResult) -> ClaimResult:
        """Build the wire form of a :class:`~repocontext.claims.ClaimResult`."""
        grant = result.grant
        if grant is None:
            return cls(key=result.key, granted=False, reason=result.reason)
        return cls(
            key=result.key,
            granted=True,
            fencing_token=grant.fencing_token,
            owner=grant.owner,
            lease_expires_at=grant.lease_expires_at,
        )


class RenewResult(WireModel):
    """Result of ``repocontext_renew_claim``."""

    key: str
    fencing_token: int
    granted: bool
    lease_expires_at: float | None = None
    lease_shortened: bool | None = None
    reason: str | None = None

    @classmethod
    def of(cls, result: claims.RenewResult) -> RenewResult:
        """Build the wire form of a :class:`~repocontext.claims.RenewResult`."""
        return cls(
            key=result.key,
            fencing_token=result.fencing_token,
            granted=result.granted,
            lease_expires_at=result.lease_expires_at,
            lease_shortened=result.lease_shortened,
            reason=result.reason,
        )


class ReleaseResult(WireModel):
    """Result of ``repocontext_release_claim``."""

    key: str
    fencing_token: int
    released: bool
    reason: str | None = None

    @classmethod
    def of(cls, result: claims.ReleaseResult) -> ReleaseResult:
        """Build the wire form of a :class:`~repocontext.claims.ReleaseResult`."""
        return cls(
            key=result.key,
            fencing_token=result.fencing_token,
            released=result.released,
            reason=result.reason,
        )


class ClaimStatusResult(WireModel):
    """Result of ``repocontext_claim_status``."""

    key: str
    exists: bool
    claimed: bool
    is_held: bool
    fencing_token: int | None = None
    owner: str | None = None
    lease_expires_at: float | None = None
    released_fencing_token: int | None = None
    authoritative: bool = False

    @classmethod
    def of(cls, status: claims.ClaimStatus) -> ClaimStatusResult:
        """Build the wire form of a :class:`~repocontext.claims.ClaimStatus` (advisory)."""
        return cls(
            key=status.key,
            exists=status.exists,
            claimed=status.claimed,
            is_held=status.is_held,
            fencing_token=status.fencing_token,
            owner=status.owner,
            lease_expires_at=status.lease_expires_at,
            released_fencing_token=status.released_fencing_token,
        )
