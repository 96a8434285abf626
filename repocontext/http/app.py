"""The FastAPI app: liveness, readiness, call stats, Prometheus metrics and MCP at ``/mcp``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Final

from fastapi import FastAPI
from fastapi.responses import JSONResponse, PlainTextResponse
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from repocontext.errors import RepoContextError
from repocontext.workspace import Workspace

__all__ = ["LOCAL_HOSTS", "create_app"]

LOCAL_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
"""Host headers the MCP endpoint accepts by default (DNS-rebinding protection)."""


def create_app(
    workspace: Workspace,
    mcp_server: MCPServer,
    *,
    allowed_hosts: Sequence[str] = LOCAL_HOSTS,
) -> FastAPI:
    """Return the HTTP app serving health probes and MCP at ``/mcp``.

    Args:
        workspace: The open workspace the probes read.
        mcp_server: The MCP server to mount (see :func:`repocontext.mcp.build_server`).
        allowed_hosts: ``Host`` header patterns (``host:port``, ``*`` for any port) the MCP
            endpoint accepts; others get 421.
    """
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(allowed_hosts),
        allowed_origins=[f"http://{host}" for host in allowed_hosts],
    )
    mcp_app = mcp_server.streamable_http_app(transport_security=security)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Starlette does not run a mounted app's lifespan, so the session manager is run here.
        async with mcp_server.session_manager.run():
            yield

    app = FastAPI(title="repocontext", lifespan=lifespan)
    app.add_api_route("/health/live", _live, methods=["GET"])
    app.add_api_route("/health/ready", _ready_route(workspace), methods=["GET"])
    app.add_api_route("/stats", _stats_route(workspace), methods=["GET"])
    app.add_api_route("/metrics", _metrics_route(workspace), methods=["GET"])
    app.mount("/", mcp_app)
    return app


async def _live() -> dict[str, str]:
    return {"status": "live"}


def _stats_route(workspace: Workspace) -> Callable[..., dict[str, float]]:
    def stats(windowSeconds: float | None = None) -> dict[str, float]:
        """The figures of ``repocontext_stats`` for this process."""
        window = workspace.call_stats.window(windowSeconds)
        return {
            "calls": window.calls,
            "responseTokens": window.response_tokens,
            "readsReplacedTokens": window.reads_replaced_tokens,
            "netSavedTokens": window.net_saved_tokens,
            "windowSeconds": window.window_seconds,
        }

    return stats


def _metrics_route(workspace: Workspace) -> Callable[[], PlainTextResponse]:
    def metrics() -> PlainTextResponse:
        """Totals since start as Prometheus counters (text exposition format)."""
        stats = workspace.call_stats
        lines = []
        for name, help_text, value in (
            ("repocontext_context_calls_total", "Context bundles served.", stats.total_calls),
            (
                "repocontext_response_tokens_total",
                "Tokens of the context bundles sent.",
                stats.total_response_tokens,
            ),
            (
                "repocontext_reads_replaced_tokens_total",
                "Tokens reading the delivered files whole would have cost.",
                stats.total_reads_replaced_tokens,
            ),
        ):
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} counter", f"{name} {value}"]
        return PlainTextResponse("\n".join(lines) + "\n", media_type="text/plain; version=0.0.4")

    return metrics


def _ready_route(workspace: Workspace) -> Callable[[], JSONResponse]:
    def ready() -> JSONResponse:
        """Answer 200 when the store answers a read, 503 otherwise."""
        try:
            report = workspace.health()
        except RepoContextError as exc:  # an HTTP edge: the probe reports, it never raises
            return JSONResponse({"status": "unavailable", **exc.to_dict()}, status_code=503)
        return JSONResponse(
            {
                "status": "ready",
                "retrievalReady": report.retrieval_ready,
                "retrievalPhase": report.retrieval_phase,
                "repositories": report.repositories,
            }
        )

    return ready
