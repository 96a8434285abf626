"""The durable session journal, continuity projection, explicit contract control.

This package arrives with the Lattice runtime issues; errors derive from
:class:`lattice_runtime.errors.LatticeError`.
"""

__all__: list[str] = []
