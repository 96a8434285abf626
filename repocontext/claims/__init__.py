"""Multi-agent claims: leases, fencing tokens, fence-on-write, backlog draining."""

from repocontext.claims.fence import (
    ClaimRequiredError,
    ReleasedTokenError,
    StaleTokenError,
    UnissuedTokenError,
)
from repocontext.claims.service import ClaimService

__all__ = [
    "ClaimRequiredError",
    "ClaimService",
    "ReleasedTokenError",
    "StaleTokenError",
    "UnissuedTokenError",
]
