"""Which backend a store URL selects.

LMDB in the data directory is the default (no URL). A ``postgresql://`` (or ``postgres://``)
URL selects :class:`~repocontext.store.postgres_backend.PostgresBackend`, imported only then,
so processes that never use PostgreSQL never load psycopg.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from repocontext.errors import InvalidInputError
from repocontext.store.backend import Backend

__all__ = ["URL_SCHEMES", "redact_url", "url_backend"]

URL_SCHEMES: Final = ("postgresql", "postgres")
"""Store URL schemes (each selects the PostgreSQL backend)."""


def url_backend(store_url: str, trees: list[str], *, read_only: bool) -> Backend:
    """Open the backend a store URL names.

    Raises:
        InvalidInputError: The URL's scheme names no supported engine.
        StoreUnavailableError: The database cannot be reached or holds an unknown schema.
    """
    scheme = store_url.partition("://")[0].lower() if "://" in store_url else ""
    if scheme not in URL_SCHEMES:
        raise InvalidInputError(
            f"the store URL scheme {scheme or '(none)'!r} is not supported",
            hint="Use postgresql://user@host:port/dbname, or leave store_url unset for the "
            "embedded LMDB store in the data directory.",
        )
    from repocontext.store.postgres_backend import PostgresBackend

    return PostgresBackend(store_url, trees, read_only=read_only)


def redact_url(url: str) -> str:
    """Return ``url`` without its password (in the user part or a ``password`` parameter)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        userinfo, _, hostinfo = netloc.rpartition("@")
        netloc = f"{userinfo.partition(':')[0]}@{hostinfo}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, True) if k != "password"])
    return urlunsplit(parts._replace(netloc=netloc, query=query))
