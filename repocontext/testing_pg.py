"""A throwaway PostgreSQL cluster for tests and benchmarks (the PostgreSQL store backend).

:class:`PostgresCluster` makes a temporary directory, runs ``initdb`` in it and starts a
postmaster on a free loopback port (its socket directory inside the temporary directory too),
then creates a database and hands out its URL. It can be SIGKILLed mid-write and restarted on
the same port and data, which is how the tests prove the backend survives a crashed server.

The server binaries (``initdb``, ``postgres``) come from Debian's ``postgresql`` package; they
are looked up on ``PATH`` and then under ``/usr/lib/postgresql/<version>/bin``. ``initdb``
refuses to run as root, so as root the cluster runs as the ``postgres`` user (``runuser``) in a
directory that user owns. The postmaster is a child process of the caller (not daemonized by
``pg_ctl``), so a killed one is reaped at once and a restart finds no stale lock.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Final

import psycopg

from repocontext.testing import free_port

__all__ = ["PostgresCluster", "PostgresMissingError", "find_postgres_bin"]

INSTALL_HINT: Final = (
    "the PostgreSQL server binaries (initdb, postgres) were not found: install them with "
    "`apt-get install postgresql` (Debian/Ubuntu) and put /usr/lib/postgresql/15/bin on PATH"
)
_SEARCH_DIRS: Final = ("/usr/lib/postgresql", "/usr/local/pgsql")
_START_SECONDS: Final = 30.0
DATABASE: Final = "repocontext"


class PostgresMissingError(RuntimeError):
    """The PostgreSQL server binaries are not installed."""


def find_postgres_bin(path: str | None = None, search_dirs: tuple[str, ...] = _SEARCH_DIRS) -> Path:
    """Return the directory holding ``initdb`` and ``postgres``.

    ``path`` is the search path (default: ``PATH``), then ``search_dirs``'s ``*/bin``.

    Raises:
        PostgresMissingError: They are neither on the path nor in an install directory.
    """
    found = shutil.which("initdb", path=path)
    if found and shutil.which("postgres", path=path):
        return Path(found).resolve().parent
    for root in search_dirs:
        for candidate in sorted(Path(root).glob("*/bin"), reverse=True):
            if (candidate / "initdb").is_file() and (candidate / "postgres").is_file():
                return candidate
    raise PostgresMissingError(INSTALL_HINT)


class PostgresCluster:
    """A PostgreSQL cluster in a temporary directory; ``with`` starts and removes it."""

    def __init__(self, *, bin_dir: Path | None = None) -> None:
        """Prepare a cluster (nothing runs until :meth:`start`).

        Raises:
            PostgresMissingError: The server binaries are not installed.
        """
        self.bin_dir = bin_dir or find_postgres_bin()
        self.root: Path | None = None
        self.port = 0
        self._server: subprocess.Popen[bytes] | None = None
        self._as_postgres = os.geteuid() == 0

    @property
    def url(self) -> str:
        """The URL of the cluster's ``repocontext`` database."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{DATABASE}"

    def store_url(self, table_prefix: str, *, retry_seconds: float | None = None) -> str:
        """A store URL of the database whose tables are named ``<table_prefix>kv`` etc."""
        retry = "" if retry_seconds is None else f"&retry_seconds={retry_seconds:g}"
        return f"{self.url}?table_prefix={table_prefix}{retry}"

    def start(self) -> PostgresCluster:
        """Create the cluster, start it and create the database; return ``self``.

        Raises:
            RuntimeError: ``initdb`` or the server failed (its log is in the message).
        """
        self.root = Path(tempfile.mkdtemp(prefix="repocontext-pg-"))
        if self._as_postgres:
            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                raise PostgresMissingError(
                    f"initdb refuses to run as root and there is no postgres user; {INSTALL_HINT}"
                ) from None
            os.chown(self.root, user.pw_uid, user.pw_gid)
        done = subprocess.run(
            [
                *self._user(),
                str(self.bin_dir / "initdb"),
                "-D",
                str(self.root / "data"),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",  # (only initdb's own files; the server itself fsyncs)
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            raise RuntimeError(f"initdb failed: {done.stderr.strip()[-2000:]}")
        self.port = free_port()
        self._launch()
        with psycopg.connect(self._admin_url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        return self

    def kill(self) -> None:
        """SIGKILL the postmaster (a crash: no shutdown, no checkpoint) and reap it."""
        server = self._signal(signal.SIGKILL)
        if server is not None:
            server.wait(timeout=_START_SECONDS)

    def restart(self) -> None:
        """Start the server again on the same port and data (after :meth:`kill` or not).

        Raises:
            RuntimeError: The server did not come back (its log is in the message).
        """
        if self._server is not None:
            self._shutdown()
        self._launch()

    def stop(self) -> None:
        """Shut the server down and delete the cluster's directory."""
        if self._server is not None:
            self._shutdown()
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def __enter__(self) -> PostgresCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _user(self) -> list[str]:
        return ["runuser", "-u", "postgres", "--"] if self._as_postgres else []

    def _admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _launch(self) -> None:
        deadline = time.monotonic() + _START_SECONDS
        while not self._try_launch(deadline):
            # A killed predecessor's backends may still hold its shared memory for a moment.
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not start: {self._log_tail()}")
            time.sleep(0.2)

    def _try_launch(self, deadline: float) -> bool:
        root = self._root()
        with open(root / "server.log", "ab") as log:
            self._server = subprocess.Popen(
                [
                    *self._user(),
                    str(self.bin_dir / "postgres"),
                    "-D",
                    str(root / "data"),
                    "-p",
                    str(self.port),
                    "-k",
                    str(root),
                    "-c",
                    "listen_addresses=127.0.0.1",
                    "-c",
                    "fsync=on",
                    "-c",
                    "synchronous_commit=on",
                    "-c",
                    "max_connections=200",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        while time.monotonic() < deadline:
            if self._server.poll() is not None:
                self._server = None
                return False
            try:
                psycopg.connect(self._admin_url(), connect_timeout=2).close()
                return True
            except psycopg.OperationalError:
                time.sleep(0.05)
        raise RuntimeError(f"PostgreSQL did not start: {self._log_tail()}")

    def _shutdown(self) -> None:
        server = self._signal(signal.SIGINT)  # fast shutdown
        if server is None:
            return
        try:
            server.wait(timeout=_START_SECONDS)
        except subprocess.TimeoutExpired:
            self._server = server
            self.kill()

    def _signal(self, signum: int) -> subprocess.Popen[bytes] | None:
        """Send ``signum`` to the postmaster; return its launcher process, now forgotten."""
        server, self._server = self._server, None
        if server is None:
            return None
        pid = self._postmaster_pid()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)
        return server

    def _postmaster_pid(self) -> int | None:
        try:
            text = (self._root() / "data" / "postmaster.pid").read_text()
        except OSError:
            return None
        first = text.split("\n", 1)[0].strip()
        return int(first) if first.isdigit() else None

    def _root(self) -> Path:
        if self.root is None:
            raise RuntimeError("the cluster was not started")
        return self.root

    def _log_tail(self) -> str:
        try:
            return (self._root() / "server.log").read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"
