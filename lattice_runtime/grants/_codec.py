"""The registry's record codec: grants to canonical JSON and back, checked field by field.

Any malformed value raises :class:`ValueError`; the registry turns that into
``registry_integrity``. A decoded registry must be one the registry itself could have
written: handles ``E1`` .. ``En`` in order, known operations, safe relative paths.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any, Final

from lattice_runtime.grants.model import HANDLE_PATTERN, OPERATIONS, Binding, EditGrant, Operation

__all__ = ["FORMAT_VERSION", "canonical", "decode", "digest", "encode"]

FORMAT_VERSION: Final = 1


def canonical(value: object) -> bytes:
    """Sorted keys, no whitespace, ASCII only: one byte string per value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def digest(value: object) -> str:
    """SHA-256 hex of the canonical form."""
    return hashlib.sha256(canonical(value)).hexdigest()


def encode(binding: Binding, grants: Sequence[EditGrant]) -> dict[str, Any]:
    """The registry as a JSON-ready record."""
    return {
        "version": FORMAT_VERSION,
        "binding": {
            "task_id": binding.task_id,
            "session_id": binding.session_id,
            "repository_id": binding.repository_id,
            "base_commit": binding.base_commit,
            "epoch": binding.epoch,
        },
        "grants": [
            {
                "handle": grant.handle,
                "path": grant.path,
                "fingerprint": grant.fingerprint,
                "lines": list(grant.lines) if grant.lines is not None else None,
                "operations": list(grant.operations),
                "invalidated": grant.invalidated,
            }
            for grant in grants
        ],
    }


def decode(record: object) -> tuple[Binding, tuple[EditGrant, ...]]:
    """The binding and grants of a record :func:`encode` wrote.

    Raises:
        ValueError: Anything is missing, extra, mistyped or out of order.
    """
    fields = _object(record, {"version", "binding", "grants"})
    if fields["version"] != FORMAT_VERSION:
        raise ValueError(f"unknown registry format version {fields['version']!r}")
    binding = _binding(fields["binding"])
    raw_grants = fields["grants"]
    if not isinstance(raw_grants, list):
        raise ValueError("grants is not a list")
    grants = tuple(_grant(raw, binding) for raw in raw_grants)
    for number, grant in enumerate(grants, start=1):
        if grant.handle != f"E{number}":
            raise ValueError(f"handle {grant.handle!r} out of order (expected E{number})")
    return binding, grants


def _object(value: object, keys: set[str]) -> Mapping[str, object]:
    if not isinstance(value, dict) or set(value) != keys:
        raise ValueError(f"expected an object with exactly {sorted(keys)}")
    return value


def _text(value: object, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} is not a non-empty string")
    return value


def _binding(value: object) -> Binding:
    fields = _object(value, {"task_id", "session_id", "repository_id", "base_commit", "epoch"})
    epoch = fields["epoch"]
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
        raise ValueError("epoch is not a positive integer")
    return Binding(
        task_id=_text(fields["task_id"], "task_id"),
        session_id=_text(fields["session_id"], "session_id"),
        repository_id=_text(fields["repository_id"], "repository_id"),
        base_commit=_text(fields["base_commit"], "base_commit"),
        epoch=epoch,
    )


def _grant(value: object, binding: Binding) -> EditGrant:
    fields = _object(value, {"handle", "path", "fingerprint", "lines", "operations", "invalidated"})
    handle = _text(fields["handle"], "handle")
    if not HANDLE_PATTERN.match(handle):
        raise ValueError(f"handle {handle!r} does not match {HANDLE_PATTERN.pattern}")
    invalidated = fields["invalidated"]
    if not isinstance(invalidated, bool):
        raise ValueError("invalidated is not a boolean")
    return EditGrant(
        handle=handle,
        binding=binding,
        path=_path(fields["path"]),
        fingerprint=_text(fields["fingerprint"], "fingerprint"),
        lines=_lines(fields["lines"]),
        operations=_operations(fields["operations"]),
        invalidated=invalidated,
    )


def _path(value: object) -> str:
    path = _text(value, "path")
    parts = path.split("/")
    if path.startswith("/") or "\\" in path or "\0" in path:
        raise ValueError(f"path {path!r} is not a relative posix path")
    if any(part in ("", ".", "..") for part in parts) or str(PurePosixPath(path)) != path:
        raise ValueError(f"path {path!r} is not normalized")
    return path


def _lines(value: object) -> tuple[int, int] | None:
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != 2  # (first, last)
        or not all(isinstance(n, int) and not isinstance(n, bool) for n in value)
    ):
        raise ValueError("lines is not a [first, last] pair of integers")
    first, last = value
    if not 1 <= first <= last:
        raise ValueError(f"lines {value!r} is not a 1-based range")
    return first, last


def _operations(value: object) -> tuple[Operation, ...]:
    if not isinstance(value, list):
        raise ValueError("operations is not a list")
    known = {operation: operation for operation in OPERATIONS}
    operations: list[Operation] = []
    for item in value:
        if not isinstance(item, str) or item not in known or known[item] in operations:
            raise ValueError(f"operation {item!r} is unknown or repeated")
        operations.append(known[item])
    return tuple(operations)
