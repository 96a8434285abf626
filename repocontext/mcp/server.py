"""Build the MCP server: every tool registered from one explicit list."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Final

from mcp.server.mcpserver import MCPServer

from repocontext.mcp._gate import ToolSpec
from repocontext.mcp.claims import claim_tools
from repocontext.mcp.entries import entry_tools
from repocontext.mcp.health import health_tool
from repocontext.mcp.index import index_tools
from repocontext.mcp.memory import memory_tools
from repocontext.mcp.repos import list_repos_tool
from repocontext.mcp.retrieval import retrieval_tools
from repocontext.settings import Settings
from repocontext.workspace import Workspace

__all__ = ["SERVER_NAME", "TOOLS", "build_server"]

SERVER_NAME: Final = "repocontext"

TOOLS: Final[tuple[Callable[[Workspace], ToolSpec | list[ToolSpec]], ...]] = (
    health_tool,
    list_repos_tool,
    index_tools,
    retrieval_tools,
    entry_tools,
    memory_tools,
    claim_tools,
)
"""Every tool factory, in the order tools are listed to clients."""

INSTRUCTIONS: Final = (
    "repocontext is durable codebase memory. Start with repocontext_health (is retrieval "
    "ready?) and repocontext_list_repos (which repositories and ids exist). Tool errors carry "
    "a JSON body {code, message, hint}; follow the hint."
)


def build_server(workspace: Workspace, settings: Settings) -> MCPServer:
    """Return an MCP server exposing the repocontext tools over ``workspace``.

    Write tools are registered only when ``settings.enable_writes`` is true.
    """
    server: MCPServer = MCPServer(
        SERVER_NAME,
        title="RepoContext",
        instructions=INSTRUCTIONS,
        version=_version(),
    )
    for spec in _specs(workspace):
        if spec.writes and not (settings.enable_writes and settings.workspace_root):
            continue
        server.add_tool(
            spec.fn,
            name=spec.name,
            title=spec.title,
            annotations=spec.annotations,
            structured_output=True,
        )
    return server


def _specs(workspace: Workspace) -> list[ToolSpec]:
    specs: list[ToolSpec] = []
    for factory in TOOLS:
        made = factory(workspace)
        specs += made if isinstance(made, list) else [made]
    return specs


def _version() -> str:
    try:
        return version("repocontext-lattice")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"
