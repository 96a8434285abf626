"""Strict readers of decoded JSON: exact key sets, exact types, bounded lists.

Every failure here is a repairable ``schema`` refusal naming where in the response it is
(``patch.changes[2].replacements[0].oldContent``), so the repair prompt can quote it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from lattice_runtime.errors import ProtocolError
from lattice_runtime.protocol.diagnostics import ProtocolReason, is_repairable

MAX_ITEMS: Final = 200
"""The most entries any list of a response may hold (requests, changes, replacements...)."""


def fail(reason: ProtocolReason, message: str) -> ProtocolError:
    """A refusal with the repairability the reason implies."""
    return ProtocolError(message, reason=reason, repairable=is_repairable(reason))


def _type_name(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


TRANSACTION_FIELDS: Final = frozenset(
    {
        "baseCommit",
        "binding",
        "epoch",
        "expectedFingerprint",
        "fingerprint",
        "grant",
        "lines",
        "operations",
        "repositoryId",
        "sessionId",
        "taskId",
    }
)
"""Keys that belong to the runtime's transaction, never to a worker's message: a worker that
sends one tries to set what only the runtime decides, which is refused as
``provider_transaction_field`` (not repairable), not as a schema slip."""


def strict_object(
    value: object,
    where: str,
    *,
    required: Collection[str],
    optional: Collection[str] = (),
) -> dict[str, object]:
    """``value`` as an object holding every required key and no key outside both sets.

    Raises:
        ProtocolError: ``schema`` when it is not an object, lacks a key or has an extra one;
            ``provider_transaction_field`` when an extra key is one of
            :data:`TRANSACTION_FIELDS`.
    """
    if not isinstance(value, dict):
        raise fail("schema", f"{where} must be an object, not {_type_name(value)}")
    missing = [key for key in required if key not in value]
    if missing:
        raise fail("schema", f"{where} is missing {', '.join(repr(k) for k in missing)}")
    allowed = set(required) | set(optional)
    extra = sorted(key for key in value if key not in allowed)
    carried = [key for key in extra if key in TRANSACTION_FIELDS]
    if carried:
        raise fail(
            "provider_transaction_field",
            f"{where} carries transaction field(s) {', '.join(map(repr, carried))}; "
            "only the runtime sets them",
        )
    if extra:
        raise fail("schema", f"{where} has unexpected key(s) {', '.join(map(repr, extra))}")
    return value


def text(value: object, where: str, *, empty_ok: bool = True, blank_ok: bool = True) -> str:
    """``value`` as a valid Unicode string; ``empty_ok=False`` refuses ``""``,
    ``blank_ok=False`` also refuses whitespace only.

    Raises:
        ProtocolError: ``schema`` when it is not a string, is empty when it may not be, or
            holds a lone surrogate.
    """
    if not isinstance(value, str):
        raise fail("schema", f"{where} must be a string, not {_type_name(value)}")
    if (not empty_ok and not value) or (not blank_ok and not value.strip()):
        raise fail("schema", f"{where} must not be empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate escape (\ud800) decodes to a str no file can hold.
        raise fail("schema", f"{where} is not valid Unicode (lone surrogate)") from None
    return value


def string(
    obj: dict[str, object], key: str, where: str, *, empty_ok: bool = True, blank_ok: bool = True
) -> str:
    """``obj[key]`` read with :func:`text`.

    Raises:
        ProtocolError: ``schema``, as :func:`text`.
    """
    return text(obj[key], f"{where}.{key}", empty_ok=empty_ok, blank_ok=blank_ok)


def array(obj: dict[str, object], key: str, where: str, *, min_items: int = 0) -> list[object]:
    """``obj[key]`` as a list of ``min_items`` to :data:`MAX_ITEMS` entries.

    Raises:
        ProtocolError: ``schema`` when it is not an array or its length is out of bounds.
    """
    value = obj[key]
    if not isinstance(value, list):
        raise fail("schema", f"{where}.{key} must be an array, not {_type_name(value)}")
    if len(value) < min_items:
        raise fail("schema", f"{where}.{key} needs at least {min_items} entry")
    if len(value) > MAX_ITEMS:
        raise fail("schema", f"{where}.{key} has {len(value)} entries; at most {MAX_ITEMS}")
    return value
