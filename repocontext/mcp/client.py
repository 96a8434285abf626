"""A client-side helper: connect the real MCP client to a repocontext server over HTTP.

For tests, benchmarks and second consumers (the Lattice runtime) that talk to a running
``repocontext serve --transport http``, with or without a bearer token.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

__all__ = ["http_client"]


@asynccontextmanager
async def http_client(url: str, token: str | None = None) -> AsyncIterator[Any]:
    """Yield a connected MCP client (``mcp.Client``) for a streamable HTTP ``url``.

    Args:
        url: The MCP endpoint (``.../mcp``).
        token: Sent as ``Authorization: Bearer <token>`` when given.
    """
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client
