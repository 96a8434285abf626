"""The memory archive: periodic and shutdown exports of the memory tree, restore at start.

One file, ``<archive dir>/memory.rcarch`` (:data:`ARCHIVE_NAME`), in the store's archive
format (:mod:`repocontext.store.archive`), holds every record of the memory tree — entries,
their tags, links, expiry and claim state, tombstones of forgotten entries included. Each
export is atomic and keeps the archive it replaces as ``memory.rcarch.prev``.

When it exports: :meth:`MemoryArchiver.start` runs a daemon thread that exports every
``interval_seconds``, and :meth:`MemoryArchiver.stop` exports once more. Both skip the export
when the memory tree did not change since the last one: the store keeps the change-feed
sequence of the last export (a feed cursor named after the archive path), and the check reads
only the feed entries written since, looking for one in the memory tree. Skipping unchanged
exports also keeps ``.prev`` meaningful: it always holds the state before the last change
that was archived. :meth:`MemoryArchiver.export_now` exports unconditionally.

Restore modes (:meth:`MemoryArchiver.restore`):

* ``auto`` — merge the archive only when the memory tree holds no record at all: no live,
  expired or tombstoned entry. A store with only tombstones saw entries being forgotten, so
  it is not empty. This is the "the data directory was lost" case.
* ``always`` — merge every time. The merge goes through the CRDT, so local changes newer than
  the archive survive and a second restore of the same archive changes nothing.
* ``off`` — never restore.

A damaged archive is refused with ``archive.corrupt`` before anything is written. The next
export moves a damaged archive aside (``memory.rcarch.damaged``) rather than letting it
replace the good previous snapshot.

Several processes of one store (``serve --workers N``, or servers sharing a PostgreSQL store
and one archive directory) export one at a time: an export holds the store-wide lock
:func:`export_lock` of its archive path. A periodic export that finds it held skips its turn
(the other process is writing the same tree); :meth:`MemoryArchiver.export_now` waits for it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from repocontext.errors import (
    ArchiveCorruptError,
    FeedTrimmedError,
    InvalidInputError,
    PathNotFoundError,
    RepoContextError,
    StoreReadOnlyError,
    StoreUnavailableError,
)
from repocontext.store import MEMORY, STRUCTURAL, ArchiveReport, Store
from repocontext.store.archive import export_archive, import_archive, read_archive
from repocontext.store.keys import parse_key, repo_key

__all__ = [
    "ARCHIVE_NAME",
    "RESTORE_MODES",
    "ArchiveStatus",
    "MemoryArchiver",
    "RestoreMode",
    "RestoreReport",
    "export_lock",
]

ARCHIVE_NAME: Final = "memory.rcarch"
"""The archive's file name inside the archive directory."""
RestoreMode = Literal["auto", "always", "off"]
RESTORE_MODES: Final = ("auto", "always", "off")
_FEED_PAGE: Final = 5000
_EXPORT_WAIT_SECONDS: Final = 30.0
"""How long an explicit export waits for another process's export of the same archive."""
_log = logging.getLogger(__name__)


def export_lock(path: Path) -> str:
    """The name of the store-wide lock held while the archive at ``path`` is written."""
    return "archive-export/" + hashlib.sha256(str(Path(path).absolute()).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What a restore did.

    Attributes:
        path: The archive merged.
        mode: ``auto``, ``always`` or ``merge`` (an explicit restore of a chosen file).
        records: Records in the archive.
        changed: Records the merge changed (0 when the store already held everything).
        into_empty: The memory tree held no record before the merge.
    """

    path: str
    mode: str
    records: int
    changed: int
    into_empty: bool


@dataclass(frozen=True, slots=True)
class ArchiveStatus:
    """The archive file and whether the store holds changes it lacks.

    Attributes:
        path: The archive file.
        exists: The file exists.
        records: Records it holds (0 when absent).
        written_at: When it was written (epoch seconds, from the file), or ``None``.
        age_seconds: Seconds since then by the store's clock, or ``None``.
        previous_exists: The previous snapshot (``<name>.prev``) exists.
        memory_records: Live entries in the store's memory tree.
        pending: The memory tree changed since the last export (the next one will write).
    """

    path: str
    exists: bool
    records: int
    written_at: float | None
    age_seconds: float | None
    previous_exists: bool
    memory_records: int
    pending: bool


class MemoryArchiver:
    """Exports the memory tree of a store to one archive file and restores it."""

    def __init__(
        self,
        store: Store,
        path: Path,
        *,
        interval_seconds: float = 300.0,
        on_restore: Callable[[str], None] | None = None,
        on_export: Callable[[ArchiveReport], None] | None = None,
    ) -> None:
        """Archive ``store``'s memory tree to ``path``; nothing is read or written yet.

        ``interval_seconds`` is not bounded here (the settings require 30 s or more; tests
        use less). ``on_restore`` receives the id of each registered repository whose entries
        a restore changed (the workspace schedules their embedding); ``on_export`` receives
        the report of every export.

        Raises:
            InvalidInputError: ``interval_seconds`` is not positive.
        """
        if not interval_seconds > 0:
            raise InvalidInputError(f"the archive interval must be positive: {interval_seconds}")
        self.store = store
        self.path = Path(path)
        self.interval_seconds = interval_seconds
        self._on_restore = on_restore
        self._on_export = on_export
        self._cursor = "archive/" + hashlib.sha256(str(self.path.absolute()).encode()).hexdigest()
        self._export_lock = export_lock(self.path)
        self._scanned = 0
        self._written: tuple[int, int] | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_restore: RestoreReport | None = None
        """The report of the restore at start, when one ran."""
        self.last_error: RepoContextError | None = None
        """The last error of a background or shutdown export (``None`` after a success)."""

    @property
    def previous_path(self) -> Path:
        """The previous snapshot: the archive as it was before the last export."""
        return self.path.with_name(f"{self.path.name}.prev")

    @property
    def running(self) -> bool:
        """The periodic export thread runs."""
        return self._thread is not None

    # -- export ------------------------------------------------------------------------

    def export_now(self) -> ArchiveReport:
        """Export the memory tree now, changed or not.

        Raises:
            ArchiveEmptyRefusedError: The memory tree is empty and the archive holds records.
            StoreFullError: The disk filled up (the previous archive is untouched).
            StoreReadOnlyError: The archive directory cannot be written.
            StoreUnavailableError: Another process of the store kept exporting the same
                archive for 30 s.
        """
        with self._lock:
            deadline = time.monotonic() + _EXPORT_WAIT_SECONDS
            while True:
                with self.store.exclusive(self._export_lock) as held:
                    if held:
                        return self._export()
                if time.monotonic() > deadline:
                    raise StoreUnavailableError(
                        f"another process kept exporting {self.path} for "
                        f"{_EXPORT_WAIT_SECONDS:g} s",
                        hint="Try again when its export has ended.",
                    )
                time.sleep(0.05)

    def export_if_changed(self) -> ArchiveReport | None:
        """Export when the memory tree changed since the last export; else return ``None``.

        Raises:
            ArchiveEmptyRefusedError: The memory tree is empty and the archive holds records.
            StoreFullError: The disk filled up (the previous archive is untouched).
            StoreReadOnlyError: The archive directory cannot be written.
        """
        with self._lock, self.store.exclusive(self._export_lock) as held:
            # Not held: another process of this store (a second worker or server) is
            # exporting the same archive right now; its export covers this one.
            return self._export() if held and self._pending() else None

    def start(self) -> None:
        """Export every ``interval_seconds`` in a daemon thread (no-op when running).

        Raises:
            StoreReadOnlyError: The archive directory cannot be created or written: every
                export would fail, so a server that was told to archive must not start.
        """
        if self._thread is not None:
            return
        self._check_writable()
        self._stopping.clear()
        self._thread = threading.Thread(target=self._loop, name="memory-archive", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> ArchiveReport | None:
        """Stop the thread and export once more if memory changed; no-op when not started.

        A failing export is logged and kept in :attr:`last_error`, never raised: shutdown
        goes on and the previous archive stays as it was.
        """
        thread, self._thread = self._thread, None
        if thread is None:
            return None
        self._stopping.set()
        thread.join(timeout)
        return self._guarded()

    # -- restore -----------------------------------------------------------------------

    def restore(self, mode: RestoreMode = "auto") -> RestoreReport | None:
        """Merge the archive into the store according to ``mode`` (see the module docstring).

        Returns ``None`` when nothing was merged: mode ``off``, no archive yet, or ``auto``
        with a memory tree that already holds records.

        Raises:
            InvalidInputError: ``mode`` is not ``auto``, ``always`` or ``off``.
            ArchiveCorruptError: The archive fails its checks (nothing is written).
        """
        if mode not in RESTORE_MODES:
            raise InvalidInputError(
                f"archive restore mode {mode!r} is invalid", hint="Use auto, always or off."
            )
        if mode == "off" or not self.path.exists():
            return None
        with self._lock:
            if mode == "auto" and not self._memory_empty():
                _log.info("memory archive %s not restored: memory is not empty", self.path)
                return None
            report = self._merge(self.path, mode)
        self.last_restore = report
        _log.info(
            "memory archive %s restored: %d records, %d changed",
            report.path,
            report.records,
            report.changed,
        )
        return report

    def merge(self, source: Path) -> RestoreReport:
        """Merge the archive file ``source`` (any archive, e.g. a ``.prev``) into the store.

        Raises:
            PathNotFoundError: ``source`` does not exist.
            ArchiveCorruptError: ``source`` fails its checks (nothing is written).
        """
        source = Path(source)
        if not source.is_file():
            raise PathNotFoundError(
                f"no archive file {source}", hint="Pass the path of a .rcarch or .prev file."
            )
        with self._lock:
            return self._merge(source, "merge")

    def status(self) -> ArchiveStatus:
        """Describe the archive file (verified) and the memory tree.

        Raises:
            ArchiveCorruptError: The archive exists but fails its checks.
        """
        with self._lock:
            records, written_at = 0, None
            if self.path.exists():
                records = len(read_archive(self.path)[1])
                written_at = self.path.stat().st_mtime
            age = None if written_at is None else max(self.store.clock.now() - written_at, 0.0)
            return ArchiveStatus(
                path=str(self.path),
                exists=written_at is not None,
                records=records,
                written_at=written_at,
                age_seconds=age,
                previous_exists=self.previous_path.exists(),
                memory_records=self.store.count(MEMORY),
                pending=self._pending(),
            )

    # -- internals ---------------------------------------------------------------------

    def _check_writable(self) -> None:
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=directory, prefix=".write-check-"):
                pass
        except OSError as exc:
            raise StoreReadOnlyError(
                f"the archive directory {directory} cannot be written: {exc.strerror}",
                hint="Create it and give the server's user write access (uid 10001 in the "
                "container), or unset --archive-dir (REPOCONTEXT_ARCHIVE_DIR).",
            ) from exc

    def _loop(self) -> None:
        while not self._stopping.wait(self.interval_seconds):
            self._guarded()

    def _guarded(self) -> ArchiveReport | None:
        # The background thread and shutdown are edges: an export failure must not kill
        # the server or stop it from closing its store.
        try:
            report = self.export_if_changed()
        except RepoContextError as exc:
            self.last_error = exc
            _log.warning("memory archive export to %s failed: %s (%s)", self.path, exc.code, exc)
            return None
        except Exception:
            _log.exception("memory archive export to %s failed unexpectedly", self.path)
            return None
        self.last_error = None
        return report

    def _export(self) -> ArchiveReport:
        self._set_aside_if_damaged()
        seq = self.store.last_seq()  # read first: a write racing the export is seen as pending
        report = export_archive(self.store, self.path, (MEMORY,))
        stat = self.path.stat()
        self._written = (stat.st_mtime_ns, stat.st_size)
        self.store.save_cursor(self._cursor, seq)
        if self._on_export is not None:
            self._on_export(report)
        return report

    def _set_aside_if_damaged(self) -> None:
        # The export would keep the current file as .prev and drop the older .prev; a damaged
        # current file must not push out the good snapshot behind it. Files this process
        # wrote itself are not re-read.
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return
        if self._written == (stat.st_mtime_ns, stat.st_size):
            return
        try:
            read_archive(self.path)
        except ArchiveCorruptError as exc:
            damaged = self.path.with_name(f"{self.path.name}.damaged")
            try:
                os.replace(self.path, damaged)
            except OSError as err:
                raise StoreReadOnlyError(f"cannot set aside {self.path}: {err.strerror}") from err
            _log.warning("memory archive %s is damaged (%s); moved to %s", self.path, exc, damaged)

    def _pending(self) -> bool:
        if not self.path.exists():
            return True
        after = max(self.store.cursor(self._cursor), self._scanned)
        try:
            while batch := self.store.changes(after=after, limit=_FEED_PAGE):
                if any(change.tree == MEMORY for change in batch):
                    return True
                after = batch[-1].seq
        except FeedTrimmedError:  # what changed since is unknown: export to be sure
            return True
        self._scanned = after
        return False

    def _memory_empty(self) -> bool:
        return not self.store.scan(MEMORY, "", limit=1, include_deleted=True).records

    def _merge(self, source: Path, mode: str) -> RestoreReport:
        into_empty = self._memory_empty()
        try:
            imported = import_archive(self.store, source)
        except ArchiveCorruptError as exc:
            raise ArchiveCorruptError(
                f"memory archive {source} is damaged; nothing was restored: {exc.message}",
                hint=(
                    f"Merge the previous snapshot with `repocontext archive restore {source}.prev`"
                    " or move the damaged file away; to start without restoring, set"
                    " REPOCONTEXT_ARCHIVE_RESTORE=off (the next export sets the file aside)."
                ),
            ) from exc
        if into_empty and source.absolute() == self.path.absolute():
            # The store now holds exactly the archive: nothing is pending until it changes.
            self.store.save_cursor(self._cursor, self.store.last_seq())
        if imported.changed and self._on_restore is not None:
            self._notify_repos(source, self._on_restore)
        return RestoreReport(str(source), mode, imported.records, imported.changed, into_empty)

    def _notify_repos(self, source: Path, notify: Callable[[str], None]) -> None:
        # Only registered repositories have indexes to refresh; the others get theirs when
        # they are registered and indexed again.
        repos = {parse_key(key).repo_id for _, key, _ in read_archive(source)[1]}
        for repo_id in sorted(repos):
            if self.store.get(STRUCTURAL, repo_key(repo_id)) is not None:
                notify(repo_id)
