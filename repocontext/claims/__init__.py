"""Multi-agent claims: leases, fencing tokens, fence-on-write, backlog draining."""

from repocontext.claims.model import (
    ClaimGrant,
    ClaimResult,
    ClaimStatus,
    ReleaseResult,
    RenewResult,
)
from repocontext.claims.service import ClaimService
from repocontext.errors import (
    ClaimRequiredError,
    ReleasedTokenError,
    StaleTokenError,
    UnissuedTokenError,
)

__all__ = [
    "ClaimGrant",
    "ClaimRequiredError",
    "ClaimResult",
    "ClaimService",
    "ClaimStatus",
    "ReleaseResult",
    "ReleasedTokenError",
    "RenewResult",
    "StaleTokenError",
    "UnissuedTokenError",
]
