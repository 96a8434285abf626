"""``parse_response``: raw worker text in, a typed message and its diagnostics out.

The one place the runtime reads worker JSON. Steps, in order: size bound, normalization
(:mod:`.normalize`), strict decoding, shape detection, validation (:mod:`.schema`). Every
outcome is recorded in a :class:`~.diagnostics.Diagnostics`; a refusal raises
:class:`~.diagnostics.ProtocolViolation` carrying it.
"""

from __future__ import annotations

from dataclasses import dataclass

from lattice_runtime.errors import ProtocolError
from lattice_runtime.protocol.diagnostics import (
    Diagnostics,
    ProtocolViolation,
    Shape,
    as_reason,
    raw_digest,
)
from lattice_runtime.protocol.messages import WorkerResponse
from lattice_runtime.protocol.normalize import decode_json, normalize_text
from lattice_runtime.protocol.schema import detect_shape, validate_response

__all__ = ["ParsedResponse", "parse_response"]


@dataclass(frozen=True, slots=True)
class ParsedResponse:
    """An accepted worker response.

    Attributes:
        response: The typed message (a context request or a patch proposal).
        diagnostics: The record of the raw response (``reason`` is None).
    """

    response: WorkerResponse
    diagnostics: Diagnostics


def _steps_name(steps: tuple[str, ...]) -> str:
    return "+".join(steps) if steps else "none"


def parse_response(raw: str) -> ParsedResponse:
    """Normalize, decode and validate one worker response, failing closed.

    Args:
        raw: The response exactly as the worker returned it.

    Returns:
        The typed message with its diagnostics.

    Raises:
        ProtocolViolation: The response breaks the protocol; ``reason``, ``repairable`` and
            ``diagnostics`` say why and whether one protocol-repair turn is allowed (reasons in
            ``docs/lattice-protocol.md``).
    """
    digest, chars = raw_digest(raw), len(raw)
    shape: Shape = "not_json"
    steps: tuple[str, ...] = ()
    try:
        normalized = normalize_text(raw)
        steps = normalized.steps
        value = decode_json(normalized.text)
        shape = detect_shape(value)
        validated = validate_response(value)
    except ProtocolError as exc:
        reason = as_reason(exc.reason)
        diagnostics = Diagnostics(digest, chars, shape, _steps_name(steps), exc.message, reason)
        raise ProtocolViolation(exc.message, reason=reason, diagnostics=diagnostics) from None
    steps += validated.steps
    return ParsedResponse(validated.response, Diagnostics(digest, chars, shape, _steps_name(steps)))
