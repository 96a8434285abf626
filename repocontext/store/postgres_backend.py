"""The PostgreSQL backend: the store's trees in one table of a PostgreSQL database (psycopg 3).

* Layout: one row per key in ``<prefix>kv (tree, k, v)``; ``bytea`` keys order bytewise, as
  LMDB's do (see :mod:`._pg_schema`).
* Writes: one READ COMMITTED transaction whose first statement locks the single row of
  ``<prefix>writer``, so writers of every process and server run one at a time, exactly like
  LMDB's single writer: the store's sequence, clock and fence registers are read and written
  inside that transaction. A transaction's puts and deletes are buffered (its own reads see
  them) and sent at commit in one statement each. A serialization failure or deadlock reruns
  the transaction; a connection lost before ``COMMIT`` was sent is retried on a new
  connection until the retry budget runs out, then raises ``StoreUnavailableError``; a
  connection lost while committing raises at once (the outcome is unknown, never partial).
* Reads: a REPEATABLE READ, READ ONLY transaction (one snapshot) whose first statement is
  retried with backoff on a lost connection for up to ``retry_seconds``; ranges are read in
  pages (keyset pagination).
* Locks: :meth:`PostgresBackend.exclusive` is a session-level advisory lock held by a
  connection of its own, so it goes with its holder's session, also when the process dies.
* Connections come from a :class:`psycopg_pool.ConnectionPool`; a broken one is dropped and
  replaced when it is handed back, so the backend recovers by itself when the server returns.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.rows import TupleRow
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from repocontext.errors import StoreError, StoreReadOnlyError, StoreUnavailableError
from repocontext.store._pg_schema import (
    Statements,
    StoreUrl,
    check_version,
    create_schema,
    parse_store_url,
)
from repocontext.store.backend import BackendStats

__all__ = ["PostgresBackend"]

T = TypeVar("T")
Conn = psycopg.Connection[TupleRow]
PAGE_ROWS: Final = 500
"""Rows per page when a range is read."""
_MAX_RERUNS: Final = 64
_FIRST_DELAY: Final = 0.02
_MAX_DELAY: Final = 0.5
_CONNECT_TIMEOUT: Final = 5
_RERUN_ERRORS: Final = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)
_LOST_ERRORS: Final = (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout)


class _Lost(Exception):
    """A connection failed before anything was committed (the attempt may be retried)."""


class _Rerun(Exception):
    """The database rolled the transaction back to resolve a conflict; run it again."""


class _ReadTxn:
    """A read snapshot: REPEATABLE READ, begun with the first statement.

    Without ``snapshot`` the reads run outside a transaction, each its own snapshot (for a
    single statement: one round trip instead of three).
    """

    def __init__(self, backend: PostgresBackend, *, snapshot: bool = True) -> None:
        self._backend = backend
        self._stmts = backend.statements
        self._snapshot = snapshot
        self._conn: Conn | None = None

    def _query(self, query: sql.Composed | sql.SQL, params: tuple[object, ...]) -> list[TupleRow]:
        if self._conn is not None:
            try:
                return self._conn.execute(query, params, binary=True).fetchall()
            except psycopg.Error as exc:
                raise self._backend.unavailable(exc, "a read failed") from exc
        return self._begin(query, params)

    def _begin(self, query: sql.Composed | sql.SQL, params: tuple[object, ...]) -> list[TupleRow]:
        # Nothing was read yet, so a lost connection costs nothing: take another and retry.
        backend = self._backend
        deadline = time.monotonic() + backend.url.retry_seconds
        delay = _FIRST_DELAY
        while True:
            conn: Conn | None = None
            try:
                conn = backend.connection(deadline)
                if self._snapshot:
                    with conn.pipeline():  # (BEGIN and the first read in one round trip)
                        conn.execute(self._stmts.begin_read)
                        cursor = conn.execute(query, params, binary=True)
                else:
                    cursor = conn.execute(query, params, binary=True)
                rows = cursor.fetchall()
            except _LOST_ERRORS as exc:
                if conn is not None:
                    backend.give_back(conn)
                if time.monotonic() + delay > deadline:
                    raise backend.unavailable(exc, "cannot read") from exc
                time.sleep(delay)
                delay = min(delay * 2, _MAX_DELAY)
                continue
            except psycopg.Error as exc:
                if conn is not None:
                    backend.give_back(conn)
                raise backend.unavailable(exc, "a read failed") from exc
            self._conn = conn
            return rows

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            if self._snapshot:
                # (a broken connection is dropped by the pool; nothing was written)
                with contextlib.suppress(psycopg.Error):
                    conn.execute("COMMIT")
            self._backend.give_back(conn)

    def get(self, tree: str, key: bytes) -> bytes | None:
        rows = self._query(self._stmts.get, (tree, key))
        return bytes(rows[0][0]) if rows else None

    def iterate(self, tree: str, start: bytes, stop: bytes | None) -> Iterator[tuple[bytes, bytes]]:
        while True:
            if stop is None:
                rows = self._query(self._stmts.page, (tree, start, PAGE_ROWS))
            else:
                rows = self._query(self._stmts.page_until, (tree, start, stop, PAGE_ROWS))
            for key, value in rows:
                yield bytes(key), bytes(value)
            if len(rows) < PAGE_ROWS:
                return
            start = bytes(rows[-1][0]) + b"\x00"  # (the smallest key after the page's last)

    def entries(self, tree: str) -> int:
        rows = self._query(self._stmts.count, (tree,))
        return int(rows[0][0])


class _WriteTxn:
    """A write transaction; puts and deletes wait in a buffer until :meth:`flush`."""

    def __init__(self, backend: PostgresBackend, conn: Conn) -> None:
        self._backend = backend
        self._stmts = backend.statements
        self._conn = conn
        self._pending: dict[str, dict[bytes, bytes | None]] = {}

    def _rows(self, query: sql.Composed | sql.SQL, params: tuple[object, ...]) -> list[TupleRow]:
        return self._conn.execute(query, params, binary=True).fetchall()

    def get(self, tree: str, key: bytes) -> bytes | None:
        pending = self._pending.get(tree)
        if pending is not None and key in pending:
            return pending[key]
        rows = self._rows(self._stmts.get, (tree, key))
        return bytes(rows[0][0]) if rows else None

    def get_many(self, tree: str, keys: list[bytes]) -> list[bytes | None]:
        pending = self._pending.get(tree, {})
        wanted = [key for key in keys if key not in pending]
        found: dict[bytes, bytes] = {}
        if wanted:
            rows = self._rows(self._stmts.get_many, (tree, wanted))
            found = {bytes(key): bytes(value) for key, value in rows}
        return [pending[key] if key in pending else found.get(key) for key in keys]

    def iterate(self, tree: str, start: bytes, stop: bytes | None) -> Iterator[tuple[bytes, bytes]]:
        while True:
            self.flush()  # the rows then include this transaction's own writes
            if stop is None:
                rows = self._rows(self._stmts.page, (tree, start, PAGE_ROWS))
            else:
                rows = self._rows(self._stmts.page_until, (tree, start, stop, PAGE_ROWS))
            for key, value in rows:
                yield bytes(key), bytes(value)
            if len(rows) < PAGE_ROWS:
                return
            start = bytes(rows[-1][0]) + b"\x00"

    def entries(self, tree: str) -> int:
        self.flush()
        return int(self._rows(self._stmts.count, (tree,))[0][0])

    def put(self, tree: str, key: bytes, value: bytes, *, append: bool = False) -> None:
        pending = self._pending.get(tree)
        if pending is None:
            pending = self._pending[tree] = {}
        pending[key] = bytes(value)

    def delete(self, tree: str, key: bytes) -> bool:
        pending = self._pending.get(tree)
        if pending is not None and key in pending:
            existed = pending[key] is not None
            pending[key] = None
            return existed
        # Nothing buffered for this key: deleting now keeps the order of its writes.
        return bool(self._rows(self._stmts.delete_one, (tree, key)))

    def bind(
        self, tree: str
    ) -> tuple[Callable[[bytes], bytes | None], Callable[[bytes, bytes], object]]:
        def get(key: bytes) -> bytes | None:
            return self.get(tree, key)

        def put(key: bytes, value: bytes) -> None:
            self.put(tree, key, value)

        return get, put

    def flush(self) -> None:
        """Send the buffered writes (one upsert and one delete statement at most)."""
        if not self._pending:
            return
        up_trees: list[str] = []
        up_keys: list[bytes] = []
        up_values: list[bytes] = []
        del_trees: list[str] = []
        del_keys: list[bytes] = []
        for tree, pending in self._pending.items():
            for key, value in pending.items():
                if value is None:
                    del_trees.append(tree)
                    del_keys.append(key)
                else:
                    up_trees.append(tree)
                    up_keys.append(key)
                    up_values.append(value)
        self._pending = {}
        if del_keys:
            self._conn.execute(self._stmts.delete_many, (del_trees, del_keys))
        if up_keys:
            self._conn.execute(self._stmts.upsert, (up_trees, up_keys, up_values))


class PostgresBackend:
    """Named trees in tables of a PostgreSQL database (see the module docstring)."""

    engine = "postgresql"

    def __init__(
        self,
        url: str,
        trees: list[str],
        *,
        read_only: bool = False,
    ) -> None:
        """Connect to the database of ``url`` and create the store's tables when missing.

        Raises:
            InvalidInputError: The URL is not a usable ``postgresql://`` store URL.
            StoreNotFoundError: ``read_only`` and the database holds no store tables.
            StoreUnavailableError: The database cannot be reached, or holds tables of an
                unknown newer schema.
        """
        self.url: StoreUrl = parse_store_url(url)
        self.path = self.url.shown
        self.read_only = read_only
        self.statements = Statements(self.url.table_prefix)
        self._trees = list(trees)
        self._closed = False
        self._lock = threading.Lock()
        self._pool: ConnectionPool[Conn] = ConnectionPool(
            self.url.conninfo,
            min_size=1,
            max_size=self.url.pool_size,
            kwargs={"autocommit": True, "connect_timeout": _CONNECT_TIMEOUT},
            open=False,
            name="repocontext-store",
            reconnect_timeout=max(self.url.retry_seconds, 1.0),
            timeout=max(self.url.retry_seconds, 1.0),
        )
        try:
            self._pool.open(wait=True, timeout=max(self.url.retry_seconds, 1.0))
            with self._pool.connection() as conn:
                if read_only:
                    check_version(conn, self.statements)
                else:
                    create_schema(conn, self.statements)
        except (psycopg.Error, PoolTimeout) as exc:
            self._pool.close()
            raise self.unavailable(exc, f"cannot open the store at {self.path}") from exc
        except StoreError:
            self._pool.close()
            raise

    # -- connections -------------------------------------------------------------------

    def connection(self, deadline: float) -> Conn:
        """Take a connection from the pool, waiting at most until ``deadline``.

        Raises:
            StoreUnavailableError: The store is closed.
            PoolTimeout: No connection came in time.
        """
        self._check_open()
        try:
            return self._pool.getconn(timeout=max(deadline - time.monotonic(), 0.05))
        except PoolClosed as exc:
            raise StoreUnavailableError("the store is closed") from exc

    def give_back(self, conn: Conn) -> None:
        """Return a connection to the pool (a broken one is replaced by a new one)."""
        try:
            self._pool.putconn(conn)
        except PoolClosed:  # closed meanwhile: the connection is not needed any more
            conn.close()

    def unavailable(
        self, exc: BaseException, context: str, *, applied_unknown: bool = False
    ) -> StoreUnavailableError:
        """Translate a database failure, with no password in its message."""
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if self.url.password:
            detail = detail.replace(self.url.password, "***")
        outcome = (
            "this write may have been applied: read it back before sending it again"
            if applied_unknown
            else "nothing was written; the write can be sent again"
        )
        return StoreUnavailableError(
            f"{context}: {detail}",
            hint=f"Check that PostgreSQL at {self.path} is running and reachable; reads retry "
            f"by themselves; {outcome}.",
        )

    # -- the protocol ------------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[_ReadTxn]:
        """Open a read snapshot (its first statement retries a lost connection).

        Raises:
            StoreUnavailableError: The store is closed or the database stayed unreachable.
        """
        self._check_open()
        txn = _ReadTxn(self)
        try:
            yield txn
        finally:
            txn.close()

    def get(self, tree: str, key: bytes) -> bytes | None:
        """Read one value (a single statement, retried on a lost connection).

        Raises:
            StoreUnavailableError: The store is closed or the database stayed unreachable.
        """
        self._check_open()
        txn = _ReadTxn(self, snapshot=False)
        try:
            return txn.get(tree, key)
        finally:
            txn.close()

    def write(self, fn: Callable[[_WriteTxn], T]) -> T:
        """Run ``fn`` in one durable write transaction, rerunning it after a conflict.

        Raises:
            StoreReadOnlyError: The store was opened read-only.
            StoreUnavailableError: The database could not be reached, or the connection
                broke while committing (then the write is either wholly applied or not).
            StoreError: Whatever ``fn`` raises (the transaction is then rolled back).
        """
        self._check_open()
        if self.read_only:
            raise StoreReadOnlyError(f"the store at {self.path} is open read-only")
        deadline = time.monotonic() + self.url.retry_seconds
        delay = _FIRST_DELAY
        for _ in range(_MAX_RERUNS):
            try:
                return self._write_once(fn, deadline)
            except _Rerun:
                continue
            except _Lost as lost:
                cause = lost.__cause__ or lost
                if time.monotonic() + delay > deadline:
                    raise self.unavailable(cause, "write failed; nothing was written") from cause
                time.sleep(delay)
                delay = min(delay * 2, _MAX_DELAY)
        raise StoreUnavailableError("the write kept conflicting with other writers")

    def _write_once(self, fn: Callable[[_WriteTxn], T], deadline: float) -> T:
        try:
            conn = self.connection(deadline)
        except PoolTimeout as exc:
            raise _Lost from exc
        committing = False
        try:
            conn.execute(self.statements.begin_write)
            txn = _WriteTxn(self, conn)
            result = fn(txn)
            committing = True  # (from here a lost connection leaves the outcome unknown)
            with conn.pipeline():  # the buffered writes and COMMIT in one round trip
                txn.flush()
                conn.execute("COMMIT")
            return result
        except _RERUN_ERRORS as exc:
            _rollback(conn)
            raise _Rerun from exc
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            _rollback(conn)
            if committing:
                raise self.unavailable(
                    exc,
                    "the connection broke while the write committed; it was applied "
                    "wholly or not at all",
                    applied_unknown=True,
                ) from exc
            raise _Lost from exc
        except psycopg.Error as exc:
            _rollback(conn)
            raise self.unavailable(exc, "write failed; nothing was written") from exc
        except BaseException:
            _rollback(conn)
            raise
        finally:
            self.give_back(conn)

    @contextmanager
    def exclusive(self, name: str) -> Iterator[bool]:
        """Hold the advisory lock ``name`` on a connection of its own for the block.

        Yields False, holding nothing, when another session holds it. The database drops
        the lock with its session, also when the holder's process is killed.

        Raises:
            StoreReadOnlyError: The store is open read-only.
            StoreUnavailableError: The database cannot be reached.
        """
        self._check_open()
        if self.read_only:
            raise StoreReadOnlyError(f"the store at {self.path} is open read-only")
        digest = hashlib.sha256(f"{self.url.table_prefix}\x00{name}".encode()).digest()
        key = int.from_bytes(digest[:8], "big", signed=True)
        try:
            conn = psycopg.connect(
                self.url.conninfo, autocommit=True, connect_timeout=_CONNECT_TIMEOUT
            )
        except psycopg.Error as exc:
            raise self.unavailable(exc, "cannot take the lock") from exc
        try:
            try:
                row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            except psycopg.Error as exc:
                raise self.unavailable(exc, "cannot take the lock") from exc
            yield bool(row and row[0])
        finally:
            conn.close()  # (ending the session releases the lock)

    def stats(self) -> BackendStats:
        """Return the database's and the tables' sizes and entries per tree.

        ``map_bytes`` is the whole database's size, ``used_bytes`` the key table's heap and
        ``file_bytes`` the store's tables with their indexes; all three are 0 on an engine
        without PostgreSQL's size functions.

        Raises:
            StoreUnavailableError: The store is closed or the database is unreachable.
        """
        with self.read() as txn:
            counts = {str(tree): int(n) for tree, n in txn._query(self.statements.counts, ())}
        entries = {name: counts.get(name, 0) for name in self._trees}
        sizes = self._sizes()
        return BackendStats("postgresql", self.path, *sizes, entries)

    def _sizes(self) -> tuple[int, int, int]:
        try:
            with self._pool.connection(timeout=max(self.url.retry_seconds, 1.0)) as conn:
                row = conn.execute(self.statements.sizes).fetchone()
        except (pg_errors.UndefinedFunction, pg_errors.FeatureNotSupported):
            return 0, 0, 0  # (a PostgreSQL-compatible engine without the size functions)
        except (psycopg.Error, PoolTimeout) as exc:
            raise self.unavailable(exc, "cannot read the store's size") from exc
        return (0, 0, 0) if row is None else (int(row[0]), int(row[1]), int(row[2]))

    @property
    def location(self) -> str:
        """The store URL without its password."""
        return self.url.shown

    def ping(self) -> float:
        """Return the seconds one round trip to the database takes.

        Connections the pool kept across a database restart fail once each and are dropped;
        the probe moves on to the next for up to a second, without waiting between tries.

        Raises:
            StoreUnavailableError: The store is closed or the database is unreachable.
        """
        self._check_open()
        deadline = time.monotonic() + min(max(self.url.retry_seconds, 0.2), 1.0)
        while True:
            try:
                conn = self.connection(deadline)
            except PoolTimeout as exc:
                raise self.unavailable(exc, "the database does not answer") from exc
            try:
                started = time.perf_counter()
                conn.execute("SELECT 1").fetchone()
                return time.perf_counter() - started
            except psycopg.Error as exc:
                if time.monotonic() >= deadline:
                    raise self.unavailable(exc, "the database does not answer") from exc
            finally:
                self.give_back(conn)

    def close(self) -> None:
        """Close every connection (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._pool.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailableError("the store is closed")


def _rollback(conn: Conn) -> None:
    if conn.closed or conn.broken:
        return
    with contextlib.suppress(psycopg.Error):  # (the pool drops a connection it cannot reset)
        conn.execute("ROLLBACK")
