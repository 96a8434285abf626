"""The 16-state run machine and the run loop.

This package arrives with the Lattice runtime issues; errors derive from
:class:`lattice_runtime.errors.LatticeError`.
"""

__all__: list[str] = []
