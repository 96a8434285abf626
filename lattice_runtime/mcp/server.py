"""Build the ``lattice`` MCP server for one repository and serve it over stdio or HTTP.

Arguments that do not fit a tool's input schema, and tool names that do not exist, are
answered like every other refusal: a tool error whose text is ``{"code", "message",
"hint"}`` (``lattice.input_invalid``), not the SDK's prose.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from lattice_runtime.control import ExplicitControl
from lattice_runtime.errors import ConfigError
from lattice_runtime.mcp._gate import INPUT_INVALID, error_result
from lattice_runtime.mcp.continuity_tools import continuity_tools
from lattice_runtime.mcp.control_tools import control_tools
from lattice_runtime.mcp.tasks import LatticeTasks
from lattice_runtime.mcp.tools import lattice_tools
from lattice_runtime.session import Journal
from lattice_runtime.settings import ControlMode

__all__ = ["SERVER_NAME", "LatticeServer", "build_server", "run_stdio", "serve_http", "serve_stdio"]

SERVER_NAME: Final = "lattice"
_LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")

INSTRUCTIONS: Final = (
    "Lattice is a verified edit path: lattice_begin{task} compiles the task and grants pages "
    "with edit handles; answer with lattice_propose (a protocol-v5 patch) or "
    "lattice_request_context; a PASSED patch is written only by lattice_apply. Do not write "
    "files yourself. Tool errors carry a JSON body {code, message, hint}; follow the hint."
)


class LatticeServer(MCPServer):
    """The MCP server of one repository's Lattice tasks (see the module docstring)."""

    def __init__(
        self,
        tasks: LatticeTasks,
        control: ExplicitControl | None = None,
        *,
        mode: ControlMode = "auto",
    ) -> None:
        """Register the ``lattice_*`` tools: continuity unless ``mode`` is off, control if any."""
        super().__init__(
            SERVER_NAME, title="Lattice", instructions=INSTRUCTIONS, version=_version()
        )
        self.tasks = tasks
        self._known: set[str] = set()
        continuity = continuity_tools(Journal(tasks.root, mode=mode), mode, control)
        extra = [] if control is None else control_tools(control, tasks)
        for spec in [*lattice_tools(tasks), *continuity, *extra]:
            self.add_tool(
                spec.fn,
                name=spec.name,
                title=spec.title,
                annotations=spec.annotations,
                structured_output=True,
            )
            self._known.add(spec.name)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        context: Context[Any, Any] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        """Run a tool; unknown names and arguments off the input schema are coded errors."""
        if name not in self._known:
            return error_result(
                INPUT_INVALID,
                f"there is no tool named {name[:80]!r}",
                "Call one of the tools tools/list shows (all are named lattice_*).",
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            return _invalid_arguments(name, exc.__cause__)


def build_server(
    tasks: LatticeTasks, *, mode: ControlMode = "auto", control: ExplicitControl | None = None
) -> LatticeServer:
    """Return the MCP server offering the ``lattice_*`` tools over ``tasks``.

    Args:
        tasks: The repository's runs.
        mode: The control mode (``docs/continuity.md``): the continuity tools unless ``off``;
            only ``always`` lists the explicit-control tools and makes ``lattice_apply``
            require a receipt.
        control: The explicit control to use in ``always`` mode (default: the repository's,
            with its state in the per-user state directory).
    """
    if mode != "always":
        return LatticeServer(tasks, mode=mode)
    control = control or ExplicitControl(tasks.root)
    tasks.attach_control(control)
    return LatticeServer(tasks, control, mode=mode)


async def serve_stdio(server: LatticeServer) -> None:
    """Serve ``server`` on stdin and stdout until the client closes stdin."""
    await server.run_stdio_async()


def serve_http(
    server: LatticeServer, host: str, port: int, *, notify: Callable[[str], None]
) -> None:
    """Serve ``server`` over streamable HTTP at ``http://host:port/mcp`` until interrupted.

    The socket is bound before ``notify`` hears the endpoint, so ``port`` 0 (any free port)
    announces the real one.

    Raises:
        ConfigError: The address cannot be bound (a port in use).
    """
    listener = _listener(host, port)
    listener.listen()  # clients that connect once the endpoint is announced wait in the backlog
    bound = listener.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    notify(f"lattice MCP endpoint: http://{shown}:{bound}/mcp (repository {server.tasks.root})")
    if host not in _LOOPBACK:
        notify(
            f"warning: the lattice tools have no authentication; every client that reaches "
            f"{host} can run and apply tasks in {server.tasks.root}."
        )
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[listener])


def run_stdio(server: LatticeServer) -> None:
    """Serve ``server`` over stdio (blocking)."""
    anyio.run(serve_stdio, server)


def _listener(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror}",
            hint="Stop the process using it, or pick another --port (0: any free port).",
        ) from exc
    return listener


def _invalid_arguments(tool: str, error: ValidationError) -> CallToolResult:
    problems = [
        f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {item['msg']}"
        for item in error.errors()[:10]
    ]
    return error_result(
        INPUT_INVALID,
        f"{tool} got arguments that do not fit its input schema: {'; '.join(problems)}",
        "Call again with the arguments its input schema names (tools/list), camelCase.",
    )


def _version() -> str:
    try:
        return version("repocontext-lattice")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"
