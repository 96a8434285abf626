"""The indexing run: a job over one repository, and the loop that keeps repositories fresh.

:mod:`.job` walks, parses what changed, writes file nodes and updates the projections;
:mod:`.reconcile` turns file-system events into scoped runs.
"""

__all__: list[str] = []
