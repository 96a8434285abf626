"""Composition: open the workspace, build the MCP server, run it on the chosen transport.

This is the one module that wires the adapters together (the MCP server into the HTTP app);
the CLI only builds :class:`~repocontext.settings.Settings` and calls :func:`run`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer

from repocontext.http import LOCAL_HOSTS, create_app
from repocontext.mcp import build_server
from repocontext.settings import Settings
from repocontext.workspace import Workspace

__all__ = ["allowed_hosts", "connect_banner", "run"]

_ANY_ADDRESS: Final = ("0.0.0.0", "::", "")
_LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")


def run(settings: Settings, *, notify: Callable[[str], None]) -> None:
    """Serve until the client disconnects (stdio) or the process is interrupted (http).

    Args:
        settings: The process settings.
        notify: Receives operator messages (never written to stdout, which stdio MCP owns).

    Raises:
        RepoContextError: The store cannot be opened or ``settings.repo`` is refused.
    """
    with Workspace.open(settings) as workspace:
        workspace.start_background()
        if settings.repo is not None:
            status = workspace.bootstrap(settings.repo)
            notify(f"indexing repository {status.repo_id!r} in the background")
        server = build_server(workspace, settings)
        if settings.transport == "http":
            _run_http(workspace, server, settings, notify)
        else:
            anyio.run(server.run_stdio_async)


def allowed_hosts(host: str) -> tuple[str, ...]:
    """Return the Host header patterns the MCP endpoint accepts when bound to ``host``."""
    if host in _ANY_ADDRESS or host in _LOOPBACK:
        return LOCAL_HOSTS
    return (*LOCAL_HOSTS, f"{_url_host(host)}:*")


def connect_banner(host: str, port: int) -> str:
    """Return the lines that tell an operator how to point an MCP client at the server."""
    base = f"http://{_url_host(host)}:{port}"
    url = f"{base}/mcp"
    config = {"mcpServers": {"repocontext": {"type": "http", "url": url}}}
    return "\n".join(
        [
            f"repocontext MCP endpoint: {url}",
            f"  readiness:    {base}/health/ready",
            f"  Claude Code:  claude mcp add --transport http repocontext {url}",
            f"  JSON config:  {json.dumps(config)}",
        ]
    )


def _run_http(
    workspace: Workspace, server: MCPServer, settings: Settings, notify: Callable[[str], None]
) -> None:
    app = create_app(workspace, server, allowed_hosts=allowed_hosts(settings.host))
    notify(connect_banner(settings.host, settings.port))
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="info")


def _url_host(host: str) -> str:
    if host in _ANY_ADDRESS:
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host
