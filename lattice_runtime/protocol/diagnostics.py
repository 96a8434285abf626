"""What the runtime records about every worker response, and the error that carries it.

Each parsed response, accepted or refused, yields one :class:`Diagnostics`: the SHA-256 of the
raw text, the shape it looked like, what normalization did to it, and why it was refused. The
reason words are stable (``docs/lattice-protocol.md``); :data:`PROTOCOL_REASONS` says which of
them one protocol-repair turn may fix.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal, cast

from lattice_runtime.errors import ProtocolError

__all__ = [
    "PROTOCOL_REASONS",
    "Diagnostics",
    "ProtocolReason",
    "ProtocolViolation",
    "Shape",
    "as_reason",
    "is_repairable",
    "raw_digest",
]

Shape = Literal["context_request", "patch", "both", "unknown", "not_json", "not_object"]
"""The shape a raw response looked like, before validation decided anything."""

ProtocolReason = Literal[
    "too_large",
    "malformed_json",
    "duplicate_key",
    "schema",
    "unknown_kind",
    "unknown_operation",
    "both_branches",
    "schema_version",
    "duplicate_handle",
    "duplicate_create_path",
    "provider_transaction_field",
]
"""Why a response was refused, one stable word."""

PROTOCOL_REASONS: Final[Mapping[str, bool]] = MappingProxyType(
    {
        "too_large": False,
        "malformed_json": True,
        "duplicate_key": True,
        "schema": True,
        "unknown_kind": True,
        "unknown_operation": True,
        "both_branches": True,
        "schema_version": False,
        "duplicate_handle": False,
        "duplicate_create_path": False,
        "provider_transaction_field": False,
    }
)
"""Every refusal reason, mapped to whether one protocol-repair turn may fix it."""


def is_repairable(reason: ProtocolReason) -> bool:
    """Whether a protocol-repair turn is allowed for ``reason``.

    Args:
        reason: A refusal reason.

    Returns:
        True for malformed JSON and schema errors; False for size, version and duplicate
        refusals, which a second attempt of the same worker is not trusted to fix.
    """
    return PROTOCOL_REASONS[reason]


def as_reason(value: str) -> ProtocolReason:
    """``value`` as a :data:`ProtocolReason`.

    Args:
        value: A reason word.

    Returns:
        The same word, typed.

    Raises:
        ValueError: ``value`` is not one of :data:`PROTOCOL_REASONS` (a bug in this package).
    """
    if value not in PROTOCOL_REASONS:
        raise ValueError(f"{value!r} is not a protocol refusal reason")
    return cast("ProtocolReason", value)


def raw_digest(raw: str) -> str:
    """The hex SHA-256 of the raw response's UTF-8 bytes (lone surrogates kept, not lost).

    Args:
        raw: The response exactly as the worker returned it.

    Returns:
        64 lowercase hex digits.
    """
    return hashlib.sha256(raw.encode("utf-8", errors="surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class Diagnostics:
    """The record of one worker response, accepted or refused.

    Attributes:
        raw_sha256: SHA-256 of the raw text (:func:`raw_digest`).
        raw_chars: Length of the raw text in characters.
        detected_shape: What the response looked like.
        normalization: What normalization did: ``none``, or the steps joined by ``+``
            (``stripped_whitespace``, ``stripped_code_fence``, ``seed_v1``, ``protocol_v5``).
        validation_error: The refusal message, or None when accepted.
        reason: The refusal reason, or None when accepted.
    """

    raw_sha256: str
    raw_chars: int
    detected_shape: Shape
    normalization: str = "none"
    validation_error: str | None = None
    reason: ProtocolReason | None = None

    @property
    def accepted(self) -> bool:
        """True when the response passed validation."""
        return self.reason is None

    def to_wire(self) -> dict[str, object]:
        """The camelCase JSON form a run record carries."""
        return {
            "rawSha256": self.raw_sha256,
            "rawChars": self.raw_chars,
            "detectedShape": self.detected_shape,
            "normalization": self.normalization,
            "validationError": self.validation_error,
            "reason": self.reason,
        }


class ProtocolViolation(ProtocolError):
    """A refused worker response, with the diagnostics recorded for it.

    Same code as :class:`~lattice_runtime.errors.ProtocolError`
    (``lattice.protocol_invalid``); ``reason`` and ``repairable`` match the diagnostics.

    Attributes:
        diagnostics: The record of the refused response.
    """

    def __init__(self, message: str, *, reason: ProtocolReason, diagnostics: Diagnostics) -> None:
        super().__init__(message, reason=reason, repairable=is_repairable(reason))
        self.diagnostics = diagnostics
