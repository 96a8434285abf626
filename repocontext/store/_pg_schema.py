"""The PostgreSQL backend's store URL, its tables and its SQL statements.

A store URL is a libpq URL (``postgresql://user:password@host:port/dbname?sslmode=...``) with
two optional parameters of its own, taken out before the URL reaches libpq:

* ``table_prefix``: the tables' name prefix (default ``repocontext_``), so several stores can
  share one database;
* ``retry_seconds``: how long a read keeps retrying a lost connection (default 5);
* ``pool_size``: the most connections one process keeps open (default 16).

The store lives in three tables: ``<prefix>kv`` (every tree's keys and values, ordered by
``(tree, k)``; ``bytea`` compares bytewise, the key order the store needs), ``<prefix>writer``
(one row whose lock serializes writers) and ``<prefix>schema`` (the schema version).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql

from repocontext.errors import InvalidInputError, StoreNotFoundError, StoreUnavailableError
from repocontext.store.urls import URL_SCHEMES, redact_url

__all__ = [
    "DEFAULT_POOL_SIZE",
    "DEFAULT_RETRY_SECONDS",
    "DEFAULT_TABLE_PREFIX",
    "SCHEMA_VERSION",
    "Statements",
    "StoreUrl",
    "create_schema",
    "parse_store_url",
]

DEFAULT_TABLE_PREFIX: Final = "repocontext_"
DEFAULT_RETRY_SECONDS: Final = 5.0
SCHEMA_VERSION: Final = 1
_PREFIX_RE: Final = re.compile(r"[a-z_][a-z0-9_]{0,39}")
_OWN_PARAMS: Final = ("table_prefix", "retry_seconds", "pool_size")
DEFAULT_POOL_SIZE: Final = 16
_SCHEMA_ATTEMPTS: Final = 5


@dataclass(frozen=True, slots=True)
class StoreUrl:
    """A parsed store URL.

    Attributes:
        conninfo: The URL libpq gets (without this module's own parameters).
        shown: The URL with its password removed, for messages and reports.
        password: The password, to scrub from messages (empty when none).
        table_prefix: Prefix of the store's table names.
        retry_seconds: How long reads retry a lost connection.
        pool_size: The most connections one process keeps open.
    """

    conninfo: str
    shown: str
    password: str
    table_prefix: str
    retry_seconds: float
    pool_size: int = DEFAULT_POOL_SIZE


def parse_store_url(url: str) -> StoreUrl:
    """Split a ``postgresql://`` store URL into what libpq gets and this backend's options.

    Raises:
        InvalidInputError: The scheme is not PostgreSQL's or an own parameter is invalid.
    """
    parts = urlsplit(url)
    if parts.scheme not in URL_SCHEMES:
        raise InvalidInputError(
            f"the store URL scheme {parts.scheme or '(none)'!r} is not supported",
            hint="Use postgresql://user@host:port/dbname, or leave store_url unset for the "
            "embedded LMDB store in the data directory.",
        )
    params = parse_qsl(parts.query, keep_blank_values=True)
    own = {name: value for name, value in params if name in _OWN_PARAMS}
    rest = [(name, value) for name, value in params if name not in _OWN_PARAMS]
    prefix = own.get("table_prefix", DEFAULT_TABLE_PREFIX)
    if not _PREFIX_RE.fullmatch(prefix):
        raise InvalidInputError(
            f"table_prefix {prefix[:60]!r} is not a valid table name prefix",
            hint="Use lower-case letters, digits and underscores (at most 40, not a digit first).",
        )
    retry = _retry_seconds(own.get("retry_seconds"))
    pool_size = _pool_size(own.get("pool_size"))
    conninfo = urlunsplit(parts._replace(query=urlencode(rest)))
    password = parts.password or dict(rest).get("password", "")
    return StoreUrl(conninfo, redact_url(conninfo), password, prefix, retry, pool_size)


def _pool_size(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_POOL_SIZE
    if not raw.isdigit() or not 2 <= int(raw) <= 1000:
        raise InvalidInputError(
            f"pool_size {raw[:20]!r} is not a number of connections between 2 and 1000",
            hint="Pass e.g. ?pool_size=16 in the store URL.",
        )
    return int(raw)


def _retry_seconds(raw: str | None) -> float:
    if raw is None:
        return DEFAULT_RETRY_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 3600:
        raise InvalidInputError(
            f"retry_seconds {raw[:20]!r} is not a number of seconds between 0 and 3600",
            hint="Pass e.g. ?retry_seconds=5 in the store URL.",
        )
    return value


class Statements:
    """The SQL of one store (its table names filled in), composed once."""

    def __init__(self, prefix: str) -> None:
        """Compose every statement for tables named ``<prefix>kv`` and so on."""
        kv = sql.Identifier(f"{prefix}kv")
        writer = sql.Identifier(f"{prefix}writer")
        self.kv_name = f"{prefix}kv"
        self.schema_table = sql.Identifier(f"{prefix}schema")
        self.create = [
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (tree TEXT NOT NULL, k BYTEA NOT NULL, "
                "v BYTEA NOT NULL, PRIMARY KEY (tree, k))"
            ).format(kv),
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)"
            ).format(writer),
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (id INTEGER PRIMARY KEY, version INTEGER NOT NULL)"
            ).format(self.schema_table),
            sql.SQL("INSERT INTO {} (id, n) VALUES (1, 0) ON CONFLICT (id) DO NOTHING").format(
                writer
            ),
            sql.SQL(
                "INSERT INTO {} (id, version) VALUES (1, {}) ON CONFLICT (id) DO NOTHING"
            ).format(self.schema_table, sql.Literal(SCHEMA_VERSION)),
        ]
        self.version = sql.SQL("SELECT version FROM {} WHERE id = 1").format(self.schema_table)
        self.begin_write = sql.SQL(
            "BEGIN ISOLATION LEVEL READ COMMITTED; UPDATE {} SET n = n + 1 WHERE id = 1"
        ).format(writer)
        self.begin_read = sql.SQL("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        self.get = sql.SQL("SELECT v FROM {} WHERE tree = %s AND k = %s").format(kv)
        self.get_many = sql.SQL("SELECT k, v FROM {} WHERE tree = %s AND k = ANY(%s)").format(kv)
        self.page = sql.SQL(
            "SELECT k, v FROM {} WHERE tree = %s AND k >= %s ORDER BY k LIMIT %s"
        ).format(kv)
        self.page_until = sql.SQL(
            "SELECT k, v FROM {} WHERE tree = %s AND k >= %s AND k < %s ORDER BY k LIMIT %s"
        ).format(kv)
        self.count = sql.SQL("SELECT count(*) FROM {} WHERE tree = %s").format(kv)
        self.counts = sql.SQL("SELECT tree, count(*) FROM {} GROUP BY tree").format(kv)
        self.upsert = sql.SQL(
            "INSERT INTO {} (tree, k, v) SELECT * FROM unnest(%s::text[], %s::bytea[], "
            "%s::bytea[]) ON CONFLICT (tree, k) DO UPDATE SET v = EXCLUDED.v"
        ).format(kv)
        self.delete_many = sql.SQL(
            "DELETE FROM {} WHERE (tree, k) IN (SELECT * FROM unnest(%s::text[], %s::bytea[]))"
        ).format(kv)
        self.delete_one = sql.SQL("DELETE FROM {} WHERE tree = %s AND k = %s RETURNING 1").format(
            kv
        )
        self.sizes = sql.SQL(
            "SELECT pg_database_size(current_database()), pg_relation_size({kv}), "
            "pg_total_relation_size({kv}) + pg_total_relation_size({writer}) "
            "+ pg_total_relation_size({schema})"
        ).format(
            kv=sql.Literal(f"{prefix}kv"),
            writer=sql.Literal(f"{prefix}writer"),
            schema=sql.Literal(f"{prefix}schema"),
        )


def create_schema(conn: psycopg.Connection[tuple[object, ...]], stmts: Statements) -> None:
    """Create the store's tables when missing and check their schema version.

    Two processes creating the same table at once can collide in the catalog; the loser
    tries again and then finds the tables.

    Raises:
        StoreUnavailableError: The tables were made by a newer schema version.
    """
    for attempt in range(_SCHEMA_ATTEMPTS):
        try:
            with conn.transaction():
                for statement in stmts.create:
                    conn.execute(statement)
            break
        except (pg_errors.UniqueViolation, pg_errors.DuplicateTable, pg_errors.DuplicateObject):
            if attempt == _SCHEMA_ATTEMPTS - 1:
                raise
    check_version(conn, stmts)


def check_version(conn: psycopg.Connection[tuple[object, ...]], stmts: Statements) -> None:
    """Refuse tables whose schema version is newer than this code knows.

    Raises:
        StoreNotFoundError: The tables are missing.
        StoreUnavailableError: The version is unknown.
    """
    try:
        row = conn.execute(stmts.version).fetchone()
    except pg_errors.UndefinedTable:
        raise StoreNotFoundError(
            "the database holds no repocontext store (its tables are missing)",
            hint="Open it once without read-only (e.g. `repocontext serve --store-url ...`) "
            "to create the tables, or check the table_prefix of the store URL.",
        ) from None
    version = int(str(row[0])) if row else 0
    if version > SCHEMA_VERSION:
        raise StoreUnavailableError(
            f"the store's tables have schema version {version}; this repocontext knows up to "
            f"{SCHEMA_VERSION}",
            hint="Upgrade repocontext to the version that wrote this store.",
        )
