"""Validation of a decoded worker response into the typed messages, one reader per shape.

A response is exactly one of ``{"kind": "context_request", "requests": [...]}`` and
``{"kind": "patch", "patch": {...}}``. Objects are strict (no extra key, anywhere); the seed's
``"schemaVersion": 1`` (on the message, the patch object or both) and ``"protocolVersion": 5``
(on the message) are the only version markers accepted, and any other value fails closed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from lattice_runtime.protocol._checks import array, fail, strict_object, string, text
from lattice_runtime.protocol.diagnostics import Shape
from lattice_runtime.protocol.messages import (
    PROTOCOL_VERSION,
    Change,
    ContextRequest,
    ContextRequestItem,
    CreateFile,
    DeleteFile,
    PatchProposal,
    ReplaceFile,
    Replacement,
    ReplaceText,
    WorkerResponse,
)

__all__ = ["SEED_SCHEMA_VERSION", "Validated", "detect_shape", "validate_response"]

SEED_SCHEMA_VERSION: Final = 1
"""The only ``schemaVersion`` the seed's form may carry."""

_HANDLE: Final = re.compile(r"E[1-9][0-9]*")
_VERSION_KEYS: Final = ("schemaVersion", "protocolVersion")


@dataclass(frozen=True, slots=True)
class Validated:
    """A valid response and the version markers it carried.

    Attributes:
        response: The typed message.
        steps: ``seed_v1`` and/or ``protocol_v5`` when those markers were present.
    """

    response: WorkerResponse
    steps: tuple[str, ...] = ()


def detect_shape(value: object) -> Shape:
    """The shape a decoded response looks like, from its ``kind`` and branch keys.

    Args:
        value: A decoded JSON value.

    Returns:
        ``not_object``, ``both``, ``context_request``, ``patch`` or ``unknown``.
    """
    if not isinstance(value, dict):
        return "not_object"
    kind = value.get("kind")
    asks = kind == "context_request" or "requests" in value
    patches = kind == "patch" or "patch" in value
    if asks and patches:
        return "both"
    if asks:
        return "context_request"
    return "patch" if patches else "unknown"


def _version_marker(obj: dict[str, object], key: str, expected: int, where: str) -> bool:
    if key not in obj:
        return False
    value = obj[key]
    if type(value) is not int or value != expected:
        raise fail("schema_version", f"{where}.{key} is {value!r}; only {expected} is accepted")
    return True


def _versions(message: dict[str, object]) -> tuple[str, ...]:
    seed = _version_marker(message, "schemaVersion", SEED_SCHEMA_VERSION, "response")
    patch = message.get("patch")
    if isinstance(patch, dict):
        seed = _version_marker(patch, "schemaVersion", SEED_SCHEMA_VERSION, "patch") or seed
    v5 = _version_marker(message, "protocolVersion", PROTOCOL_VERSION, "response")
    return (("seed_v1",) if seed else ()) + (("protocol_v5",) if v5 else ())


def validate_response(value: object) -> Validated:
    """Read a decoded response into a :data:`WorkerResponse`, refusing anything else.

    Args:
        value: A decoded JSON value.

    Returns:
        The typed message and the version markers it carried.

    Raises:
        ProtocolError: ``schema_version``, ``both_branches``, ``unknown_kind``,
            ``unknown_operation``, ``schema``, ``duplicate_handle`` or
            ``duplicate_create_path`` (see ``docs/lattice-protocol.md``).
    """
    if not isinstance(value, dict):
        raise fail("schema", "the response must be one JSON object")
    steps = _versions(value)
    if "requests" in value and "patch" in value:
        raise fail("both_branches", "the response has both 'requests' and 'patch'; send one")
    if "kind" not in value:
        raise fail("schema", "the response is missing 'kind' ('context_request' or 'patch')")
    kind = value["kind"]
    if kind == "context_request":
        if "patch" in value:
            raise fail("both_branches", "a context_request must not carry 'patch'")
        return Validated(_context_request(value), steps)
    if kind == "patch":
        if "requests" in value:
            raise fail("both_branches", "a patch must not carry 'requests'")
        return Validated(_patch(value), steps)
    if not isinstance(kind, str):
        raise fail("schema", "response.kind must be a string")
    raise fail("unknown_kind", f"unknown kind {kind!r}; use 'context_request' or 'patch'")


def _context_request(message: dict[str, object]) -> ContextRequest:
    strict_object(message, "response", required=("kind", "requests"), optional=_VERSION_KEYS)
    entries = array(message, "requests", "response", min_items=1)
    return ContextRequest(tuple(_request(e, f"requests[{i}]") for i, e in enumerate(entries)))


def _request(value: object, where: str) -> ContextRequestItem:
    item = strict_object(value, where, required=("reason",), optional=("pathHint", "symbol"))
    path_hint = string(item, "pathHint", where, blank_ok=False) if "pathHint" in item else None
    symbol = string(item, "symbol", where, blank_ok=False) if "symbol" in item else None
    if path_hint is None and symbol is None:
        raise fail("schema", f"{where} needs a 'pathHint' or a 'symbol'")
    return ContextRequestItem(string(item, "reason", where, blank_ok=False), path_hint, symbol)


def _patch(message: dict[str, object]) -> PatchProposal:
    strict_object(message, "response", required=("kind", "patch"), optional=_VERSION_KEYS)
    body = strict_object(
        message["patch"],
        "patch",
        required=("summary", "changes", "verificationCommands"),
        optional=("schemaVersion",),
    )
    changes = array(body, "changes", "patch", min_items=1)
    commands = array(body, "verificationCommands", "patch")
    proposal = PatchProposal(
        summary=string(body, "summary", "patch"),
        changes=tuple(_change(c, f"patch.changes[{i}]") for i, c in enumerate(changes)),
        verification_commands=tuple(
            text(c, f"patch.verificationCommands[{i}]", blank_ok=False)
            for i, c in enumerate(commands)
        ),
    )
    _refuse_duplicates(proposal.changes)
    return proposal


def _change(value: object, where: str) -> Change:
    if not isinstance(value, dict):
        raise fail("schema", f"{where} must be an object")
    if "operation" not in value:
        raise fail("schema", f"{where} is missing 'operation'")
    operation = value["operation"]
    if not isinstance(operation, str):
        raise fail("schema", f"{where}.operation must be a string")
    reader = _READERS.get(operation)
    if reader is None:
        names = ", ".join(sorted(_READERS))
        raise fail("unknown_operation", f"{where}: unknown operation {operation!r}; use {names}")
    return reader(value, where)


def _handle(change: dict[str, object], where: str) -> str:
    handle = string(change, "editHandle", where)
    if _HANDLE.fullmatch(handle) is None:
        raise fail("schema", f"{where}.editHandle {handle!r} is not a handle like 'E1'")
    return handle


def _replace_text(change: dict[str, object], where: str) -> ReplaceText:
    strict_object(change, where, required=("editHandle", "operation", "replacements"))
    entries = array(change, "replacements", where, min_items=1)
    replacements = []
    for index, entry in enumerate(entries):
        at = f"{where}.replacements[{index}]"
        item = strict_object(entry, at, required=("oldContent", "newContent"))
        replacements.append(
            Replacement(
                string(item, "oldContent", at, empty_ok=False), string(item, "newContent", at)
            )
        )
    return ReplaceText(_handle(change, where), tuple(replacements))


def _replace_file(change: dict[str, object], where: str) -> ReplaceFile:
    strict_object(change, where, required=("editHandle", "operation", "replacementContent"))
    return ReplaceFile(_handle(change, where), string(change, "replacementContent", where))


def _delete_file(change: dict[str, object], where: str) -> DeleteFile:
    strict_object(change, where, required=("editHandle", "operation"))
    return DeleteFile(_handle(change, where))


def _create_file(change: dict[str, object], where: str) -> CreateFile:
    strict_object(change, where, required=("operation", "path", "content"))
    return CreateFile(
        string(change, "path", where, blank_ok=False), string(change, "content", where)
    )


_READERS: Final[Mapping[str, Callable[[dict[str, object], str], Change]]] = {
    "replace_text": _replace_text,
    "replace_file": _replace_file,
    "delete_file": _delete_file,
    "create_file": _create_file,
}


def _create_key(path: str) -> str:
    """A create path with ``.`` and empty segments dropped (``./a//b`` is ``a/b``)."""
    return "/".join(part for part in path.split("/") if part not in ("", "."))


def _refuse_duplicates(changes: tuple[Change, ...]) -> None:
    handles: set[str] = set()
    paths: set[str] = set()
    for change in changes:
        if isinstance(change, CreateFile):
            key = _create_key(change.path)
            if key in paths:
                raise fail("duplicate_create_path", f"two create_file changes for {key!r}")
            paths.add(key)
        elif change.edit_handle in handles:
            raise fail("duplicate_handle", f"handle {change.edit_handle} is used by two changes")
        else:
            handles.add(change.edit_handle)
