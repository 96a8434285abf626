"""The FastAPI app: health probes, call stats, Prometheus metrics and MCP at ``/mcp``.

Routes:

* ``/health/live`` — the process answers (200).
* ``/health/ready`` — 200 when the store answers and something can serve (no repository is
  registered, or at least one has a finished index); 503 while the store cannot be read or
  every registered repository is still on its first index pass. The body carries the
  retrieval phase either way, and ``store``: the engine, whether it answered one minimal read
  and that read's latency (an unreachable PostgreSQL is 503 ``store.unavailable`` at once,
  and ready again by itself when the database is back).
* ``/stats`` — the figures of ``repocontext_stats`` for this process.
* ``/metrics`` — Prometheus text format (:class:`repocontext.telemetry.Telemetry`).
* ``/mcp`` — streamable HTTP MCP. With a :class:`~repocontext.auth.TokenBook`, a request
  needs ``Authorization: Bearer <token>`` (401 otherwise) and is served by the MCP server of
  the token's grant; without one, every request is served under the local grant.

The probes need no token (orchestrators call them); with a tokens file, ``/metrics`` and
``/stats`` need any valid one (they name repositories and count every caller's calls). Each request
gives one access-log record (``repocontext.access``, its fields as keys of the JSON log line)
without query strings or headers.

Every response names the process that answered in ``X-RepoContext-Worker`` (its pid: with
``serve --workers N``, which worker). Refusals share one JSON body
``{"code", "message", "hint"}``: 401 without a valid token, and 413 for an MCP request body
over :data:`MAX_BODY_BYTES` (the SDK's own 413 is plain text).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Final

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from pydantic import JsonValue
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from repocontext.auth import FULL_ACCESS, Grant, TokenBook
from repocontext.errors import InvalidInputError, RepoContextError, StoreUnavailableError
from repocontext.http.sessions import SessionFallback
from repocontext.store import iso_utc
from repocontext.telemetry import CONTENT_TYPE, Telemetry
from repocontext.wire import StatsResultWire
from repocontext.workspace import Workspace

__all__ = ["ACCESS_LOGGER", "LOCAL_HOSTS", "MAX_BODY_BYTES", "WORKER_HEADER", "create_app"]

LOCAL_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
"""Host headers the MCP endpoint accepts by default (DNS-rebinding protection)."""

MAX_BODY_BYTES: Final = DEFAULT_MAX_REQUEST_BODY_SIZE
"""The largest MCP request body ``/mcp`` reads (4 MiB); a larger one gets a JSON 413."""

ACCESS_LOGGER: Final = "repocontext.access"
_access_log = logging.getLogger(ACCESS_LOGGER)
_ROUTES: Final = ("/health/live", "/health/ready", "/metrics", "/stats", "/mcp")
WORKER_HEADER: Final = "X-RepoContext-Worker"
"""Response header naming the process that answered (``serve --workers N``: which worker)."""


def create_app(
    workspace: Workspace,
    mcp_servers: MCPServer | Mapping[Grant, MCPServer],
    *,
    tokens: TokenBook | None = None,
    allowed_hosts: Sequence[str] = LOCAL_HOSTS,
    telemetry: Telemetry | None = None,
    access_log: bool = True,
    stateless_servers: Mapping[Grant, MCPServer] | None = None,
) -> FastAPI:
    """Return the HTTP app serving health probes, metrics and MCP at ``/mcp``.

    Args:
        workspace: The open workspace the probes read.
        mcp_servers: One MCP server (every caller gets it), or one per grant (the caller's
            token picks one); see :func:`repocontext.mcp.build_server`.
        tokens: Bearer tokens and their grants; with it, ``/mcp`` answers 401 without a
            valid token.
        allowed_hosts: ``Host`` header patterns (``host:port``, ``*`` for any port) the MCP
            endpoint accepts; others get 421.
        telemetry: The process's metrics; a fresh one is made when not given.
        access_log: Log one JSON line per request.
        stateless_servers: One more server per grant, which serves statelessly the requests
            of sessions another worker process opened (``serve --workers N``; see
            :mod:`repocontext.http.sessions`); without, such a request gets 404.

    Raises:
        ValueError: ``tokens`` names a grant that has no server, or several servers are
            given without tokens.
    """
    servers = _servers_by_grant(mcp_servers)
    if tokens is None and len(servers) != 1:
        raise ValueError("several MCP servers need a TokenBook to choose between them")
    if tokens is not None and not set(tokens.grants()) <= set(servers):
        raise ValueError("every grant of the token book needs its MCP server")
    telemetry = telemetry or Telemetry(workspace)
    # "name:*" also admits a Host without a port (what a TLS proxy forwards), and an origin
    # may be https (a browser page behind that proxy) as well as http.
    bare = [host[:-2] for host in allowed_hosts if host.endswith(":*")]
    hosts = list(dict.fromkeys([*allowed_hosts, *bare]))
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")],
    )
    apps: dict[Grant, ASGIApp] = {
        grant: server.streamable_http_app(
            transport_security=security, max_request_body_size=MAX_BODY_BYTES
        )
        for grant, server in servers.items()
    }
    managers = [server.session_manager for server in servers.values()]
    for grant, spare in (stateless_servers or {}).items():
        stateless = spare.streamable_http_app(
            transport_security=security, max_request_body_size=MAX_BODY_BYTES, stateless_http=True
        )
        apps[grant] = SessionFallback(apps[grant], servers[grant].session_manager, stateless)
        managers.append(spare.session_manager)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Starlette does not run a mounted app's lifespan, so the session managers run here.
        async with AsyncExitStack() as stack:
            for manager in managers:
                await stack.enter_async_context(manager.run())
            yield

    app = FastAPI(title="repocontext", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.add_api_route("/health/live", _live, methods=["GET"])
    app.add_api_route("/health/ready", _ready_route(workspace), methods=["GET"])
    # With a tokens file, what names repositories or counts every caller's calls needs one.
    guarded = [] if tokens is None else [Depends(_token_required(tokens))]
    app.add_api_route("/stats", _stats_route(workspace), methods=["GET"], dependencies=guarded)
    app.add_api_route("/metrics", _metrics_route(telemetry), methods=["GET"], dependencies=guarded)
    app.add_exception_handler(_Unauthorized, _refused)
    app.mount("/", _JsonTooLarge(_GrantRouter(apps, tokens)))
    app.add_middleware(_AccessLog, telemetry=telemetry, enabled=access_log)
    return app


def _servers_by_grant(
    mcp_servers: MCPServer | Mapping[Grant, MCPServer],
) -> dict[Grant, MCPServer]:
    if isinstance(mcp_servers, MCPServer):
        grant = getattr(mcp_servers, "grant", None)  # a GrantedServer knows its grant
        return {grant if isinstance(grant, Grant) else FULL_ACCESS: mcp_servers}
    return dict(mcp_servers)


class _GrantRouter:
    """Hand each MCP request to the server of the caller's grant (401 without one)."""

    def __init__(self, apps: dict[Grant, ASGIApp], tokens: TokenBook | None) -> None:
        self._apps = apps
        self._tokens = tokens
        self._local = next(iter(apps.values())) if tokens is None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._local is not None:
            await self._local(scope, receive, send)
            return
        if scope["type"] != "http":  # (a websocket upgrade: MCP here is HTTP only)
            await send({"type": "websocket.close", "code": 1008})
            return
        assert self._tokens is not None
        token = _bearer(scope)
        grant = self._tokens.lookup(token) if token else None
        if grant is None:
            await _unauthorized(scope, receive, send)
            return
        _access_info(scope)["grant"] = grant.name
        await self._apps[grant](scope, receive, send)


class _JsonTooLarge:
    """Answer the SDK's plain-text 413 (a body over :data:`MAX_BODY_BYTES`) as a JSON refusal."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        replaced = False

        async def sending(message: Message) -> None:
            nonlocal replaced
            if message["type"] == "http.response.start" and message["status"] == 413:
                replaced = True
                await _too_large()(scope, receive, send)
            elif not replaced:  # (the plain-text body of a replaced 413 is dropped)
                await send(message)

        await self._app(scope, receive, sending)


def _too_large() -> JSONResponse:
    refusal = InvalidInputError(
        f"the request body is over the {MAX_BODY_BYTES // (1 << 20)} MiB limit of /mcp",
        hint="Send smaller arguments (a shorter text, fewer keys per call); the limit is "
        f"{MAX_BODY_BYTES} bytes.",
    )
    return JSONResponse(refusal.to_dict(), status_code=413)


class _Unauthorized(Exception):
    """A route that needs a token got none, or a wrong one (``reason``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _token_required(tokens: TokenBook) -> Callable[[Request], None]:
    def check(request: Request) -> None:
        token = _bearer(request.scope)
        if not token or tokens.lookup(token) is None:
            raise _Unauthorized("invalid_token" if token else "missing_token")

    return check


async def _refused(_: Request, exc: Exception) -> Response:
    return _unauthorized_response(exc.reason if isinstance(exc, _Unauthorized) else "")


def _bearer(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""


async def _unauthorized(scope: Scope, receive: Receive, send: Send) -> None:
    reason = "invalid_token" if _bearer(scope) else "missing_token"
    await _unauthorized_response(reason)(scope, receive, send)


def _unauthorized_response(reason: str) -> JSONResponse:
    return JSONResponse(
        {
            "code": "auth.unauthorized",
            "message": "a valid bearer token is required"
            if reason == "missing_token"
            else "the bearer token is not valid",
            "hint": "Send 'Authorization: Bearer <token>' with a token from the server's "
            "auth tokens file.",
        },
        status_code=401,
        headers={"WWW-Authenticate": f'Bearer realm="repocontext", error="{reason}"'},
    )


def _access_info(scope: Scope) -> dict[str, Any]:
    state = scope.setdefault("state", {})
    info: dict[str, Any] = state.setdefault("repocontext_access", {})
    return info


class _AccessLog:
    """Count every request in the metrics and log it as one JSON line."""

    def __init__(self, app: ASGIApp, *, telemetry: Telemetry, enabled: bool) -> None:
        self._app = app
        self._telemetry = telemetry
        self._enabled = enabled

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = time.perf_counter()
        info = _access_info(scope)
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                worker = (b"x-repocontext-worker", str(os.getpid()).encode())
                message["headers"] = [*message.get("headers", ()), worker]
            await send(message)

        try:
            await self._app(scope, receive, sending)
        finally:
            path = str(scope.get("path", ""))
            self._telemetry.observe_http(_route_family(path), status)
            if self._enabled:
                client = scope.get("client")
                fields = {
                    "at": iso_utc(time.time()),
                    "method": scope.get("method"),
                    "path": path,
                    "status": status,
                    "ms": round((time.perf_counter() - started) * 1000, 1),
                    "client": client[0] if client else None,
                    "grant": info.get("grant"),
                }
                message = f"{fields['method']} {path} {status}"
                _access_log.info(message, extra={"fields": fields})


def _route_family(path: str) -> str:
    return next((route for route in _ROUTES if path.startswith(route)), "other")


async def _live() -> dict[str, str]:
    return {"status": "live"}


def _stats_route(workspace: Workspace) -> Callable[..., dict[str, JsonValue]]:
    def stats(windowSeconds: float | None = None) -> dict[str, JsonValue]:
        """The figures of ``repocontext_stats`` for this process (its wire form)."""
        return StatsResultWire.of(workspace.usage(windowSeconds)).wire()

    return stats


def _metrics_route(telemetry: Telemetry) -> Callable[[], Response]:
    def metrics() -> Response:
        """Prometheus metrics of this process (text exposition format)."""
        return Response(telemetry.render(), media_type=CONTENT_TYPE)

    return metrics


def _ready_route(workspace: Workspace) -> Callable[[], JSONResponse]:
    def ready() -> JSONResponse:
        """Answer 200 when something can serve, 503 otherwise (see the module docstring)."""
        probe = workspace.store_health()
        store: dict[str, JsonValue] = {
            "engine": probe.engine,
            "reachable": probe.reachable,
            "latencyMs": probe.latency_ms,
        }
        try:
            if not probe.reachable:  # answer at once; reads would retry for seconds first
                raise StoreUnavailableError(f"the store does not answer: {probe.error}")
            report = workspace.health()
            repos = workspace.list_repos()
        except RepoContextError as exc:  # an HTTP edge: the probe reports, it never raises
            return JSONResponse(
                {"status": "unavailable", **exc.to_dict(), "store": store}, status_code=503
            )
        servable = not repos or any(repo.indexed_at for repo in repos)
        return JSONResponse(
            {
                "status": "ready" if servable else "building",
                "retrievalReady": report.retrieval_ready,
                "retrievalPhase": report.retrieval_phase,
                "repositories": report.repositories,
                "servingRepositories": sum(1 for repo in repos if repo.indexed_at),
                "store": store,
            },
            status_code=200 if servable else 503,
        )

    return ready
