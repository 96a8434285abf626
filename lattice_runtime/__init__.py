"""lattice_runtime: a deterministic execution layer for coding agents on top of repocontext.

It uses repocontext only through its public API (library and MCP). The packages below are
laid out now and filled by the runtime's issues.
"""

from lattice_runtime.errors import LatticeError

__all__ = ["LatticeError"]
