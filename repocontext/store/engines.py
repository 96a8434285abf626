"""Which backend a store URL selects.

LMDB in the data directory is the default (no URL). A ``postgresql://`` (or ``postgres://``)
URL selects :class:`~repocontext.store.postgres_backend.PostgresBackend`, imported only then,
so processes that never use PostgreSQL never load psycopg.
"""

from __future__ import annotations

from repocontext.errors import InvalidInputError
from repocontext.store.backend import Backend
from repocontext.store.urls import URL_SCHEMES

__all__ = ["url_backend"]


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
