"""The ``lattice`` MCP server: Lattice as an agent's edit path (``docs/lattice-mcp.md``).

``lattice_begin`` starts a run of a task in the served repository; ``lattice_request_context``
and ``lattice_propose`` answer its turns through the same run machine as every worker;
``lattice_apply`` writes a verified patch; ``lattice_status`` and ``lattice_stats`` report.
"""

from lattice_runtime.mcp._gate import INPUT_INVALID, error_result, map_errors
from lattice_runtime.mcp.server import (
    SERVER_NAME,
    LatticeServer,
    build_server,
    run_stdio,
    serve_http,
)
from lattice_runtime.mcp.tasks import LatticeTasks
from lattice_runtime.mcp.views import PROTOCOL_RULES

__all__ = [
    "INPUT_INVALID",
    "PROTOCOL_RULES",
    "SERVER_NAME",
    "LatticeServer",
    "LatticeTasks",
    "build_server",
    "error_result",
    "map_errors",
    "run_stdio",
    "serve_http",
]
