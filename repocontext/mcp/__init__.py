"""The MCP surface: ``repocontext_*`` tools over a :class:`~repocontext.workspace.Workspace`."""

from repocontext.mcp._gate import (
    READ_ONLY,
    ToolSpec,
    WireModel,
    error_result,
    error_text,
    map_errors,
)
from repocontext.mcp.health import health_tool
from repocontext.mcp.repos import list_repos_tool
from repocontext.mcp.server import SERVER_NAME, TOOLS, build_server

__all__ = [
    "READ_ONLY",
    "SERVER_NAME",
    "TOOLS",
    "ToolSpec",
    "WireModel",
    "build_server",
    "error_result",
    "error_text",
    "health_tool",
    "list_repos_tool",
    "map_errors",
]
