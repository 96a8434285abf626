"""The response union as a JSON schema, for providers that constrain output to a schema.

Provider schema modes (OpenAI ``strict`` json_schema, Anthropic tool input) want an *object*
at the root and, in strict mode, every property required. So the schema wraps the protocol's
two response shapes in ``{"response": <context_request | patch>}`` and makes the optional
``pathHint`` and ``symbol`` nullable. :func:`unwrap_answer` undoes both before the runtime's
one parser (:func:`lattice_runtime.protocol.parse_response`) sees the answer: a provider
answer is never trusted for being schema-shaped, it is parsed like any other.
"""

from __future__ import annotations

import json
from typing import Final

__all__ = ["RESPONSE_SCHEMA", "RESPONSE_SCHEMA_NAME", "unwrap_answer", "unwrap_text"]

RESPONSE_SCHEMA_NAME: Final = "lattice_response"
"""The name of the schema (OpenAI) and of the one tool (Anthropic)."""

_NULLABLE: Final = ("pathHint", "symbol")


def _object(properties: dict[str, object]) -> dict[str, object]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _string() -> dict[str, object]:
    return {"type": "string"}


def _const(value: str) -> dict[str, object]:
    return {"type": "string", "enum": [value]}


def _array(items: dict[str, object]) -> dict[str, object]:
    return {"type": "array", "items": items}


_REQUEST_ITEM: Final = _object(
    {
        "reason": _string(),
        "pathHint": {"type": ["string", "null"]},
        "symbol": {"type": ["string", "null"]},
    }
)
_CONTEXT_REQUEST: Final = _object(
    {"kind": _const("context_request"), "requests": _array(_REQUEST_ITEM)}
)
_CHANGES: Final = (
    _object(
        {
            "editHandle": _string(),
            "operation": _const("replace_text"),
            "replacements": _array(_object({"oldContent": _string(), "newContent": _string()})),
        }
    ),
    _object(
        {
            "editHandle": _string(),
            "operation": _const("replace_file"),
            "replacementContent": _string(),
        }
    ),
    _object({"editHandle": _string(), "operation": _const("delete_file")}),
    _object({"operation": _const("create_file"), "path": _string(), "content": _string()}),
)
_PATCH: Final = _object(
    {
        "kind": _const("patch"),
        "patch": _object(
            {
                "summary": _string(),
                "changes": _array({"anyOf": list(_CHANGES)}),
                "verificationCommands": _array(_string()),
            }
        ),
    }
)

RESPONSE_SCHEMA: Final = _object({"response": {"anyOf": [_CONTEXT_REQUEST, _PATCH]}})
"""``{"response": <context_request | patch>}``, strict: every key required, no extra key."""


def unwrap_answer(value: object) -> str:
    """The protocol response inside a schema-shaped answer, as the JSON text to parse.

    Args:
        value: The decoded answer (``{"response": {...}}``).

    Returns:
        The inner response as compact JSON, with null ``pathHint``/``symbol`` left out;
        anything not wrapped as expected is returned re-encoded unchanged, for the runtime's
        parser to refuse.
    """
    if not (isinstance(value, dict) and list(value) == ["response"]):
        return json.dumps(value, ensure_ascii=False)
    inner = value["response"]
    if isinstance(inner, dict) and isinstance(inner.get("requests"), list):
        inner = {**inner, "requests": [_drop_nulls(item) for item in inner["requests"]]}
    return json.dumps(inner, ensure_ascii=False)


def unwrap_text(text: str) -> str:
    """:func:`unwrap_answer` for an answer that arrived as JSON text.

    Args:
        text: The provider's text answer.

    Returns:
        The unwrapped response, or ``text`` unchanged when it is not JSON.
    """
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return unwrap_answer(value)


def _drop_nulls(item: object) -> object:
    if not isinstance(item, dict):
        return item
    return {k: v for k, v in item.items() if not (k in _NULLABLE and v is None)}
