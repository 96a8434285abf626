"""Composition: open the workspace, build the MCP server, run it on the chosen transport.

This is the one module that wires the adapters together (the MCP server into the HTTP app);
the CLI only builds :class:`~repocontext.settings.Settings` and calls :func:`run`. Over HTTP
with several workers (``settings.workers``, default one per core) this process binds the port,
prints the banner and supervises the worker processes (:mod:`repocontext.supervisor`), each of
which opens the workspace and serves the app on that socket (:func:`serve_worker`).
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import threading
from collections.abc import Callable
from typing import Final

import anyio
import uvicorn
from fastapi import FastAPI

from repocontext.auth import Grant, TokenBook
from repocontext.errors import InvalidInputError, PortInUseError, RepoContextError
from repocontext.http import LOCAL_HOSTS, create_app
from repocontext.mcp import build_server
from repocontext.mcp.grants import GrantedServer
from repocontext.mcp.server import local_grant
from repocontext.mcp.stdio import serve_stdio
from repocontext.settings import Settings
from repocontext.supervisor import Supervisor, WorkerStart, worker_count
from repocontext.telemetry import Telemetry, configure_logging
from repocontext.workspace import Workspace

__all__ = ["allowed_hosts", "connect_banner", "run", "serve_worker"]

_ANY_ADDRESS: Final = ("0.0.0.0", "::", "")
_LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")


def run(settings: Settings, *, notify: Callable[[str], None]) -> None:
    """Serve until the client disconnects (stdio) or the process gets SIGTERM or SIGINT.

    Args:
        settings: The process settings.
        notify: Receives operator messages (never written to stdout, which stdio MCP owns).

    Raises:
        RepoContextError: The store cannot be opened, ``settings.repo`` is refused or the
            auth tokens file is malformed.
        InvalidInputError: Several workers were asked for over stdio.
        WorkersFailedError: A worker process did not start or kept dying.
    """
    if settings.transport == "stdio" and (settings.workers or 1) > 1:
        raise InvalidInputError(
            f"--workers {settings.workers} needs the HTTP transport: stdio has one client, "
            "served by one process",
            hint="Add --transport http (each worker then serves the same port), or drop --workers.",
        )
    # Before the MCP server exists: the SDK adds its own handler to an unconfigured root.
    configure_logging()
    # Read before the store opens: a broken tokens file must not start a half-secured server.
    tokens = TokenBook.load(settings.auth_tokens_file) if settings.auth_tokens_file else None
    workers = worker_count(settings) if settings.transport == "http" else 1
    if workers > 1:
        _supervise(settings, tokens, workers, notify)
        return
    _exit_cleanly_on_sigterm()
    with Workspace.open(settings) as workspace:
        workspace.start_background()
        if settings.repo is not None:
            status = workspace.bootstrap(settings.repo)
            notify(f"indexing repository {status.repo_id!r} in the background")
        if settings.transport == "http":
            _run_http(workspace, tokens, settings, notify)
        else:
            # stdio has no tokens: its one caller gets the configured local grant, explicitly.
            server = build_server(workspace, settings, grant=local_grant(settings))
            anyio.run(serve_stdio, server)


def allowed_hosts(host: str, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Return the Host header patterns the MCP endpoint accepts when bound to ``host``.

    Args:
        host: The bind address; a specific non-loopback address is added as ``host:*``.
        extra: Patterns from ``settings.allowed_hosts`` (e.g. a container's service name).
    """
    bound = () if host in _ANY_ADDRESS or host in _LOOPBACK else (f"{_url_host(host)}:*",)
    return tuple(dict.fromkeys((*LOCAL_HOSTS, *bound, *extra)))


def connect_banner(host: str, port: int, *, authenticated: bool = False) -> str:
    """Return the lines that tell an operator how to point an MCP client at the server."""
    base = f"http://{_url_host(host)}:{port}"
    url = f"{base}/mcp"
    entry: dict[str, object] = {"type": "http", "url": url}
    add = f"claude mcp add --transport http repocontext {url}"
    if authenticated:
        entry["headers"] = {"Authorization": "Bearer ${REPOCONTEXT_TOKEN}"}
        add += ' --header "Authorization: Bearer $REPOCONTEXT_TOKEN"'
    config = {"mcpServers": {"repocontext": entry}}
    return "\n".join(
        [
            f"repocontext MCP endpoint: {url}",
            f"  readiness:    {base}/health/ready",
            f"  metrics:      {base}/metrics",
            f"  Claude Code:  {add}",
            f"  JSON config:  {json.dumps(config)}",
        ]
    )


def serve_worker(start: WorkerStart) -> None:
    """Serve the HTTP app on the supervisor's socket until SIGTERM (one worker process).

    Worker 0 runs the background jobs and bootstraps ``settings.repo`` on its first start;
    every worker follows the change feed.
    """
    configure_logging()
    settings = start.settings
    _exit_cleanly_on_sigterm()
    try:
        tokens = TokenBook.load(settings.auth_tokens_file) if settings.auth_tokens_file else None
        workspace = Workspace.open(settings)
    except RepoContextError as exc:
        start.failed(exc)
        raise
    with workspace:
        try:
            workspace.start_background(jobs=start.index == 0)
            if start.index == 0 and start.first and settings.repo is not None:
                workspace.bootstrap(settings.repo)
        except RepoContextError as exc:  # (a damaged archive: the supervisor says so)
            start.failed(exc)
            raise
        app = _http_app(workspace, tokens, settings, worker=True)
        start.ready.set()
        _serve_app(app, settings, start.listener)


def _supervise(
    settings: Settings, tokens: TokenBook | None, workers: int, notify: Callable[[str], None]
) -> None:
    if settings.repo is not None:
        # Here, so a refused path fails at once; worker 0 indexes it.
        with Workspace.open(settings) as workspace:
            info = workspace.register_repo(settings.repo)
        notify(f"indexing repository {info.repo_id!r} in the background")
    _warn_if_open(tokens, settings, notify)
    listener = _listener(settings.host, settings.port)  # a port in use fails at once
    port = listener.getsockname()[1]

    def banner() -> None:  # once worker 0 serves: a damaged archive fails before it
        notify(connect_banner(settings.host, port, authenticated=tokens is not None))
        notify(f"  workers:      {workers} processes (--workers)")

    try:
        pinned = settings.model_copy(update={"port": port})
        Supervisor(pinned, listener, serve_worker, workers, on_started=banner).run()
    finally:
        listener.close()


def _run_http(
    workspace: Workspace,
    tokens: TokenBook | None,
    settings: Settings,
    notify: Callable[[str], None],
) -> None:
    app = _http_app(workspace, tokens, settings)
    _warn_if_open(tokens, settings, notify)
    listener = _listener(settings.host, settings.port)  # before the banner: it names the port
    port = listener.getsockname()[1]
    notify(connect_banner(settings.host, port, authenticated=tokens is not None))
    _serve_app(app, settings, listener)


def _http_app(
    workspace: Workspace, tokens: TokenBook | None, settings: Settings, *, worker: bool = False
) -> FastAPI:
    telemetry = Telemetry(workspace)
    grants = tokens.grants() if tokens is not None else [local_grant(settings)]

    def servers() -> dict[Grant, GrantedServer]:
        return {
            grant: build_server(workspace, settings, grant=grant, telemetry=telemetry)
            for grant in grants
        }

    return create_app(
        workspace,
        servers(),
        tokens=tokens,
        allowed_hosts=allowed_hosts(settings.host, settings.allowed_hosts),
        telemetry=telemetry,
        access_log=settings.access_log,
        # A worker may get the requests of a session another worker opened, and so may a
        # server sharing its store with others behind one address (a load balancer).
        stateless_servers=servers() if worker or settings.store_url else None,
    )


def _warn_if_open(
    tokens: TokenBook | None, settings: Settings, notify: Callable[[str], None]
) -> None:
    if tokens is None and settings.host not in _LOOPBACK:
        notify(
            f"warning: no auth tokens file; every client that reaches {settings.host} gets the "
            f"local grant ({settings.local_role}). Set --auth-tokens for a shared server."
        )


def _serve_app(app: FastAPI, settings: Settings, listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    # log_config=None: uvicorn's loggers keep the handler of configure_logging (one format).
    config = uvicorn.Config(
        app, host=settings.host, port=port, log_level="info", access_log=False, log_config=None
    )
    # uvicorn re-raises the SIGINT it shut down on (uvicorn.run swallows it too)
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[listener])


def _listener(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (``0``: a free port) before anything is announced.

    The banner then names a port that is really served, and a port in use fails at once.

    Raises:
        PortInUseError: Another process listens there, or the address cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise PortInUseError(
            f"cannot listen on {host}:{port}: {exc.strerror}",
            hint="Stop the process using it, or pick another --port (0: any free port).",
        ) from exc
    return listener


def _exit_cleanly_on_sigterm() -> None:
    # uvicorn shuts down gracefully on SIGTERM and then raises the signal again under the
    # handler it found; with the default one the process would die before the workspace
    # closes (no archive export on shutdown, no store close). This handler turns that into
    # a normal exit, so `docker stop` and systemd get the same shutdown as Ctrl-C.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_exit)


def _raise_exit(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _url_host(host: str) -> str:
    if host in _ANY_ADDRESS:
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host
