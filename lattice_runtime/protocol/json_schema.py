"""The protocol-v5 answer as a JSON Schema (draft 2020-12), for whoever writes answers by hand.

A manual handoff's request carries it, so an operator or a tool can check an answer before
``lattice handoff validate`` does. It states the two shapes exactly as :mod:`.parse` accepts
them (optional keys optional, no extra keys, handles ``E<n>``). It documents; it does not
decide: the runtime still parses every answer with :func:`~.parse.parse_response`. (Provider
workers send a stricter variant their APIs accept, wrapped in an object:
``lattice_runtime.workers.providers.schema``.)
"""

from __future__ import annotations

from typing import Final

__all__ = ["response_schema"]

_TEXT: Final = {"type": "string", "minLength": 1}
_HANDLE: Final = {"type": "string", "pattern": "^E[1-9][0-9]*$"}


def _object(
    required: dict[str, object], optional: dict[str, object] | None = None
) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": list(required),
        "additionalProperties": False,
    }


def _change(operation: str, fields: dict[str, object]) -> dict[str, object]:
    return _object({**fields, "operation": {"const": operation}})


def response_schema() -> dict[str, object]:
    """The JSON Schema of one protocol-v5 answer: a context request or a patch."""
    request_item = _object({"reason": _TEXT}, {"pathHint": _TEXT, "symbol": _TEXT})
    request_item["anyOf"] = [{"required": ["pathHint"]}, {"required": ["symbol"]}]
    replacement = _object({"oldContent": _TEXT, "newContent": {"type": "string"}})
    changes = [
        _change(
            "replace_text",
            {
                "editHandle": _HANDLE,
                "replacements": {
                    "type": "array",
                    "items": replacement,
                    "minItems": 1,
                    "maxItems": 200,
                },
            },
        ),
        _change("replace_file", {"editHandle": _HANDLE, "replacementContent": {"type": "string"}}),
        _change("delete_file", {"editHandle": _HANDLE}),
        _change("create_file", {"path": _TEXT, "content": {"type": "string"}}),
    ]
    context_request = _object(
        {
            "kind": {"const": "context_request"},
            "requests": {"type": "array", "items": request_item, "minItems": 1, "maxItems": 200},
        }
    )
    patch = _object(
        {
            "kind": {"const": "patch"},
            "patch": _object(
                {
                    "summary": {"type": "string"},
                    "changes": {
                        "type": "array",
                        "items": {"oneOf": changes},
                        "minItems": 1,
                        "maxItems": 200,
                    },
                    "verificationCommands": {"type": "array", "items": _TEXT, "maxItems": 200},
                }
            ),
        }
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Lattice worker answer (protocol version 5)",
        "oneOf": [context_request, patch],
    }
