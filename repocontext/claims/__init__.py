"""Multi-agent claims: leases, fencing tokens, fence-on-write, backlog draining.

This package arrives with its own issue; it is part of the layout from the start so that the
import layering (store <- index, memory, claims <- search <- pack <- workspace) is fixed.
"""

__all__: list[str] = []
