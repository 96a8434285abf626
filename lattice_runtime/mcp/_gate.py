"""The MCP edge of Lattice: tool specs and the error mapping every tool goes through.

A tool is a thin function (check the arguments -> one call on the task's run -> a wire
model). :func:`map_errors` turns a :class:`~lattice_runtime.errors.LatticeError` into an MCP
tool error result (``isError`` true) whose only text is the JSON object ``{"code", "message",
"hint"}``, so the agent reads a stable code and what to do next. Results are returned, not
raised: the SDK prefixes a raised ``ToolError``'s text with prose, which would break the JSON.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, ParamSpec, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from lattice_runtime.errors import LatticeError
from repocontext.wire import WireModel

__all__ = [
    "INPUT_INVALID",
    "READ_ONLY",
    "ToolSpec",
    "compact",
    "error_result",
    "map_errors",
]

P = ParamSpec("P")
R = TypeVar("R")

_log = logging.getLogger(__name__)

READ_ONLY: Final = ToolAnnotations(read_only_hint=True, open_world_hint=False)
"""Annotations of the tools that change nothing (status, stats)."""

INPUT_INVALID: Final = "lattice.input_invalid"
"""The code of arguments that do not fit a tool's input schema (or an unknown tool)."""
INTERNAL_CODE: Final = "lattice.internal_error"
MAX_ERROR_CHARS: Final = 1000
"""No error message or hint sent to a client is longer (it could otherwise echo input)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as the server registers it.

    Attributes:
        name: The tool name (``lattice_*``).
        fn: The tool function; its docstring is the agent's contract.
        title: Short human title.
        annotations: MCP tool annotations (read-only, destructive...).
    """

    name: str
    fn: Callable[..., BaseModel | CallToolResult]
    title: str
    annotations: ToolAnnotations


def error_result(code: str, message: str, hint: str) -> CallToolResult:
    """Return a tool error result (``isError`` true) carrying ``{"code", "message", "hint"}``."""
    text = json.dumps({"code": code, "message": _cut(message), "hint": _cut(hint)})
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def compact(result: R) -> R | CallToolResult:
    """Return a tool's wire model as a result whose text block is its compact JSON.

    The structured content is the same object; anything else passes through.
    """
    if not isinstance(result, WireModel):
        return result
    structured = result.wire()
    text = json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def map_errors(fn: Callable[P, R]) -> Callable[P, R | CallToolResult]:
    """Wrap a tool so that failures become tool errors with code, message and hint.

    A :class:`LatticeError` keeps its code; anything unexpected becomes
    ``lattice.internal_error`` (logged with its traceback). Protocol errors and the SDK's own
    tool errors pass through.
    """

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R | CallToolResult:
        try:
            return compact(fn(*args, **kwargs))
        except (ToolError, MCPError):
            raise
        except LatticeError as exc:
            _log.info("tool %s refused: %s (%s)", fn.__name__, exc.code, exc.message)
            return error_result(exc.code, exc.message, exc.hint)
        except Exception as exc:  # the MCP edge: nothing unexpected reaches the agent raw
            _log.error("tool %s failed unexpectedly", fn.__name__, exc_info=exc)
            return error_result(
                INTERNAL_CODE,
                f"{type(exc).__name__} while running {fn.__name__}",
                "Call lattice_status for the run's state; report it with the server log.",
            )

    return wrapper
