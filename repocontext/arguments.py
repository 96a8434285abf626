"""The kinds of argument every edge takes: their bounds, and one validator per kind.

MCP tools, HTTP routes and CLI commands pass a caller's repository ids, record keys, paths
and free text through the validators here, so the same bad input gets the same coded error
from every tool (a malformed key is ``store.invalid_key`` wherever a key is taken, a NUL
byte in a path ``input.invalid`` wherever a path is taken). The ``MAX_*`` bounds are the
``maxLength`` of the tools' input schemas, and :func:`quoted` is how an error message
echoes input: a short prefix, never the whole of a long value.
"""

from __future__ import annotations

import re
from typing import Final

from repocontext.errors import InvalidInputError, InvalidKeyError, WrongFamilyError
from repocontext.memory.service import check_topic
from repocontext.store.keys import MAX_KEY_BYTES, ParsedKey, encode_component, parse_key

__all__ = [
    "ECHO_CHARS",
    "MAX_FENCING_TOKEN",
    "MAX_ID_CHARS",
    "MAX_KEY_CHARS",
    "MAX_NAME_CHARS",
    "MAX_PATH_CHARS",
    "MAX_TEXT_CHARS",
    "MAX_TOPIC_CHARS",
    "checked_range",
    "key_text",
    "memory_key",
    "new_repo_id",
    "quoted",
    "record_key",
    "repo_id",
    "repo_path",
    "topic",
]

ECHO_CHARS: Final = 80
"""At most this many characters of a caller's value are quoted back in an error."""
MAX_ID_CHARS: Final = 128
"""Repository ids, memory entry ids, relations and enum-like words (scope, detail, kind)."""
MAX_TOPIC_CHARS: Final = 64
"""Memory topics (the memory service's topic rule)."""
MAX_KEY_CHARS: Final = MAX_KEY_BYTES
"""Record keys: a key never holds more characters than its bytes."""
MAX_PATH_CHARS: Final = 4096
"""File and directory paths (Linux's PATH_MAX)."""
MAX_TEXT_CHARS: Final = 8192
"""Free text of a request: a search query, a context task, a glob, a receipt claim."""
MAX_NAME_CHARS: Final = 200
"""Short labels: a claim owner, a session id, a tag."""
MAX_FENCING_TOKEN: Final = 2**63 - 1
"""Fencing tokens are 64-bit counters."""

_PLAIN_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_NAME_HINT: Final = (
    "Use a plain name: 1-128 letters, digits, '.', '_' or '-', starting with a letter or "
    "digit (the directory name, say)."
)


def quoted(value: str, limit: int = ECHO_CHARS) -> str:
    """Return ``value`` quoted for an error message: whole if short, else a marked prefix.

    >>> quoted("a" * 100, limit=4)
    "'aaaa'… (100 characters)"
    """
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value)} characters)"


def checked_range(field: str, value: float, low: float, high: float) -> float:
    """Return ``value`` when ``low <= value <= high``.

    Raises:
        InvalidInputError: The value is out of range (the message names the field and range).
    """
    if not low <= value <= high:
        low_, high_, value_ = _number(low), _number(high), _number(value)
        raise InvalidInputError(
            f"{field} must be in {low_}..{high_}, got {value_}",
            hint=f"Pass a {field} from {low_} to {high_}, or omit it for the default.",
        )
    return value


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def repo_id(value: str) -> str:
    """Return a repository id a lookup may name (the id of a registered repository, or not).

    Raises:
        InvalidInputError: The id is empty, ``.`` or ``..``, has surrounding spaces or a
            control character, or is too long to fit in a key.
    """
    if not value or value in (".", "..") or value != value.strip():
        raise InvalidInputError(f"invalid repository id {quoted(value)}", hint=_NAME_HINT)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise InvalidInputError(
            f"repository id {quoted(value)} holds a control character", hint=_NAME_HINT
        )
    if len(encode_component(value).encode()) > MAX_ID_CHARS:
        raise InvalidInputError(
            f"repository id {quoted(value, 40)} is too long",
            hint=f"Use at most {MAX_ID_CHARS} bytes (once key-encoded), so every file path "
            "of the repository still fits in a key.",
        )
    return value


def new_repo_id(value: str) -> str:
    """Return an id a repository may be registered under: a plain name.

    Raises:
        InvalidInputError: The id is not a plain name (or is too long).
    """
    repo_id(value)
    if not _PLAIN_NAME.fullmatch(value):
        raise InvalidInputError(
            f"repository id {quoted(value)} is not a plain name", hint=_NAME_HINT
        )
    return value


def record_key(value: str) -> ParsedKey:
    """Parse a record key (``repo/{repoId}/...``).

    Raises:
        InvalidKeyError: The key does not follow the key grammar.
    """
    try:
        return parse_key(value)
    except InvalidKeyError as exc:
        reason = exc.message.replace(repr(value), "it")
        raise InvalidKeyError(
            f"{quoted(value)} is not a record key: {reason}"
            if len(reason) <= 2 * ECHO_CHARS
            else f"{quoted(value)} is not a record key"
        ) from exc


def memory_key(value: str) -> str:
    """Return a memory entry's key (``repo/{repoId}/mem/{topic}/{id}``).

    Raises:
        InvalidKeyError: The key does not follow the key grammar.
        InvalidInputError: ``memory.wrong_family``: a valid key of another kind of record.
    """
    family = record_key(value).family
    if family != "mem":
        raise WrongFamilyError(f"{quoted(value)} is a {family} key, not a memory key")
    return value


def topic(value: str) -> str:
    """Return a memory topic (1-64 letters, digits, ``_``, ``.`` or ``-``).

    Raises:
        InvalidInputError: No memory entry can have this topic.
    """
    check_topic(value)
    return value


def key_text(value: str) -> str:
    """Return ``value`` when it is a record key (:func:`record_key`, for a text argument).

    Raises:
        InvalidKeyError: The key does not follow the key grammar.
    """
    record_key(value)
    return value


def repo_path(value: str) -> str:
    """Return a path argument (relative to a repository or the workspace root).

    Raises:
        InvalidInputError: The path holds a NUL byte or is longer than the bound.
    """
    if "\x00" in value:
        raise InvalidInputError(
            f"path {quoted(value)} holds a NUL byte", hint="Pass the path as it is on disk."
        )
    if len(value) > MAX_PATH_CHARS:
        raise InvalidInputError(
            f"path {quoted(value)} is too long",
            hint=f"Paths have at most {MAX_PATH_CHARS} characters.",
        )
    return value
