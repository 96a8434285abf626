"""The MCP edge: tool specs, annotations and the error mapping every tool goes through.

A tool is a thin function (parse -> workspace call -> typed result). :func:`map_errors` turns
a :class:`~repocontext.errors.RepoContextError` into an MCP tool error result (``isError``
true) whose only text is the JSON object ``{"code", "message", "hint"}``, so the model reads a
stable code and what to do next. The result is returned rather than raised because the SDK
prefixes the text of a raised ``ToolError`` with prose, which would break the JSON.

The same wrapper is where grants fail closed: a tool reached without an established grant
(:func:`repocontext.auth.granted`; :class:`~repocontext.mcp.grants.GrantedServer` sets one on
every call) does not run and answers ``auth.no_grant``.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, Literal, ParamSpec, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from repocontext.auth import current_grant
from repocontext.errors import RepoContextError
from repocontext.wire import WireModel

__all__ = [
    "READ_ONLY",
    "ToolSpec",
    "WireModel",
    "compact",
    "error_result",
    "error_text",
    "map_errors",
    "map_errors_async",
]

P = ParamSpec("P")
R = TypeVar("R")

_log = logging.getLogger(__name__)

READ_ONLY: Final = ToolAnnotations(read_only_hint=True, open_world_hint=False)
"""Annotations of every read tool."""

INTERNAL_CODE: Final = "internal.error"
MAX_ERROR_CHARS: Final = 1000
"""No error message or hint sent to a client is longer (it could otherwise echo input)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as the server registers it.

    Attributes:
        name: The tool name (``repocontext_*``).
        fn: The tool function; its docstring is the agent's contract.
        title: Short human title.
        annotations: MCP tool annotations (read-only, destructive...).
        writes: True for write tools, registered only when writes are enabled.
        mode: Which server mode offers it: ``any``, ``single_repo`` (``serve --repo``) or
            ``workspace`` (``serve --workspace-root``); see :mod:`repocontext.mcp.server`.
    """

    name: str
    fn: Callable[..., BaseModel | CallToolResult | Awaitable[BaseModel | CallToolResult]]
    title: str
    annotations: ToolAnnotations
    writes: bool = False
    mode: Literal["any", "single_repo", "workspace"] = "any"


def error_text(code: str, message: str, hint: str) -> str:
    """Return the JSON text of a tool error (a message or hint cut at ``MAX_ERROR_CHARS``).

    The cut is a last guard: messages quote input through :func:`repocontext.arguments.quoted`.
    """
    return json.dumps({"code": code, "message": _cut(message), "hint": _cut(hint)})


def _cut(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def error_result(code: str, message: str, hint: str) -> CallToolResult:
    """Return a tool error result (``isError`` true) carrying the JSON error text."""
    text = error_text(code, message, hint)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def compact(result: R) -> R | CallToolResult:
    """Return a tool's result model as a result whose text block is compact JSON.

    The SDK renders a returned model's text block as indented JSON (about 1.4x the compact
    size); here the text is the structured content itself, compact, as ``context`` sends it.
    Anything else (an already built result) passes through.
    """
    if not isinstance(result, WireModel):
        return result
    structured = result.wire()
    text = json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def map_errors(fn: Callable[P, R]) -> Callable[P, R | CallToolResult]:
    """Wrap a synchronous tool so that failures become tool errors with code, message, hint.

    Our own errors keep their code. Anything unexpected becomes ``internal.error`` (logged
    with its traceback); protocol errors and the SDK's own tool errors pass through. Without
    an established grant the tool does not run (``auth.no_grant``).
    """

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R | CallToolResult:
        try:
            current_grant()  # fails closed: no grant, no call
            return compact(fn(*args, **kwargs))
        except (ToolError, MCPError):
            raise
        except Exception as exc:
            return _failed(fn.__name__, exc)

    return wrapper


def map_errors_async(
    fn: Callable[P, Awaitable[R]],
) -> Callable[P, Awaitable[R | CallToolResult]]:
    """:func:`map_errors` for an async tool (the SDK awaits it on the event loop).

    Cancellation is no error: it propagates, so the SDK drops the cancelled request.
    """

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R | CallToolResult:
        try:
            current_grant()  # fails closed: no grant, no call
            return compact(await fn(*args, **kwargs))
        except (ToolError, MCPError):
            raise
        except Exception as exc:
            return _failed(fn.__name__, exc)

    return wrapper


def _failed(tool: str, exc: Exception) -> CallToolResult:
    if isinstance(exc, RepoContextError):
        _log.info("tool %s refused: %s (%s)", tool, exc.code, exc.message)
        return error_result(exc.code, exc.message, exc.hint)
    # The MCP edge: nothing unexpected reaches the model raw.
    _log.error("tool %s failed unexpectedly", tool, exc_info=exc)
    return error_result(
        INTERNAL_CODE,
        f"{type(exc).__name__} while running {tool}",
        "Retry once; if it fails again, report it with the server log.",
    )
