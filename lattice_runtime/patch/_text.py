"""Exact text replacement inside a grant's lines, with the file's line endings preserved.

Every ``oldContent`` is located in the *original* text (never in the text an earlier
replacement produced), so the order of replacements cannot change the result; two located
spans that overlap or touch would interact and are refused. A file whose line breaks are
mostly CRLF is edited in CRLF: the worker's LF breaks in ``oldContent`` and ``newContent`` are
turned into CRLF before matching and writing. Bytes that are not UTF-8 survive unchanged
(``surrogateescape``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Final

from lattice_runtime.errors import LoweringError
from lattice_runtime.protocol.messages import Replacement

__all__ = ["line_break", "replace_text", "restyle"]

_CRLF: Final = "\r\n"
_LF: Final = "\n"
_CODEC: Final = "utf-8"
_ERRORS: Final = "surrogateescape"


def line_break(text: str) -> str | None:
    """The file's line break: CRLF when most breaks are CRLF, LF otherwise, None with none."""
    crlf = text.count(_CRLF)
    lf = text.count(_LF) - crlf
    if crlf == 0 and lf == 0:
        return None
    return _CRLF if crlf >= lf else _LF


def restyle(text: str, style: str | None) -> str:
    """``text`` with every line break written as ``style`` (unchanged when ``None``)."""
    if style is None:
        return text
    plain = text.replace(_CRLF, _LF)
    return plain if style == _LF else plain.replace(_LF, _CRLF)


def replace_text(
    path: str,
    data: bytes,
    replacements: Sequence[Replacement],
    lines: tuple[int, int] | None,
) -> bytes:
    """Apply ``replacements`` to ``data`` (the file's bytes) within ``lines``.

    Raises:
        LoweringError: ``replacement_source_missing``, ``replacement_outside_grant``,
            ``replacement_source_ambiguous`` or ``replacement_conflict``.
    """
    text = data.decode(_CODEC, _ERRORS)
    style = line_break(text)
    start, end = _region(text, lines)
    spans: list[tuple[int, int, str]] = []
    for number, replacement in enumerate(replacements, start=1):
        old = restyle(replacement.old_content, style)
        at = _locate(path, number, text, old, (start, end))
        spans.append((at, at + len(old), restyle(replacement.new_content, style)))
    spans.sort()
    for previous, current in itertools.pairwise(spans):
        if current[0] <= previous[1]:
            raise LoweringError(
                "replacement_conflict",
                f"{path}: two replacements overlap or touch (at characters {current[0]})",
                hint="Merge replacements that touch the same text into one.",
            )
    out: list[str] = []
    cursor = 0
    for at, stop, new in spans:
        out += [text[cursor:at], new]
        cursor = stop
    out.append(text[cursor:])
    return "".join(out).encode(_CODEC, _ERRORS)


def _region(text: str, lines: tuple[int, int] | None) -> tuple[int, int]:
    """Character offsets of the granted lines (the whole text for a whole-file grant)."""
    if lines is None:
        return 0, len(text)
    first, last = lines
    offset = 0
    start = end = len(text)
    for number, line in enumerate(text.split(_LF), start=1):
        if number == first:
            start = offset
        offset += len(line) + 1
        if number == last:
            end = min(offset, len(text))
            break
    return start, end


def _occurrences(text: str, needle: str) -> list[int]:
    found: list[int] = []
    at = text.find(needle)
    while at != -1:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def _locate(path: str, number: int, text: str, old: str, region: tuple[int, int]) -> int:
    """Where replacement ``number``'s old content starts: exactly once inside the region."""
    where = f"{path}: replacement {number}"
    if not old:
        raise LoweringError(
            "replacement_source_ambiguous",
            f"{where} has an empty oldContent, which matches everywhere",
            hint="Quote the exact existing text to replace.",
        )
    found = _occurrences(text, old)
    inside = [at for at in found if region[0] <= at and at + len(old) <= region[1]]
    if len(inside) == 1:
        return inside[0]
    if len(inside) > 1:
        raise LoweringError(
            "replacement_source_ambiguous",
            f"{where}: oldContent occurs {len(inside)} times in the granted lines",
            hint="Quote more surrounding lines so the text occurs exactly once.",
        )
    if found:
        raise LoweringError(
            "replacement_outside_grant",
            f"{where}: oldContent occurs only outside the granted lines",
            hint="Edit only the lines you were granted, or ask for context on the others.",
        )
    raise LoweringError(
        "replacement_source_missing",
        f"{where}: oldContent does not occur in the file",
        hint="Quote the existing text exactly as shown on the page, whitespace included.",
    )
