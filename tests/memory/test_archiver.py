"""The memory archive through the library: periodic and shutdown exports, restore modes,
idempotent restores, damaged archives, the previous snapshot.

Real stores in ``tmp_path``, the real memory service, an injected clock; the periodic thread
runs with a tiny interval and the tests wait on its exports with bounded waits.
"""

import logging
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from repocontext.errors import ArchiveCorruptError, InvalidInputError, StoreReadOnlyError
from repocontext.memory import ARCHIVE_NAME, MemoryArchiver, MemoryEntry, MemoryService
from repocontext.memory.archiver import export_lock
from repocontext.settings import Settings
from repocontext.store import MEMORY, STRUCTURAL, ArchiveReport, Store, Value
from repocontext.store.archive import read_archive
from repocontext.store.keys import repo_key
from repocontext.testing import FakeClock
from repocontext.workspace import Workspace

WAIT = 30.0


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def open_store(path: Path, clock: FakeClock, tombstone_grace_seconds: float = 3600.0) -> Store:
    store = Store.open(path, clock=clock, tombstone_grace_seconds=tombstone_grace_seconds)
    store.put(STRUCTURAL, repo_key("r"), {"root": "/r"})
    return store


def remember(store: Store, n: int, start: int = 0) -> list[str]:
    memory = MemoryService(store)
    keys = []
    for i in range(start, start + n):
        view = memory.remember(
            "r",
            "decisions",
            entry_id=f"e{i}",
            title=f"decision {i}",
            body="because",
            tags=["a", f"t{i}"],
            add_links={"related": ["repo/r/mem/decisions/e0"]},
        )
        keys.append(view.key)
    return keys


def field(view: MemoryEntry, name: str) -> Value:
    return view.fields[name]


def views(store: Store) -> dict[str, tuple[object, ...]]:
    memory = MemoryService(store)
    found: dict[str, tuple[object, ...]] = {}
    for record in store.iter_records(MEMORY):
        view = memory.recall(record.key)
        found[record.key] = (dict(view.fields), view.tags, view.links, view.expires_at)
    return found


def archive_of_three(tmp_path: Path, clock: FakeClock) -> Path:
    """Export an archive of three entries from a store under tmp_path/a; return its path."""
    path = tmp_path / ARCHIVE_NAME
    with open_store(tmp_path / "a", clock) as source:
        remember(source, 3)
        MemoryArchiver(source, path).export_now()
    return path


def test_periodic_export_writes_on_change_keeps_the_previous_snapshot_and_skips_otherwise(
    tmp_path: Path, clock: FakeClock
) -> None:
    reports: queue.Queue[ArchiveReport] = queue.Queue()
    with open_store(tmp_path / "data", clock) as store:
        remember(store, 2)
        path = tmp_path / "archive" / ARCHIVE_NAME
        archiver = MemoryArchiver(store, path, interval_seconds=0.01, on_export=reports.put)
        archiver.start()
        try:
            assert reports.get(timeout=WAIT).records == 2
            remember(store, 1, start=2)  # one write: the next export holds all of it
            assert reports.get(timeout=WAIT).records == 3
        finally:
            assert archiver.stop() is None  # nothing changed since the last periodic export
        assert reports.empty()
        assert not archiver.running
    assert len(read_archive(path)[1]) == 3
    assert len(read_archive(archiver.previous_path)[1]) == 2
    assert not list(path.parent.glob("*.tmp-*"))


def test_export_if_changed_skips_an_unchanged_memory_tree_even_after_other_trees_change(
    tmp_path: Path, clock: FakeClock
) -> None:
    with open_store(tmp_path / "data", clock) as store:
        remember(store, 1)
        archiver = MemoryArchiver(store, tmp_path / ARCHIVE_NAME)
        assert archiver.export_if_changed() is not None  # no archive yet
        store.put(STRUCTURAL, repo_key("other"), {"root": "/other"})
        assert archiver.export_if_changed() is None
        assert not archiver.previous_path.exists()
        assert archiver.export_now().records == 1  # an explicit export always writes
        assert archiver.previous_path.exists()
        # The mark lives in the store: a new archiver (a restarted process) skips too.
        assert MemoryArchiver(store, tmp_path / ARCHIVE_NAME).export_if_changed() is None


def test_an_export_of_an_archive_another_process_is_writing_is_skipped_or_waits_for_it(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / ARCHIVE_NAME
    with open_store(tmp_path / "data", clock) as store:
        remember(store, 2)
        archiver = MemoryArchiver(store, path)
        with store.exclusive(export_lock(path)) as held:  # as a second worker's export does
            assert held
            assert archiver.export_if_changed() is None  # the periodic export skips its turn
            assert not path.exists()
            waiting = threading.Thread(target=archiver.export_now)
            waiting.start()
            waiting.join(0.2)
            assert waiting.is_alive() and not path.exists()  # an explicit one waits
        waiting.join(WAIT)
        assert path.exists()
        assert archiver.export_if_changed() is None  # that export covered the change


def test_stop_exports_what_changed_since_the_last_export_and_is_a_no_op_unstarted(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / ARCHIVE_NAME
    with open_store(tmp_path / "data", clock) as store:
        idle = MemoryArchiver(store, path)
        remember(store, 1)
        assert idle.stop() is None
        assert not path.exists()
        archiver = MemoryArchiver(store, path, interval_seconds=3600)
        archiver.start()
        archiver.start()  # already running: no second thread
        remember(store, 2, start=1)
        report = archiver.stop()
        assert report is not None and report.records == 3
        assert archiver.stop() is None
    assert len(read_archive(path)[1]) == 3


def test_a_failing_shutdown_export_is_logged_and_leaves_the_archive_alone(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / ARCHIVE_NAME
    with open_store(tmp_path / "data", clock, tombstone_grace_seconds=1) as store:
        [key] = remember(store, 1)
        archiver = MemoryArchiver(store, path, interval_seconds=3600)
        archiver.export_now()
        before = path.read_bytes()
        archiver.start()
        MemoryService(store).forget(key)
        clock.advance(10)
        store.sweep()  # compacts the tombstone: the memory tree is now empty
        with caplog.at_level(logging.WARNING, logger="repocontext.memory.archiver"):
            assert archiver.stop() is None
        assert archiver.last_error is not None
        assert archiver.last_error.code == "archive.empty_refused"
        assert "archive.empty_refused" in caplog.text
    assert path.read_bytes() == before


def test_auto_restores_into_an_empty_store_and_a_second_restore_changes_nothing(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / ARCHIVE_NAME
    with open_store(tmp_path / "a", clock) as source:
        remember(source, 4)
        MemoryService(source).forget("repo/r/mem/decisions/e3")
        MemoryArchiver(source, path).export_now()
        expected = views(source)
    with Store.open(tmp_path / "b", clock=clock) as target:
        archiver = MemoryArchiver(target, path)
        report = archiver.restore("auto")
        assert report is not None
        assert (report.records, report.changed, report.into_empty) == (4, 4, True)
        assert archiver.last_restore == report
        assert views(target) == expected
        assert target.get(MEMORY, "repo/r/mem/decisions/e3") is None  # the tombstone came back
        seq = target.last_seq()
        again = archiver.restore("always")
        assert again is not None and (again.changed, again.into_empty) == (0, False)
        assert target.last_seq() == seq
        assert archiver.restore("auto") is None  # memory is no longer empty
        # The store holds exactly the archive: nothing to export, the snapshot stays as is.
        assert archiver.export_if_changed() is None
        assert not archiver.previous_path.exists()


def test_always_merges_into_a_store_with_newer_local_changes_and_off_does_nothing(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = archive_of_three(tmp_path, clock)
    with open_store(tmp_path / "b", clock) as target:
        memory = MemoryService(target)
        remember(target, 1)
        clock.advance(1)
        memory.update("repo/r/mem/decisions/e0", fields={"title": "local"}, add_tags=["mine"])
        archiver = MemoryArchiver(target, path)
        assert archiver.restore("off") is None
        assert archiver.restore("auto") is None
        assert target.count(MEMORY) == 1
        report = archiver.restore("always")
        assert report is not None and report.changed == 3 and not report.into_empty
        assert target.count(MEMORY) == 3
        e0 = memory.recall("repo/r/mem/decisions/e0")
        assert field(e0, "title") == "local"
        assert e0.tags == ("a", "mine", "t0")
        assert archiver.export_if_changed() is not None  # the store now holds more


def test_restore_without_an_archive_or_with_a_bad_mode(tmp_path: Path, clock: FakeClock) -> None:
    with Store.open(tmp_path / "data", clock=clock) as store:
        archiver = MemoryArchiver(store, tmp_path / ARCHIVE_NAME)
        assert archiver.restore("always") is None
        with pytest.raises(InvalidInputError):
            archiver.restore("sometimes")  # type: ignore[arg-type]  # the bad value tested
    with pytest.raises(InvalidInputError):
        MemoryArchiver(store, tmp_path / ARCHIVE_NAME, interval_seconds=0)


def test_a_damaged_archive_is_refused_with_a_hint_and_nothing_is_written(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = archive_of_three(tmp_path, clock)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with Store.open(tmp_path / "b", clock=clock) as target:
        seq = target.last_seq()
        with pytest.raises(ArchiveCorruptError) as info:
            MemoryArchiver(target, path).restore("auto")
        assert info.value.code == "archive.corrupt"
        assert "nothing was restored" in info.value.message
        assert "memory.rcarch.prev" in info.value.hint
        assert target.last_seq() == seq
        assert not target.scan(MEMORY, "", include_deleted=True).records


def test_an_export_sets_a_damaged_archive_aside_so_the_previous_snapshot_survives(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / ARCHIVE_NAME
    with open_store(tmp_path / "data", clock) as store:
        remember(store, 1)
        MemoryArchiver(store, path).export_now()
        remember(store, 1, start=1)
        MemoryArchiver(store, path).export_now()
        previous = path.with_name(ARCHIVE_NAME + ".prev").read_bytes()
        path.write_bytes(b"RCARCH01 garbage")
        archiver = MemoryArchiver(store, path)
        with pytest.raises(ArchiveCorruptError):
            archiver.status()
        remember(store, 1, start=2)
        assert archiver.export_now().records == 3
        assert archiver.previous_path.read_bytes() == previous
        assert path.with_name(ARCHIVE_NAME + ".damaged").read_bytes() == b"RCARCH01 garbage"


def test_status_reports_the_file_its_age_and_pending_changes(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / ARCHIVE_NAME
    with open_store(tmp_path / "data", clock) as store:
        archiver = MemoryArchiver(store, path)
        empty = archiver.status()
        assert (empty.exists, empty.records, empty.age_seconds, empty.pending) == (
            False,
            0,
            None,
            True,
        )
        remember(store, 2)
        archiver.export_now()
        clock.set(path.stat().st_mtime + 90)
        status = archiver.status()
        assert (status.exists, status.records, status.memory_records) == (True, 2, 2)
        assert status.age_seconds == pytest.approx(90)
        assert (status.pending, status.previous_exists) == (False, False)
        path.write_bytes(b"not an archive")
        with pytest.raises(ArchiveCorruptError):
            archiver.status()


def test_a_memory_change_hidden_by_a_trimmed_feed_still_counts_as_pending(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / ARCHIVE_NAME
    with open_store(tmp_path / "data", clock) as store:
        archiver = MemoryArchiver(store, path)
        remember(store, 1)
        archiver.export_now()
        assert not archiver.status().pending
        remember(store, 1, start=1)
        store.put(STRUCTURAL, repo_key("later"), {"root": "/later"})  # a newer, unrelated event
        store.feed_max_events = 1
        assert store.sweep().trimmed > 0
        assert archiver.status().pending
        assert archiver.export_now().records == 2
        assert not archiver.status().pending


def test_a_restore_schedules_registered_repositories_only(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / ARCHIVE_NAME
    with open_store(tmp_path / "a", clock) as source:
        source.put(STRUCTURAL, repo_key("gone"), {"root": "/gone"})
        remember(source, 1)
        MemoryService(source).remember("gone", "notes", title="x")
        MemoryArchiver(source, path).export_now()
    scheduled: list[str] = []
    with open_store(tmp_path / "b", clock) as target:
        report = MemoryArchiver(target, path, on_restore=scheduled.append).merge(path)
        assert report.mode == "merge" and report.changed == 2
    assert scheduled == ["r"]


def test_the_workspace_restores_at_start_and_exports_on_close(tmp_path: Path) -> None:
    archive_dir = tmp_path / "archive"
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_root=tmp_path,
        embedder="off",
        reconcile="off",
        archive_dir=archive_dir,
    )
    (tmp_path / "proj").mkdir()
    with Workspace.open(settings) as workspace:
        assert workspace._background.archiver is not None
        workspace.register_repo(tmp_path / "proj")
        workspace.start_background()
        workspace.start_background()  # a second call neither restores nor starts again
        workspace.remember("proj", "notes", entry_id="n1", title="kept")
    assert len(read_archive(archive_dir / ARCHIVE_NAME)[1]) == 1
    with Workspace.open(settings, read_only=True) as reader:
        assert reader._background.archiver is None
    fresh = settings.model_copy(update={"data_dir": tmp_path / "fresh"})
    with Workspace.open(fresh) as workspace:
        workspace.start_background()
        assert (
            workspace._background.archiver is not None
            and workspace._background.archiver.last_restore is not None
        )
        view = workspace.recall_note("repo/proj/mem/notes/n1")
        assert field(view, "title") == "kept"
    assert not (archive_dir / (ARCHIVE_NAME + ".prev")).exists()  # nothing new to export


def test_an_archive_directory_that_cannot_be_written_stops_the_start(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the archive directory should be\n")
    settings = Settings(data_dir=tmp_path / "data", archive_dir=blocked / "archive")
    with Workspace.open(settings) as workspace:
        with pytest.raises(StoreReadOnlyError, match="cannot be written") as refused:
            workspace.start_background()
        assert "--archive-dir" in refused.value.hint
        assert (
            workspace._background.archiver is not None
            and not workspace._background.archiver.running
        )
    missing = tmp_path / "new" / "archive"  # a directory that does not exist yet is made
    with Workspace.open(settings.model_copy(update={"archive_dir": missing})) as workspace:
        workspace.start_background()
        assert workspace._background.archiver is not None and workspace._background.archiver.running
    assert missing.is_dir() and not list(missing.glob(".write-check-*"))


def test_serve_refuses_an_archive_directory_it_may_not_write(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    archive.mkdir(mode=0o555)
    command = [sys.executable, "-m", "repocontext", "serve", "--transport", "http"]
    command += ["--workers", "1"]
    command += ["--port", "0", "--data-dir", str(tmp_path / "data")]
    command += ["--archive-dir", str(archive), "--embedder", "off", "--reconcile", "off"]
    if os.geteuid() == 0:  # root writes anywhere: drop the capabilities that let it
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run.stderr
    assert "error [store.read_only]" in run.stderr and "Permission denied" in run.stderr
    assert "repocontext MCP endpoint" not in run.stderr  # it never served
