"""Goal -> TaskIR: criteria, invariants, risk, budget, verification allowlist.

This package arrives with the Lattice runtime issues; errors derive from
:class:`lattice_runtime.errors.LatticeError`.
"""

__all__: list[str] = []
