"""Claim tools: claim, claim_next, renew_claim, release_claim, claim_status."""

from __future__ import annotations

from typing import Annotated, Final

from mcp.types import ToolAnnotations
from pydantic import Field

from repocontext.arguments import MAX_FENCING_TOKEN
from repocontext.claims import MAX_OWNER_CHARS, MAX_WAIT_SECONDS
from repocontext.mcp._gate import READ_ONLY, ToolSpec, map_errors, map_errors_async
from repocontext.mcp._params import MemoryKey, RepoId, Topic
from repocontext.wire import ClaimResult, ClaimStatusResult, ReleaseResult, RenewResult
from repocontext.workspace import Workspace

__all__ = ["claim_tools"]

CLAIM_WRITE: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
Key = MemoryKey
Owner = Annotated[
    str, Field(max_length=MAX_OWNER_CHARS, description="Who claims (agent or worker name).")
]
Lease = Annotated[
    float | None, Field(gt=0, description="Lease seconds (default 60, cut to the maximum).")
]
Token = Annotated[
    int, Field(ge=0, le=MAX_FENCING_TOKEN, description="The fencingToken your claim returned.")
]


def claim_tools(workspace: Workspace) -> list[ToolSpec]:
    """Return the claim tools bound to ``workspace``."""
    claims = workspace

    @map_errors_async
    async def repocontext_claim(
        key: Key,
        owner: Owner,
        leaseSeconds: Lease = None,
        maxWaitSeconds: Annotated[
            float | None,
            Field(ge=0, le=MAX_WAIT_SECONDS, description="Wait this long in FIFO order."),
        ] = None,
    ) -> ClaimResult:
        """Claim a memory entry; returns a fencingToken that only ever grows.

        Pass the token with every write of the entry (repocontext_update / _forget
        `fencingToken`). `granted: false` with `reason`: `missing`, `contended` (held by
        another), `timeout` (waited `maxWaitSeconds`, at most 300). Cancelling a waiting call
        takes it out of the queue. Renew before `leaseExpiresAt`.
        """
        return ClaimResult.of(
            await claims.claim_async(
                key, owner, lease_seconds=leaseSeconds, max_wait_seconds=maxWaitSeconds
            )
        )

    @map_errors
    def repocontext_claim_next(
        repoId: RepoId,
        topic: Annotated[Topic, Field(description="The backlog topic.")],
        owner: Owner,
        leaseSeconds: Lease = None,
    ) -> ClaimResult:
        """Claim the first live entry of a topic (key order) that is not claimed and not done.

        Generated ids sort by creation, so the backlog is first in, first out; explicit ids
        sort by id. Many agents can drain one topic this way. When your work is done, write
        the result with `repocontext_update` (`fields {status: done}`, your `fencingToken`),
        then release. `reason: empty` when nothing is left.
        """
        return ClaimResult.of(claims.claim_next(repoId, topic, owner, lease_seconds=leaseSeconds))

    @map_errors
    def repocontext_renew_claim(
        key: Key, fencingToken: Token, leaseSeconds: Lease = None
    ) -> RenewResult:
        """Extend your lease.

        `reason: superseded` means your token no longer holds the claim (another holder took
        the entry after your lease lapsed, or the claim was released): stop working on it
        (your writes will be refused). `reason: missing`: no live entry has the key. A token
        never issued for the entry is refused (`claim.unissued_token`).
        """
        return RenewResult.of(claims.renew_claim(key, fencingToken, lease_seconds=leaseSeconds))

    @map_errors
    def repocontext_release_claim(key: Key, fencingToken: Token) -> ReleaseResult:
        """Release your claim.

        `reason`: `missing`, `unclaimed` (no claim or already released), `stale` (your token
        is not the newest: someone else holds or held it since). A token never issued for
        the entry is refused (`claim.unissued_token`).
        """
        return ReleaseResult.of(claims.release_claim(key, fencingToken))

    @map_errors
    def repocontext_claim_status(key: Key) -> ClaimStatusResult:
        """Show who holds an entry (advisory: `authoritative` is false; it may change at once)."""
        return ClaimStatusResult.of(claims.claim_status(key))

    return [
        ToolSpec("repocontext_claim_status", repocontext_claim_status, "Claim status", READ_ONLY),
        ToolSpec(
            "repocontext_claim",
            repocontext_claim,
            "Claim",
            CLAIM_WRITE,
            writes=True,
        ),
        ToolSpec(
            "repocontext_claim_next", repocontext_claim_next, "Claim next", CLAIM_WRITE, writes=True
        ),
        ToolSpec(
            "repocontext_renew_claim", repocontext_renew_claim, "Renew", CLAIM_WRITE, writes=True
        ),
        ToolSpec(
            "repocontext_release_claim",
            repocontext_release_claim,
            "Release",
            CLAIM_WRITE,
            writes=True,
        ),
    ]
