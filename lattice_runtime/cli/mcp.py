"""``lattice mcp``: serve the ``lattice_*`` MCP tools for one repository."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lattice_runtime.cli.app import EmbedderOption, RepoOption, app, build_settings, fail_cleanly
from lattice_runtime.errors import ConfigError
from lattice_runtime.mcp import LatticeTasks, build_server, run_stdio, serve_http
from lattice_runtime.session import Journal

__all__ = ["mcp"]


@app.command("mcp")
def mcp(
    transport: Annotated[
        str, typer.Option(help="stdio (one client, the default) or http (streamable HTTP).")
    ] = "stdio",
    host: Annotated[str, typer.Option(help="Address to bind with --transport http.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(help="Port with --transport http (0: any free).")] = 8766,
    repo: RepoOption = Path(),
    embedder: EmbedderOption = None,
    timeout: Annotated[
        float | None,
        typer.Option(help="Each verification command's deadline in seconds (default 300)."),
    ] = None,
    control: Annotated[
        str | None,
        typer.Option(
            "--control",
            help="off, auto (the default: the session journal and the continuity tools) or "
            "always: also explicit control (contract, one-use receipts for lattice_apply, plan "
            "graph) and its tools (LATTICE_CONTROL).",
        ),
    ] = None,
) -> None:
    """Serve the lattice_* MCP tools: an agent's edit path for the repository --repo."""
    with fail_cleanly():
        settings = build_settings(
            command_timeout_seconds=timeout, embedder=embedder, control=control
        )
        if transport not in ("stdio", "http"):
            raise ConfigError(f"unknown transport {transport!r}", hint="Use stdio or http.")
        root = repo.resolve()
        if not root.is_dir():
            raise ConfigError(f"{root} is not a directory", hint="Pass --repo DIR.")
        tasks = LatticeTasks(
            root,
            embedder=settings.embedder,
            timeout_seconds=settings.command_timeout_seconds,
            journal=None if settings.control == "off" else Journal(root, mode=settings.control),
        )
        server = build_server(tasks, mode=settings.control)
        if transport == "http":
            serve_http(server, host, port, notify=lambda line: typer.echo(line, err=True))
        else:
            run_stdio(server)
