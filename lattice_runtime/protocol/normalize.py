"""The only normalization a raw worker response gets, and the strict JSON decoding after it.

Allowed, and recorded: surrounding whitespace, and one surrounding markdown code fence
(```` ``` ```` or ```` ```json ````). Nothing else is repaired: no trailing commas, no picking
one object out of several, no duplicate keys, no ``NaN``. What is not exactly one JSON value
after these two steps fails closed as ``malformed_json`` (or ``duplicate_key``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final

from lattice_runtime.errors import ProtocolError
from lattice_runtime.protocol.diagnostics import ProtocolReason, is_repairable

__all__ = ["MAX_RAW_CHARS", "Normalized", "decode_json", "normalize_text"]

MAX_RAW_CHARS: Final = 2_000_000
"""The longest raw response read at all; longer ones fail closed as ``too_large``."""

# One fence: an opening line of three backticks and an optional ``json`` tag, the body, and a
# closing line of three backticks. Backticks inside the body (a README edit) stay; a second
# fenced block leaves text that is not one JSON value, which fails.
_FENCE: Final = re.compile(r"\A```(?:json)?[ \t]*\r?\n(?P<body>.*?)\r?\n?```\Z", re.S | re.I)


@dataclass(frozen=True, slots=True)
class Normalized:
    """The text to decode and the normalization steps that produced it.

    Attributes:
        text: The text after normalization.
        steps: The steps applied, in order (empty: none).
    """

    text: str
    steps: tuple[str, ...] = ()


def _fail(reason: ProtocolReason, message: str) -> ProtocolError:
    return ProtocolError(message, reason=reason, repairable=is_repairable(reason))


def normalize_text(raw: str) -> Normalized:
    """Strip surrounding whitespace and at most one surrounding code fence.

    Args:
        raw: The response exactly as the worker returned it.

    Returns:
        The text to decode and the steps applied.

    Raises:
        ProtocolError: ``too_large`` when ``raw`` is longer than :data:`MAX_RAW_CHARS`.
    """
    if len(raw) > MAX_RAW_CHARS:
        raise _fail("too_large", f"response has {len(raw)} characters; at most {MAX_RAW_CHARS}")
    steps: list[str] = []
    text = raw.strip()
    if text != raw:
        steps.append("stripped_whitespace")
    fence = _FENCE.match(text)
    if fence is not None:
        text = fence.group("body").strip()
        steps.append("stripped_code_fence")
    return Normalized(text, tuple(steps))


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise _fail("duplicate_key", f"key {key!r} appears twice in one object")
        result[key] = value
    return result


def decode_json(text: str) -> object:
    """Decode exactly one JSON value, refusing duplicate keys and non-finite numbers.

    Args:
        text: Normalized response text.

    Returns:
        The decoded value (dicts, lists, strings, numbers, booleans, None).

    Raises:
        ProtocolError: ``malformed_json`` when ``text`` is empty, not JSON, several JSON
            values, or nested too deeply; ``duplicate_key`` when an object repeats a key.
    """
    if not text:
        raise _fail("malformed_json", "the response is empty; expected one JSON object")
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            message = "the response holds more than one JSON value; send exactly one object"
        else:
            message = f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        raise _fail("malformed_json", message) from None
    except RecursionError:
        raise _fail("malformed_json", "JSON nested too deeply") from None
    except ValueError:  # NaN/Infinity, or an integer too long to convert
        raise _fail(
            "malformed_json", "not valid JSON: NaN, Infinity or an over-long number"
        ) from None
