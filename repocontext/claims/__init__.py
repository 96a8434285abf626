"""Multi-agent claims: leases, fencing tokens, fence-on-write, backlog draining."""

from repocontext.claims.service import ClaimService
from repocontext.memory.fence import (
    ClaimRequiredError,
    ReleasedTokenError,
    StaleTokenError,
    UnissuedTokenError,
)

__all__ = [
    "ClaimRequiredError",
    "ClaimService",
    "ReleasedTokenError",
    "StaleTokenError",
    "UnissuedTokenError",
]
