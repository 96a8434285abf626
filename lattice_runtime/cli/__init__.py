"""The ``lattice`` command (``docs/lattice.md``, "CLI").

``run`` (one task), ``session new|show|reset``, ``doctor``, ``benchmark`` and ``version``;
each command module registers itself on :data:`app` when imported here.
"""

from lattice_runtime.cli import benchmark, doctor, run, session
from lattice_runtime.cli import evidence as evidence  # registers `lattice evidence`
from lattice_runtime.cli import mcp as mcp
from lattice_runtime.cli.app import app, main

__all__ = ["app", "benchmark", "doctor", "main", "run", "session"]
