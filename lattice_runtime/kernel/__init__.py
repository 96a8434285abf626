"""Context pages, the repo map and context faults, on top of repocontext's public API.

This package arrives with the Lattice runtime issues; errors derive from
:class:`lattice_runtime.errors.LatticeError`.
"""

__all__: list[str] = []
