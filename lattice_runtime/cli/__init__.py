"""The ``lattice`` command (``docs/lattice.md``, "CLI").

``run`` (one task), ``handoff validate`` and ``continue`` (the manual worker), ``mcp`` (the
``lattice_*`` MCP tools), ``session new|show|reset``, ``doctor``, ``benchmark``, ``evidence
safety`` and ``version``; each command module registers itself on :data:`app` when imported
here.
"""

from lattice_runtime.cli import benchmark, doctor, evidence, handoff, mcp, run, session
from lattice_runtime.cli.app import app, main

__all__ = [
    "app",
    "benchmark",
    "doctor",
    "evidence",
    "handoff",
    "main",
    "mcp",
    "run",
    "session",
]
