"""MCP sessions across worker processes (``serve --workers N``).

A streamable HTTP MCP session lives in the memory of the process that opened it, but the kernel
hands each TCP connection to any worker: a client's second connection (its event stream, or a
request sent while another is in flight) may reach a worker that never saw the session, which
the SDK answers with 404 and the client cannot recover from. :class:`SessionFallback` serves
such a request without the session instead: a POST (a tool call, a notification) by a
stateless server of the same tools and grant, whose answer streams back on the request itself;
a GET (the optional server-to-client event stream) or DELETE gets 405, which the protocol
allows and clients accept. What a session adds (a server-to-client request, the cancellation
of a call made through another worker) then works only on the connection that opened it.
"""

from __future__ import annotations

from typing import Final

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["SessionFallback"]

_SESSION_HEADER: Final = b"mcp-session-id"


class SessionFallback:
    """Route a request of a session this process does not hold to a stateless server."""

    def __init__(
        self, stateful: ASGIApp, sessions: StreamableHTTPSessionManager, stateless: ASGIApp
    ) -> None:
        """Serve through ``stateful`` the sessions ``sessions`` holds, the rest ``stateless``."""
        self._stateful = stateful
        self._sessions = sessions
        self._stateless = stateless

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI request."""
        session = _session_of(scope) if scope["type"] == "http" else None
        if session is None or self._holds(session):
            await self._stateful(scope, receive, send)
        elif scope.get("method") == "POST":
            await self._stateless(scope, receive, send)
        else:
            allow = {"Allow": "POST"}
            await Response(status_code=405, headers=allow)(scope, receive, send)

    def _holds(self, session: str) -> bool:
        # (the SDK keeps its sessions in a private map: without it, behave as one process)
        held = getattr(self._sessions, "_server_instances", None)
        return held is None or session in held


def _session_of(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == _SESSION_HEADER:
            return bytes(value).decode("latin-1")
    return None
