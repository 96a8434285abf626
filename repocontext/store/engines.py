"""Which backend a store opens: LMDB in the data directory, or the database a URL names.

LMDB in the data directory is the default (no URL). A ``postgresql://`` (or ``postgres://``)
URL selects :class:`~repocontext.store.postgres_backend.PostgresBackend`, imported only then,
so processes that never use PostgreSQL never load psycopg.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from repocontext.errors import InvalidInputError, StoreNotFoundError
from repocontext.store.backend import Backend
from repocontext.store.lmdb_backend import DATA_FILE, DEFAULT_MAP_BYTES, LmdbBackend
from repocontext.store.urls import URL_SCHEMES

__all__ = ["STORE_DIR", "backend_exists", "open_backend", "url_backend"]

STORE_DIR: Final = "store"
"""The directory of the LMDB environment under a data directory."""


def open_backend(
    data_dir: Path,
    trees: list[str],
    *,
    store_url: str | None = None,
    read_only: bool = False,
    map_bytes: int = DEFAULT_MAP_BYTES,
    max_map_bytes: int | None = None,
) -> Backend:
    """Open the backend of ``store_url``, or LMDB under ``data_dir/store`` without one.

    Raises:
        InvalidInputError: ``store_url`` is not a supported store URL.
        StoreNotFoundError: ``read_only`` and the database of ``store_url`` holds no store.
        StoreReadOnlyError: ``data_dir`` cannot be written and ``read_only`` is False.
        StoreUnavailableError: The environment or the database cannot be opened.
    """
    if store_url:
        return url_backend(store_url, trees, read_only=read_only)
    return LmdbBackend(
        Path(data_dir) / STORE_DIR,
        trees,
        read_only=read_only,
        map_bytes=map_bytes,
        max_map_bytes=max_map_bytes,
    )


def backend_exists(data_dir: Path, trees: list[str], store_url: str | None = None) -> bool:
    """Whether ``data_dir`` (or the database of ``store_url``) holds a store.

    Raises:
        InvalidInputError: ``store_url`` is not a supported store URL.
        StoreUnavailableError: The database of ``store_url`` cannot be reached.
    """
    if store_url:
        try:
            url_backend(store_url, trees, read_only=True).close()
        except StoreNotFoundError:
            return False
        return True
    return (Path(data_dir) / STORE_DIR / DATA_FILE).is_file()


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
