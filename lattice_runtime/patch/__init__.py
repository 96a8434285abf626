"""Lowering worker output to the internal patch IR; exact replacement rules.

This package arrives with the Lattice runtime issues; errors derive from
:class:`lattice_runtime.errors.LatticeError`.
"""

__all__: list[str] = []
