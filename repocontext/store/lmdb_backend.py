"""The LMDB backend: the only module that imports ``lmdb``.

* Durability: the environment is opened with ``sync`` and ``metasync``; a write transaction
  returns only after LMDB's commit has reached the disk.
* Growth: a ``MapFullError`` aborts the transaction, doubles the map (up to ``max_map_bytes``)
  and runs the transaction again. Another process growing the map shows up as
  ``MapResizedError``; the map is adopted and the transaction retried.
* Concurrency: LMDB serializes writers across threads and processes; readers never block.
  A process-local gate keeps transactions out while the map is resized, which LMDB requires.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Final, TypeVar, cast

import lmdb

from repocontext.errors import (
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
    StoreUnavailableError,
)
from repocontext.store.backend import BackendStats

__all__ = ["DATA_FILE", "LmdbBackend"]

T = TypeVar("T")
DEFAULT_MAP_BYTES: Final = 256 * 1024 * 1024
DATA_FILE: Final = "data.mdb"
"""The file an LMDB environment keeps its records in (in its directory)."""
_MAX_RETRIES: Final = 64


class _ResizeGate:
    """Many transactions at once, or one map resize alone.

    Transactions enter without a lock: each thread counts its own open transactions and then
    checks the resize flag; the resizer raises the flag and then waits for every count to
    reach zero. The interpreter lock orders those steps, so either the resizer sees the
    count or the transaction sees the flag and backs out until the resize is over.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._resizing = False
        self._local = threading.local()
        self._counters: weakref.WeakSet[_Count] = weakref.WeakSet()

    def __enter__(self) -> None:
        """Enter as one of many transactions (waits while a resize runs)."""
        counter = self._counter()
        counter.n += 1
        while self._resizing:
            counter.n -= 1
            with self._lock:
                while self._resizing:
                    self._cond.wait()
            counter.n += 1

    def __exit__(self, *exc: object) -> None:
        self._local.counter.n -= 1

    def shared(self) -> _ResizeGate:
        """Return the gate itself as the shared-entry context manager."""
        return self

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the gate alone: no transaction of this process is open inside.

        The calling thread must not be inside the gate itself.
        """
        with self._lock:
            while self._resizing:
                self._cond.wait()
            self._resizing = True
        try:
            while any(c.n for c in list(self._counters)):
                time.sleep(0.0002)  # open transactions are short; they finish on their own
            yield
        finally:
            with self._lock:
                self._resizing = False
                self._cond.notify_all()

    def _counter(self) -> _Count:
        counter: _Count | None = getattr(self._local, "counter", None)
        if counter is None:
            counter = self._local.counter = _Count()
            with self._lock:
                self._counters.add(counter)  # dropped by itself when its thread ends
        return counter


class _Count:
    """One thread's number of open transactions."""

    __slots__ = ("__weakref__", "n")

    def __init__(self) -> None:
        self.n = 0


class _Txn:
    """Adapter from an LMDB transaction to the backend's ReadTxn/WriteTxn protocols."""

    def __init__(self, txn: lmdb.Transaction, dbs: dict[str, lmdb._Database]) -> None:
        self._txn = txn
        self._dbs = dbs

    def _db(self, tree: str) -> lmdb._Database:
        try:
            return self._dbs[tree]
        except KeyError:
            raise StoreUnavailableError(f"tree {tree!r} is not open in this store") from None

    def get(self, tree: str, key: bytes) -> bytes | None:
        db = self._dbs.get(tree) or self._db(tree)
        value = self._txn.get(key, db=db)
        return value if value is None or type(value) is bytes else bytes(value)

    def iterate(self, tree: str, start: bytes, stop: bytes | None) -> Iterator[tuple[bytes, bytes]]:
        cursor = self._txn.cursor(db=self._db(tree))
        if not cursor.set_range(start):
            return
        for key, value in cursor.iternext():
            key_bytes = bytes(key)
            if stop is not None and key_bytes >= stop:
                return
            yield key_bytes, bytes(value)

    def entries(self, tree: str) -> int:
        return int(self._txn.stat(self._db(tree))["entries"])

    def put(self, tree: str, key: bytes, value: bytes, *, append: bool = False) -> None:
        self._txn.put(key, value, db=self._dbs.get(tree) or self._db(tree), append=append)

    def bind(
        self, tree: str
    ) -> tuple[Callable[[bytes], bytes | None], Callable[[bytes, bytes], object]]:
        db = self._dbs.get(tree) or self._db(tree)
        # Write transactions run with buffers=False, so get() returns bytes, never a view.
        get = cast(Callable[[bytes], bytes | None], partial(self._txn.get, db=db))
        return get, partial(self._txn.put, db=db)

    def get_many(self, tree: str, keys: list[bytes]) -> list[bytes | None]:
        # Write transactions run with buffers=False, so get() returns bytes, never a view.
        get = cast(Callable[..., bytes | None], self._txn.get)
        db = self._dbs.get(tree) or self._db(tree)
        return [get(key, db=db) for key in keys]

    def delete(self, tree: str, key: bytes) -> bool:
        return bool(self._txn.delete(key, db=self._db(tree)))


class LmdbBackend:
    """Named trees in one LMDB environment (a directory)."""

    engine = "lmdb"

    def __init__(
        self,
        path: Path,
        trees: list[str],
        *,
        read_only: bool = False,
        map_bytes: int = DEFAULT_MAP_BYTES,
        max_map_bytes: int | None = None,
    ) -> None:
        """Open (creating when writable) the environment at ``path``.

        Raises:
            StoreReadOnlyError: The directory cannot be written and ``read_only`` is False.
            StoreUnavailableError: The environment cannot be opened.
        """
        self.path = path
        self.read_only = read_only
        self._max_map = max_map_bytes
        self._gate = _ResizeGate()
        self._writer = threading.Lock()
        self._closed = False
        try:
            if not read_only:
                path.mkdir(parents=True, exist_ok=True)
                _probe_writable(path)
            self._env = lmdb.open(
                str(path),
                map_size=max(map_bytes, 1 << 20),
                max_dbs=len(trees) + 4,
                sync=True,
                metasync=True,
                readonly=read_only,
                lock=True,
                readahead=False,
                max_readers=256,
                create=not read_only,
            )
        except lmdb.Error as exc:
            raise _translate(exc, f"cannot open the store at {path}") from exc
        except OSError as exc:
            raise _translate_os(exc, f"cannot open the store at {path}") from exc
        self._dbs = self._open_trees(trees)

    def _open_trees(self, trees: list[str]) -> dict[str, lmdb._Database]:
        dbs: dict[str, lmdb._Database] = {}
        try:
            if self.read_only:
                for name in trees:
                    try:
                        dbs[name] = self._env.open_db(name.encode(), create=False)
                    except lmdb.NotFoundError:
                        continue  # a read-only view of a store that never held this tree
                return dbs
            for _ in range(_MAX_RETRIES):
                try:
                    with self._env.begin(write=True) as txn:
                        for name in trees:
                            dbs[name] = self._env.open_db(name.encode(), txn=txn, create=True)
                    break
                except lmdb.MapResizedError:
                    self._env.set_mapsize(0)  # another process grew the map since we opened
        except lmdb.Error as exc:
            raise _translate(exc, f"cannot open the trees of {self.path}") from exc
        return dbs

    @contextmanager
    def read(self) -> Iterator[_Txn]:
        """Open a read snapshot.

        Raises:
            StoreUnavailableError: The store is closed or broken.
        """
        self._check_open()
        for _ in range(_MAX_RETRIES):
            with self._gate:
                try:
                    txn = self._env.begin(write=False, buffers=False)
                except lmdb.MapResizedError:
                    txn = None
                except lmdb.Error as exc:
                    raise _translate(exc, "cannot begin a read") from exc
                if txn is not None:
                    try:
                        yield _Txn(txn, self._dbs)
                    finally:
                        txn.abort()
                    return
            self._adopt_map()  # outside the gate: adopting the new size needs it alone
        raise StoreUnavailableError("the map kept changing size under this reader")

    def get(self, tree: str, key: bytes) -> bytes | None:
        """Read one value in its own snapshot (the point-read fast path).

        Raises:
            StoreUnavailableError: The store is closed or broken.
        """
        self._check_open()
        db = self._dbs.get(tree)
        if db is None:
            return None
        for _ in range(_MAX_RETRIES):
            try:
                with self._gate:
                    txn = self._env.begin(db=db, buffers=False)
                    try:
                        value: bytes | None = txn.get(key)
                    finally:
                        txn.abort()
                return value
            except lmdb.MapResizedError:
                self._adopt_map()
            except lmdb.Error as exc:
                raise _translate(exc, "cannot read") from exc
        raise StoreUnavailableError("the map kept changing size under this reader")

    def write(self, fn: Callable[[_Txn], T]) -> T:
        """Run ``fn`` in a durable write transaction, growing the map as needed.

        Raises:
            StoreReadOnlyError: The store was opened read-only or the disk refuses writes.
            StoreFullError: The disk or ``max_map_bytes`` leaves no room.
            StoreError: Whatever ``fn`` raises (the transaction is then rolled back).
        """
        self._check_open()
        if self.read_only:
            raise StoreReadOnlyError(f"the store at {self.path} is open read-only")
        for _ in range(_MAX_RETRIES):
            try:
                with self._writer, self._gate.shared():
                    return self._run_write(fn)
            except lmdb.MapFullError:
                self._grow()
            except lmdb.MapResizedError:
                self._adopt_map()
        raise StoreFullError("the store could not make room for this write")

    def _run_write(self, fn: Callable[[_Txn], T]) -> T:
        txn = self._env.begin(write=True)
        try:
            result = fn(_Txn(txn, self._dbs))
            txn.commit()
            return result
        except (lmdb.MapFullError, lmdb.MapResizedError):
            txn.abort()
            raise
        except lmdb.Error as exc:
            txn.abort()
            raise _translate(exc, "write failed; nothing was written") from exc
        except BaseException:
            txn.abort()
            raise

    def _grow(self) -> None:
        with self._gate.exclusive():
            current = int(self._env.info()["map_size"])
            target = current * 2
            if self._max_map is not None:
                if current >= self._max_map:
                    raise StoreFullError(
                        f"the store reached its map limit of {self._max_map} bytes",
                    )
                target = min(target, self._max_map)
            try:
                self._env.set_mapsize(target)
            except lmdb.Error as exc:
                raise _translate(exc, "cannot grow the store") from exc

    def _adopt_map(self) -> None:
        with self._gate.exclusive():
            self._env.set_mapsize(0)

    @contextmanager
    def exclusive(self, name: str) -> Iterator[bool]:
        """Hold the lock ``name`` against other processes (``flock`` on a file of the store).

        Yields False, holding nothing, when another process holds it. The kernel drops the
        lock with its holder, also when the process is killed.
        """
        if self.read_only:
            raise StoreReadOnlyError(f"the store at {self.path} is open read-only")
        locks = self.path / "locks"
        locks.mkdir(exist_ok=True)
        digest = hashlib.sha256(name.encode()).hexdigest()[:32]
        fd = os.open(locks / f"{digest}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # (closing releases the lock)

    def stats(self) -> BackendStats:
        """Return map size, page use, file size and entries per tree."""
        self._check_open()
        info = self._env.info()
        stat = self._env.stat()
        used = (int(info["last_pgno"]) + 1) * int(stat["psize"])
        data_file = self.path / DATA_FILE
        file_bytes = data_file.stat().st_blocks * 512 if data_file.exists() else 0
        with self.read() as txn:
            entries = {name: txn.entries(name) for name in self._dbs}
        return BackendStats(
            "lmdb", str(self.path), int(info["map_size"]), used, file_bytes, entries
        )

    @property
    def location(self) -> str:
        """The environment's directory."""
        return str(self.path)

    def ping(self) -> float:
        """Return the seconds a read transaction takes to begin and end.

        Raises:
            StoreUnavailableError: The store is closed or broken.
        """
        started = time.perf_counter()
        with self.read():
            pass
        return time.perf_counter() - started

    def close(self) -> None:
        """Close the environment (idempotent)."""
        if not self._closed:
            self._closed = True
            self._env.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailableError("the store is closed")


def _probe_writable(path: Path) -> None:
    probe = path / f".write-probe-{os.getpid()}-{threading.get_ident()}"
    try:
        with open(probe, "wb") as handle:
            handle.write(b"ok")
        probe.unlink()
    except OSError as exc:
        raise _translate_os(exc, f"the data directory {path} cannot be written") from exc


def _translate(exc: lmdb.Error, context: str) -> StoreError:
    if isinstance(exc, lmdb.ReadonlyError):
        return StoreReadOnlyError(f"{context}: the store is read-only ({exc})")
    if isinstance(exc, lmdb.MapFullError):
        return StoreFullError(f"{context}: the map is full ({exc})")
    code = getattr(exc, "errno", None) or _errno_in(str(exc))
    if code in (errno.EACCES, errno.EROFS, errno.EPERM):
        return StoreReadOnlyError(f"{context}: {exc}")
    if code in (errno.ENOSPC, errno.EDQUOT):
        return StoreFullError(f"{context}: the disk is full ({exc})")
    return StoreUnavailableError(f"{context}: {exc}")


def _translate_os(exc: OSError, context: str) -> StoreError:
    if exc.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
        return StoreReadOnlyError(f"{context}: {exc.strerror}")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StoreFullError(f"{context}: the disk is full")
    return StoreUnavailableError(f"{context}: {exc}")


def _errno_in(text: str) -> int | None:
    lowered = text.lower()
    if "no space left" in lowered:
        return errno.ENOSPC
    if "read-only file system" in lowered:
        return errno.EROFS
    if "permission denied" in lowered:
        return errno.EACCES
    return None
