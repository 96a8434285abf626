"""Helpers of the lattice MCP tests: results through the real client, the fixture's patch."""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent

from tests.lattice_runtime.fixture_repos import fixture_script

PLACEHOLDER = "@path:"


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful call (its text is the same JSON, compact)."""
    assert not result.is_error, result.content
    content = result.structured_content
    assert isinstance(content, dict)
    [block] = result.content
    assert isinstance(block, TextContent)
    assert json.loads(block.text) == content
    return content


def refused(result: CallToolResult) -> dict[str, str]:
    """The ``{code, message, hint}`` body of a tool error."""
    assert result.is_error
    [block] = result.content
    assert isinstance(block, TextContent)
    body = json.loads(block.text)
    assert set(body) == {"code", "message", "hint"}
    return dict(body)


def handle_for(pages: list[dict[str, Any]], path: str) -> str:
    """The editable handle of ``path`` among begin's pages."""
    [handle] = [p["editHandle"] for p in pages if p["path"] == path and p["permissions"]]
    return str(handle)


def fixture_patch(pages: list[dict[str, Any]]) -> dict[str, Any]:
    """The reset-token-py fixture's patch, its ``@path:`` placeholders mapped to handles."""

    def resolve(value: Any) -> Any:
        if isinstance(value, str) and value.startswith(PLACEHOLDER):
            return handle_for(pages, value[len(PLACEHOLDER) :])
        if isinstance(value, list):
            return [resolve(item) for item in value]
        if isinstance(value, dict):
            return {key: resolve(item) for key, item in value.items()}
        return value

    [response] = fixture_script()
    resolved = resolve(response)
    assert isinstance(resolved, dict)
    return resolved
