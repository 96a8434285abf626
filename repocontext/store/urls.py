"""Store URLs: the schemes that select a database backend, and showing a URL safely."""

from __future__ import annotations

from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["URL_SCHEMES", "redact_url"]

URL_SCHEMES: Final = ("postgresql", "postgres")
"""Store URL schemes (each selects the PostgreSQL backend)."""


def redact_url(url: str) -> str:
    """Return ``url`` without its password (in the user part or a ``password`` parameter)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        userinfo, _, hostinfo = netloc.rpartition("@")
        netloc = f"{userinfo.partition(':')[0]}@{hostinfo}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, True) if k != "password"])
    return urlunsplit(parts._replace(netloc=netloc, query=query))
