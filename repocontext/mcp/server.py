"""Build the MCP server: every tool registered from one explicit list."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Final

from repocontext.auth import Grant
from repocontext.mcp._gate import ToolSpec
from repocontext.mcp.claims import claim_tools
from repocontext.mcp.entries import entry_tools
from repocontext.mcp.grants import GrantedServer
from repocontext.mcp.health import health_tool
from repocontext.mcp.index import index_tools
from repocontext.mcp.mapping import map_tool
from repocontext.mcp.memory import memory_tools
from repocontext.mcp.reading import reading_tools
from repocontext.mcp.repos import list_repos_tool
from repocontext.mcp.retrieval import retrieval_tools
from repocontext.mcp.workspace_tools import workspace_tools
from repocontext.settings import Settings
from repocontext.telemetry import Telemetry
from repocontext.workspace import Workspace

__all__ = ["SERVER_NAME", "TOOLS", "build_server", "local_grant", "offered"]

SERVER_NAME: Final = "repocontext"

TOOLS: Final[tuple[Callable[[Workspace], ToolSpec | list[ToolSpec]], ...]] = (
    health_tool,
    list_repos_tool,
    workspace_tools,
    index_tools,
    retrieval_tools,
    reading_tools,
    map_tool,
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


def build_server(
    workspace: Workspace,
    settings: Settings,
    *,
    grant: Grant | None = None,
    telemetry: Telemetry | None = None,
) -> GrantedServer:
    """Return an MCP server exposing the repocontext tools a grant may use over ``workspace``.

    Args:
        workspace: The open workspace every tool works on.
        settings: Decide which tools exist at all (see :func:`offered`).
        grant: The caller's grant; default: the local grant of ``settings``.
        telemetry: Where tool calls are counted, if anywhere.
    """
    grant = grant or local_grant(settings)
    server = GrantedServer(
        SERVER_NAME,
        title="RepoContext",
        instructions=INSTRUCTIONS,
        version=_version(),
        grant=grant,
        withheld={
            spec.name: why
            for spec in _specs(workspace)
            if (why := withheld_because(spec, settings, grant)) is not None
        },
        telemetry=telemetry,
        workspace_root=settings.workspace_root,
    )
    for spec in _specs(workspace):
        if offered(spec, settings, grant):
            server.add_tool(
                spec.fn,
                name=spec.name,
                title=spec.title,
                annotations=spec.annotations,
                structured_output=True,
            )
    return server


def withheld_because(spec: ToolSpec, settings: Settings, grant: Grant) -> str | None:
    """Why a server with ``settings`` does not offer ``spec`` to ``grant`` (a hint), or None."""
    if offered(spec, settings, grant):
        return None
    if spec.writes and not settings.enable_writes:
        return "This server runs read-only: start it with --enable-writes to offer write tools."
    if spec.writes and not grant.can_write:
        return "Write tools need a curator token."
    if settings.serve_mode == "none":
        return (
            "This server has no repository or workspace root: start it with --repo PATH "
            "(offers repocontext_bootstrap) or --workspace-root DIR (offers "
            "repocontext_add_repo)."
        )
    if spec.mode == "single_repo":
        return "Offered by a single-repository server (serve --repo); use repocontext_add_repo."
    return "Offered by a workspace server (serve --workspace-root); this one serves one repo."


def offered(spec: ToolSpec, settings: Settings, grant: Grant) -> bool:
    """Return True when a server with ``settings`` offers ``spec`` to a caller with ``grant``.

    Write tools need writes enabled and a curator grant; ``single_repo`` tools
    (``bootstrap``) need ``serve --repo`` and ``workspace`` tools (``add_repo``,
    ``remove_repo``, ``reset_index``) need ``serve --workspace-root``.
    """
    if spec.writes and not (settings.enable_writes and grant.can_write):
        return False
    if spec.mode != "any":
        return settings.serve_mode == spec.mode
    return True


def local_grant(settings: Settings) -> Grant:
    """Return the grant of callers without a token (stdio; HTTP without a tokens file)."""
    return Grant.of("local", settings.local_role, settings.local_repos)


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
