"""The wire form of the typed messages: the inverse of :func:`~.parse.parse_response`.

Deterministic workers (the mock worker, tests) build typed messages and send this form, so
what they send always passes the same validation a model's answer does.
"""

from __future__ import annotations

import json

from lattice_runtime.protocol.messages import (
    Change,
    ContextRequest,
    ContextRequestItem,
    CreateFile,
    DeleteFile,
    ReplaceFile,
    ReplaceText,
    WorkerResponse,
)

__all__ = ["encode_response", "response_to_wire"]


def _request_to_wire(item: ContextRequestItem) -> dict[str, object]:
    wire: dict[str, object] = {"reason": item.reason}
    if item.path_hint is not None:
        wire["pathHint"] = item.path_hint
    if item.symbol is not None:
        wire["symbol"] = item.symbol
    return wire


def _change_to_wire(change: Change) -> dict[str, object]:
    if isinstance(change, ReplaceText):
        return {
            "editHandle": change.edit_handle,
            "operation": "replace_text",
            "replacements": [
                {"oldContent": r.old_content, "newContent": r.new_content}
                for r in change.replacements
            ],
        }
    if isinstance(change, ReplaceFile):
        return {
            "editHandle": change.edit_handle,
            "operation": "replace_file",
            "replacementContent": change.replacement_content,
        }
    if isinstance(change, DeleteFile):
        return {"editHandle": change.edit_handle, "operation": "delete_file"}
    assert isinstance(change, CreateFile)  # the Change union has four members
    return {"operation": "create_file", "path": change.path, "content": change.content}


def response_to_wire(response: WorkerResponse) -> dict[str, object]:
    """The protocol version 5 JSON object for a typed message.

    Args:
        response: A context request or a patch proposal.

    Returns:
        The camelCase object :func:`~.parse.parse_response` reads back to an equal message.
    """
    if isinstance(response, ContextRequest):
        return {
            "kind": "context_request",
            "requests": [_request_to_wire(item) for item in response.requests],
        }
    return {
        "kind": "patch",
        "patch": {
            "summary": response.summary,
            "changes": [_change_to_wire(change) for change in response.changes],
            "verificationCommands": list(response.verification_commands),
        },
    }


def encode_response(response: WorkerResponse) -> str:
    """:func:`response_to_wire` as compact JSON text (the raw answer of a deterministic worker).

    Args:
        response: A context request or a patch proposal.

    Returns:
        One JSON object, keys in a fixed order.
    """
    return json.dumps(response_to_wire(response), ensure_ascii=False, separators=(",", ":"))
