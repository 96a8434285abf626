"""The key grammar: the stable wire format of every stored key.

::

    repo/{repoId}                       the repository record
    repo/{repoId}/pkg/{path}            a package (directory) node
    repo/{repoId}/file/{path}           a file node
    repo/{repoId}/symbol/{fqName}       a symbol
    repo/{repoId}/content/{path}        a file's content projection
    repo/{repoId}/xref/{name}           reverse references of a name
    repo/{repoId}/mem/{topic}/{id}      a memory entry
    repo/{repoId}/session/{sessionId}   a context session
    repo/{repoId}/vec/{part}/...        vector plane records

Opaque components (repoId, fqName, name, topic, id, sessionId, vec parts) percent-encode ``%``
and ``/`` so that they never split. Paths keep ``/`` so that a directory is one key range:
``path_prefix("r", "file", "src/")`` covers every file below ``src/``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final

from repocontext.errors import InvalidKeyError

__all__ = [
    "FAMILIES",
    "MAX_KEY_BYTES",
    "ParsedKey",
    "content_key",
    "decode_component",
    "encode_component",
    "family_prefix",
    "file_key",
    "key_bytes",
    "mem_key",
    "parse_key",
    "pkg_key",
    "repo_key",
    "repo_prefix",
    "session_key",
    "symbol_key",
    "validate_key",
    "vec_key",
    "xref_key",
]

MAX_KEY_BYTES: Final = 480
"""Longest key in UTF-8 bytes; LMDB's own limit is 511 and index keys add a header."""

PATH_FAMILIES: Final = frozenset({"pkg", "file", "content"})
NAME_FAMILIES: Final = frozenset({"symbol", "xref", "session"})
FAMILIES: Final = PATH_FAMILIES | NAME_FAMILIES | {"mem", "vec"}
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class ParsedKey:
    """A key split into its grammar parts (components decoded).

    Attributes:
        family: ``repo`` for the repository record, else one of :data:`FAMILIES`.
        repo_id: The repository id.
        path: Repository-relative path for ``pkg``, ``file`` and ``content`` keys.
        name: The name for ``symbol``, ``xref`` and ``session`` keys.
        topic: The topic of a ``mem`` key.
        id: The entry id of a ``mem`` key.
        parts: The decoded components after ``vec``.
    """

    family: str
    repo_id: str
    path: str | None = None
    name: str | None = None
    topic: str | None = None
    id: str | None = None
    parts: tuple[str, ...] = ()


def encode_component(value: str) -> str:
    """Percent-encode ``%`` and ``/`` in an opaque component.

    Raises:
        InvalidKeyError: The component is empty or holds a control character.
    """
    _check_text(value, "component")
    return value.replace("%", "%25").replace("/", "%2F")


def decode_component(value: str) -> str:
    """Invert :func:`encode_component`."""
    return value.replace("%2F", "/").replace("%2f", "/").replace("%25", "%")


def repo_key(repo_id: str) -> str:
    """Key of the repository record."""
    return _finish(f"repo/{encode_component(repo_id)}")


@functools.lru_cache(maxsize=1024)
def repo_prefix(repo_id: str) -> str:
    """Range prefix of everything stored under one repository (the record itself excluded)."""
    return f"repo/{encode_component(repo_id)}/"


def pkg_key(repo_id: str, path: str) -> str:
    """Key of a package (directory) node."""
    return _finish(f"{repo_prefix(repo_id)}pkg/{_check_path(path)}")


def file_key(repo_id: str, path: str) -> str:
    """Key of a file node."""
    return _finish(f"{repo_prefix(repo_id)}file/{_check_path(path)}")


def content_key(repo_id: str, path: str) -> str:
    """Key of a file's content projection."""
    return _finish(f"{repo_prefix(repo_id)}content/{_check_path(path)}")


def symbol_key(repo_id: str, fq_name: str) -> str:
    """Key of a symbol by fully qualified name."""
    return _finish(f"{repo_prefix(repo_id)}symbol/{encode_component(fq_name)}")


def xref_key(repo_id: str, name: str) -> str:
    """Key of the reverse references of a name."""
    return _finish(f"{repo_prefix(repo_id)}xref/{encode_component(name)}")


def session_key(repo_id: str, session_id: str) -> str:
    """Key of a context session."""
    return _finish(f"{repo_prefix(repo_id)}session/{encode_component(session_id)}")


def mem_key(repo_id: str, topic: str, entry_id: str) -> str:
    """Key of a memory entry."""
    return _finish(
        f"{repo_prefix(repo_id)}mem/{encode_component(topic)}/{encode_component(entry_id)}"
    )


def vec_key(repo_id: str, *parts: str) -> str:
    """Key of a vector-plane record; every part is an opaque component.

    Raises:
        InvalidKeyError: No part was given or a part is invalid.
    """
    if not parts:
        raise InvalidKeyError("a vec key needs at least one component")
    return _finish(f"{repo_prefix(repo_id)}vec/" + "/".join(encode_component(p) for p in parts))


def family_prefix(repo_id: str, family: str, sub: str | None = None) -> str:
    """Range prefix of one family, optionally narrowed.

    For path families ``sub`` is a path prefix kept raw (``"src/"`` is a directory, ``"src/a"``
    matches ``src/a.py`` and ``src/ab/``); for ``mem`` it is a topic (the prefix then covers
    that topic's entries); for name families it is a raw name prefix.

    Raises:
        InvalidKeyError: The family is unknown or ``sub`` is invalid.
    """
    if family not in FAMILIES:
        raise InvalidKeyError(f"unknown key family {family!r}")
    base = f"{repo_prefix(repo_id)}{family}/"
    if not sub:
        return base
    if family in PATH_FAMILIES:
        _check_text(sub, "path prefix")
        return base + sub
    if family == "mem":
        return base + encode_component(sub) + "/"
    return base + encode_component(sub)


def parse_key(key: str) -> ParsedKey:
    """Split a key into its grammar parts.

    Raises:
        InvalidKeyError: The key does not follow the grammar.
    """
    validate_key(key)
    head, _, rest = key.partition("/")
    repo_part, _, tail = rest.partition("/")
    if head != "repo" or not repo_part:
        raise InvalidKeyError(f"key {key!r} does not start with repo/{{repoId}}")
    repo_id = decode_component(repo_part)
    if not tail:
        return ParsedKey(family="repo", repo_id=repo_id)
    family, _, remainder = tail.partition("/")
    if family not in FAMILIES or not remainder:
        raise InvalidKeyError(f"key {key!r} has an unknown family or nothing after it")
    if family in PATH_FAMILIES:
        return ParsedKey(family=family, repo_id=repo_id, path=_check_path(remainder))
    if family in NAME_FAMILIES:
        if "/" in remainder:
            raise InvalidKeyError(f"key {key!r}: the {family} name must encode '/' as %2F")
        return ParsedKey(family=family, repo_id=repo_id, name=decode_component(remainder))
    parts = remainder.split("/")
    if any(not p for p in parts):
        raise InvalidKeyError(f"key {key!r} has an empty component")
    decoded = tuple(decode_component(p) for p in parts)
    if family == "mem":
        if len(parts) != 2:
            raise InvalidKeyError(
                f"key {key!r}: memory keys are repo/{{repoId}}/mem/{{topic}}/{{id}}"
            )
        return ParsedKey(family=family, repo_id=repo_id, topic=decoded[0], id=decoded[1])
    return ParsedKey(family=family, repo_id=repo_id, parts=decoded)


def validate_key(key: str) -> str:
    """Check the generic key rules (type, length, characters) and return the key.

    Raises:
        InvalidKeyError: The key is not a non-empty string of at most
            :data:`MAX_KEY_BYTES` UTF-8 bytes free of control characters and empty components.
    """
    key_bytes(key)
    return key


def key_bytes(key: str) -> bytes:
    """Validate ``key`` like :func:`validate_key` and return its UTF-8 bytes (the hot path).

    Raises:
        InvalidKeyError: The key breaks the rules.
    """
    if type(key) is not str or not key:
        raise InvalidKeyError("a key must be a non-empty string")
    try:
        raw = key.encode()
    except UnicodeEncodeError as exc:
        raise InvalidKeyError("the key is not valid Unicode text") from exc
    if len(raw) > MAX_KEY_BYTES:
        raise InvalidKeyError(f"key is longer than {MAX_KEY_BYTES} bytes")
    # isprintable() is a fast pre-check; the regex decides for the rare non-printable key.
    if not key.isprintable() and _CONTROL.search(key):
        raise InvalidKeyError(f"key {key[:80]!r} holds a control character")
    if "//" in key or key[0] == "/" or key[-1] == "/":
        raise InvalidKeyError(f"key {key[:80]!r} has an empty component")
    return raw


def _finish(key: str) -> str:
    return validate_key(key)


def _check_text(value: str, what: str) -> None:
    if not isinstance(value, str) or not value:
        raise InvalidKeyError(f"the {what} must be a non-empty string")
    if value.isascii() and value.isprintable():
        return  # the common case: no control character, valid UTF-8
    if _CONTROL.search(value):
        raise InvalidKeyError(f"the {what} {value[:40]!r} holds a control character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidKeyError(f"the {what} is not valid Unicode text") from exc


def _check_path(path: str) -> str:
    _check_text(path, "path")
    if path.startswith("/") or "\\" in path:
        raise InvalidKeyError(
            f"path {path[:80]!r} must be repository-relative with '/' separators",
            hint="Pass paths like 'src/app.py', relative to the repository root.",
        )
    if any(seg in ("", ".", "..") for seg in path.split("/")):
        raise InvalidKeyError(
            f"path {path[:80]!r} has an empty, '.' or '..' segment",
            hint="Normalize the path first; '..' never escapes the repository.",
        )
    return path
