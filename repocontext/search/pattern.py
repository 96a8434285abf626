r"""Line patterns: a caller's literal or regular expression, compiled once for grep.

The one module that knows the regular expression engine: RE2 (``google-re2``), which matches
in time linear in the text whatever the pattern, so a caller's pattern cannot make a search
backtrack for minutes (``(a+)+$`` against a long line of ``a`` is as fast as any other).
The price is RE2's syntax: no backreferences and no look-around.

A pattern matches inside one line, never across a line break (RE2's ``never_nl``: ``\s``
and ``[^x]`` do not match ``\n`` either); ``^`` and ``$`` match at the start and end of every
line. Text is searched as UTF-8 bytes, so a file is never decoded to be searched; case folding
(``case_sensitive=False``) is Unicode's.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final

from repocontext.errors import InvalidInputError

__all__ = ["MAX_PATTERN_CHARS", "LinePattern", "compile_pattern"]

MAX_PATTERN_CHARS: Final = 1_000
"""Longest pattern accepted."""

_MAX_PROGRAM_BYTES: Final = 8 << 20  # RE2's memory for one compiled pattern (its default)


@dataclass(frozen=True, slots=True)
class LinePattern:
    """A compiled pattern (build with :func:`compile_pattern`).

    Attributes:
        pattern: The pattern as given.
        regex: Whether it is a regular expression (else a literal string).
        case_sensitive: Whether letters must match in case.
    """

    pattern: str
    regex: bool
    case_sensitive: bool
    _match: Any
    _anchor: Any

    def search(self, data: bytes, pos: int = 0) -> tuple[int, int] | None:
        """The byte span of the first match in ``data`` at or after ``pos``, or ``None``."""
        start, end = self._match(self._anchor, data, pos, len(data))[0]
        return None if start < 0 else (start, end)


def compile_pattern(pattern: str, *, regex: bool, case_sensitive: bool) -> LinePattern:
    """Compile ``pattern`` (a literal unless ``regex``) for searching lines of UTF-8 text.

    Raises:
        InvalidInputError: The pattern is empty, too long, holds a line break or NUL, or
            (``regex``) is not valid RE2 syntax; the hint says what RE2 accepts.
    """
    if not pattern or len(pattern) > MAX_PATTERN_CHARS:
        raise InvalidInputError(
            f"a pattern must hold 1 to {MAX_PATTERN_CHARS} characters, got {len(pattern)}",
            hint="Pass the text (or regular expression) to find within a line.",
        )
    if "\n" in pattern or "\r" in pattern or "\x00" in pattern:
        raise InvalidInputError(
            "a pattern holds a line break or a NUL byte",
            hint="Patterns match within one line: search for one line's text at a time.",
        )
    re2 = _engine()
    options = re2.Options()
    options.never_nl = True
    options.log_errors = False
    options.literal = not regex
    options.case_sensitive = case_sensitive
    options.max_mem = _MAX_PROGRAM_BYTES
    try:
        compiled = re2.compile(f"(?m){pattern}" if regex else pattern, options)
    except re2.error as exc:
        raise InvalidInputError(
            f"{pattern[:100]!r} is not a valid regular expression: {_reason(exc)}",
            hint="Patterns use RE2 syntax (Python's without backreferences such as \\1 or "
            "look-around such as (?=...) or (?<!...)); pass regex=false to search for the "
            "text literally.",
        ) from exc
    # The compiled program's own match call: the module's search() wraps it in a generator
    # and a match object per call, a third of the time of a search over a small file.
    return LinePattern(
        pattern, regex, case_sensitive, compiled._regexp.Match, re2._Anchor.UNANCHORED
    )


@functools.cache
def _engine() -> ModuleType:
    """The RE2 module, imported on first use: only grep needs it."""
    return importlib.import_module("re2")


def _reason(exc: Exception) -> str:
    reason = exc.args[0] if exc.args else str(exc)
    text = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
    return text[:200]
