"""One MCP server per grant: the grant decides which tools are listed and which calls pass.

:func:`repocontext.mcp.build_server` registers only the tools a grant may use, so
``tools/list`` never shows a reader a write tool. :class:`GrantedServer` is the second gate,
on every ``tools/call``:

1. a catalogue tool this grant was not given (a guessed name) -> ``auth.tool_forbidden``; a
   name that is no tool at all -> ``input.invalid`` (the SDK answers it in prose);
2. a malformed ``repoId``, ``key`` or registration path -> the code of its argument kind
   (:mod:`repocontext.arguments`: ``input.invalid``, ``store.invalid_key``), whatever the
   grant; then a ``repoId`` or ``key`` argument (or, for ``add_repo`` / ``bootstrap``, the id
   the path would register under) outside the grant's repositories ->
   ``auth.repo_forbidden``; a grant
   scoped to some repositories registers a directory only under that directory's own name,
   so it cannot point a granted id at another repository;
3. otherwise the tool runs with the grant as :func:`repocontext.auth.current_grant`, so tools
   that list across repositories filter by it. Arguments that do not fit the tool's input
   schema (a missing ``path``, a number for a string, a number out of its range, a string
   over its ``maxLength``) are refused with ``input.invalid`` naming each field and its
   bounds, like every other tool error (the SDK's own text is a pydantic dump); a parameter
   kind's validator (:mod:`repocontext.mcp._params`) keeps its own code.

Every call is observed in :class:`repocontext.telemetry.Telemetry` (tool, outcome, latency).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult
from mcp.types import Tool as MCPTool
from pydantic import ValidationError

from repocontext.arguments import quoted, record_key, repo_path
from repocontext.arguments import repo_id as checked_repo_id
from repocontext.auth import Grant, check_key, check_repo, granted
from repocontext.errors import (
    AuthError,
    InvalidInputError,
    RepoContextError,
    RepoForbiddenError,
    ToolForbiddenError,
)
from repocontext.index import resolve_path
from repocontext.mcp._gate import error_result
from repocontext.telemetry import Telemetry

__all__ = ["GrantedServer"]

_REGISTRATIONS = {"repocontext_add_repo": "path", "repocontext_bootstrap": "repoRoot"}
"""The tools that register a directory, and the argument naming it."""


class GrantedServer(MCPServer):
    """An MCP server bound to one grant (see the module docstring)."""

    def __init__(
        self,
        *args: Any,
        grant: Grant,
        withheld: Mapping[str, str] | None = None,
        telemetry: Telemetry | None = None,
        workspace_root: Path | None = None,
        **kwargs: Any,
    ) -> None:
        """Build the server.

        Args:
            *args: Passed to :class:`MCPServer`.
            grant: The grant every call of this server runs under.
            withheld: Catalogue tools this grant is not given (refused by name), each with
                the hint that says why.
            telemetry: Where calls are counted, if anywhere.
            workspace_root: What a relative path argument is relative to (as the workspace
                resolves it); default: the process's directory.
            **kwargs: Passed to :class:`MCPServer`.
        """
        super().__init__(*args, **kwargs)
        self.grant = grant
        self.withheld: Mapping[str, str] = withheld or {}
        self.telemetry = telemetry
        self.workspace_root = workspace_root
        self._known: set[str] = set(self.withheld)

    def add_tool(self, fn: Any, *args: Any, **kwargs: Any) -> None:
        """Register a tool (and remember its name for the metrics' label set)."""
        super().add_tool(fn, *args, **kwargs)
        self._known.add(kwargs.get("name") or fn.__name__)

    async def list_tools(self) -> list[MCPTool]:
        """List the tools, their schemas without the ``title`` keys pydantic derives.

        A derived title only repeats the field name (``"repoId"`` -> ``"Repoid"``): about a
        fifth of ``tools/list``, read by every client on connect.
        """
        return [
            tool.model_copy(
                update={
                    "input_schema": untitled(tool.input_schema),
                    "output_schema": untitled(tool.output_schema),
                }
            )
            for tool in await super().list_tools()
        ]

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        context: Context[Any, Any] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        """Run a tool under this server's grant, or refuse it (see the module docstring)."""
        started = time.perf_counter()
        outcome = "error"
        try:
            refusal = self._refusal(name, arguments)
            if refusal is not None:  # (an unknown name is an error, not a refusal)
                outcome = "forbidden" if isinstance(refusal, AuthError) else "error"
                return error_result(refusal.code, refusal.message, refusal.hint)
            with granted(self.grant):
                try:
                    result = await super().call_tool(name, arguments, context)
                except ToolError as exc:  # (not a failed output conversion: the server's fault)
                    refused = self._refused_arguments(name, exc)
                    if refused is None:
                        raise
                    return refused
            if not (isinstance(result, CallToolResult) and result.is_error):
                outcome = "ok"
            return result
        finally:
            if self.telemetry is not None:
                label = name if name in self._known else "unknown"
                self.telemetry.observe_tool(label, time.perf_counter() - started, outcome)

    def _refusal(self, name: str, arguments: dict[str, Any]) -> RepoContextError | None:
        if name in self.withheld:
            return ToolForbiddenError(
                f"tool {name} is not offered to this caller", hint=self.withheld[name]
            )
        if name not in self._known:
            return InvalidInputError(
                f"there is no tool named {name[:80]!r}",
                hint="Call one of the tools tools/list shows (all are named repocontext_*).",
            )
        try:
            # The argument kinds' own checks first, so a malformed or huge id or key gets the
            # same code from every tool and is never echoed whole by a grant refusal.
            repo_id = arguments.get("repoId")
            if isinstance(repo_id, str):
                check_repo(checked_repo_id(repo_id), self.grant)
            key = arguments.get("key")
            if isinstance(key, str):
                record_key(key)
                check_key(key, self.grant)
            root_argument = _REGISTRATIONS.get(name)
            path = arguments.get(root_argument) if root_argument else None
            if self.grant.repos is not None and isinstance(path, str) and path:
                # A grant scoped to some repositories registers a directory only under its
                # own name (the default id), and only a granted one: an explicit id must not
                # point a granted name at another repository (or the whole workspace).
                given = Path(repo_path(path)).expanduser()
                if self.workspace_root is not None and not given.is_absolute():
                    given = self.workspace_root / given
                own = resolve_path(given).name
                check_repo(own, self.grant)
                if isinstance(repo_id, str) and repo_id != own:
                    raise RepoForbiddenError(
                        f"this token may register {quoted(path)} only under its own name "
                        f"{quoted(own)}",
                        hint="Omit repoId, or ask for a token whose grant covers all "
                        "repositories to register a directory under another id.",
                    )
        except RepoContextError as exc:
            return exc
        return None

    def _refused_arguments(self, name: str, exc: ToolError) -> CallToolResult | None:
        """The coded error of arguments the tool's parameter types refused, or None.

        A schema violation is ``input.invalid`` naming each field (and its range); a parameter
        kind's validator (:mod:`repocontext.mcp._params`) keeps its own code.
        """
        cause = exc.__cause__
        if isinstance(exc, UnexpectedToolError):
            if isinstance(cause, RepoContextError):
                return error_result(cause.code, cause.message, cause.hint)
            return None
        if not isinstance(cause, ValidationError):
            return None
        tool = self._tool_manager.get_tool(name)
        schema = tool.parameters.get("properties", {}) if tool is not None else {}
        return _invalid_arguments(name, cause, schema)


def _invalid_arguments(
    tool: str, error: ValidationError, properties: Mapping[str, Any]
) -> CallToolResult:
    """``input.invalid`` naming each argument that does not fit the tool's input schema."""
    problems = [
        f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {item['msg']}"
        + _bounds(properties.get(str(item["loc"][0])) if item["loc"] else None)
        for item in error.errors()[:10]
    ]
    return error_result(
        "input.invalid",
        f"{tool} got arguments that do not fit its input schema: {'; '.join(problems)}",
        "Call again with the arguments its input schema names (tools/list), camelCase, "
        "each of its type.",
    )


def _bounds(schema: object) -> str:
    """`` (range: >= 1, <= 100)`` or `` (at most 128 characters)`` from a parameter's schema."""
    if not isinstance(schema, dict):
        return ""
    branch = next((b for b in schema.get("anyOf", [schema]) if b.get("type") != "null"), schema)
    limits = [
        f"{sign} {branch[word]}"
        for word, sign in _RANGE_WORDS
        if isinstance(branch, dict) and word in branch
    ]
    if limits:
        return f" (range: {', '.join(limits)})"
    for word, what in (("maxLength", "characters"), ("maxItems", "items")):
        if word in branch:
            return f" (at most {branch[word]} {what})"
    return ""


_RANGE_WORDS = (
    ("minimum", ">="),
    ("exclusiveMinimum", ">"),
    ("maximum", "<="),
    ("exclusiveMaximum", "<"),
)


def untitled(schema: Any) -> Any:
    """Return a JSON schema without its ``title`` annotations (property names are kept)."""
    if isinstance(schema, list):
        return [untitled(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        word: (
            {name: untitled(sub) for name, sub in value.items()}
            if word in ("properties", "$defs") and isinstance(value, dict)
            else untitled(value)
        )
        for word, value in schema.items()
        if not (word == "title" and isinstance(value, str))
    }
