"""Multi-agent claims: leases, fencing tokens, fence-on-write, backlog draining."""

from repocontext.claims.model import (
    ClaimGrant,
    ClaimOptions,
    ClaimResult,
    ClaimStatus,
    ReleaseResult,
    RenewResult,
)
from repocontext.claims.service import MAX_OWNER_CHARS, MAX_WAIT_SECONDS, ClaimService
from repocontext.errors import (
    ClaimRequiredError,
    ReleasedTokenError,
    StaleTokenError,
    UnissuedTokenError,
)

__all__ = [
    "MAX_OWNER_CHARS",
    "MAX_WAIT_SECONDS",
    "ClaimGrant",
    "ClaimOptions",
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
