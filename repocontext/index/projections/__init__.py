"""Projections of the code index: the symbol, cross-reference and package records.

Derived from file nodes and maintained incrementally (:mod:`.projection`), written to the
store as a diff (:mod:`.projection_writer`), in the record shapes of :mod:`.xref_records`,
compared by the digests of :mod:`.digests`.
"""

__all__: list[str] = []
