import contextlib
import subprocess

import pytest

from repocontext.errors import (
    ArchiveCorruptError,
    InvalidKeyError,
    InvalidUpdateError,
    StoreFullError,
    StoreReadOnlyError,
    ValueTooLargeError,
)
from repocontext.store import MEMORY, STRUCTURAL, DocPatch, Store, export_archive, import_archive
from repocontext.store.keys import file_key, mem_key


@contextlib.contextmanager
def tmpfs(path, size):
    """A real, size-limited filesystem (the tests run as root, like CI)."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def snapshot(store):
    return [(r.key, r.value) for r in store.iter_records(STRUCTURAL)]


@pytest.mark.parametrize("key", ["", "repo//a", "a\x00", "k" * 600, 42])
def test_invalid_keys_fail_cleanly_and_store_nothing(open_store, key):
    with open_store() as store:
        store.put(STRUCTURAL, file_key("r", "keep"), 1)
        with pytest.raises(InvalidKeyError) as info:
            store.put(STRUCTURAL, key, 2)
        assert info.value.code == "store.invalid_key"
        assert snapshot(store) == [(file_key("r", "keep"), 1)]


def test_oversized_values_are_refused_and_nothing_is_lost(open_store):
    with open_store(max_value_bytes=10_000) as store:
        store.put(STRUCTURAL, file_key("r", "keep"), "small")
        with pytest.raises(ValueTooLargeError) as info:
            store.put(STRUCTURAL, file_key("r", "keep"), "x" * 20_000)
        assert info.value.code == "store.value_too_large"
        with pytest.raises(ValueTooLargeError):
            store.merge_fields(
                MEMORY, mem_key("r", "t", "1"), DocPatch(set_fields={"b": "x" * 20_000})
            )
        assert store.get(STRUCTURAL, file_key("r", "keep")).value == "small"
        assert store.get(MEMORY, mem_key("r", "t", "1")) is None
        assert store.last_seq() == 1


def test_a_too_large_write_inside_a_batch_rolls_back_only_its_group(open_store):
    with open_store(max_value_bytes=10_000) as store:
        batch = store.batch(commit_every=3)
        batch.put(STRUCTURAL, file_key("r", "a"), 1)
        batch.put(STRUCTURAL, file_key("r", "b"), 2)
        batch.put(STRUCTURAL, file_key("r", "c"), 3)
        batch.put(STRUCTURAL, file_key("r", "d"), 4)
        with pytest.raises(ValueTooLargeError):
            batch.put(STRUCTURAL, file_key("r", "e"), "x" * 20_000)
            batch.flush()
        assert batch.acknowledged == 3
        assert [k for k, _ in snapshot(store)] == [file_key("r", x) for x in "abc"]


def test_garbage_updates_are_refused(open_store):
    with open_store() as store:
        for update in (b"", b"\x93\x01", b"not msgpack at all \xff", "text"):
            with pytest.raises(InvalidUpdateError) as info:
                store.apply_update(MEMORY, mem_key("r", "t", "1"), update)
            assert info.value.code == "store.invalid_update"
        assert store.last_seq() == 0


def test_a_corrupted_archive_is_refused_before_anything_is_written(tmp_path):
    with Store.open(tmp_path / "d") as store:
        for i in range(5):
            store.merge_fields(MEMORY, mem_key("r", "t", f"{i}"), DocPatch(set_fields={"i": i}))
        archive = tmp_path / "memory.rcarchive"
        export_archive(store, archive)
        data = archive.read_bytes()
    variants = {
        "flipped": data[:40] + bytes([data[40] ^ 0xFF]) + data[41:],
        "truncated": data[: len(data) // 2],
        "magic": b"NOTARCHV" + data[8:],
        "empty": b"",
    }
    with Store.open(tmp_path / "fresh") as fresh:
        for name, bad in variants.items():
            target = tmp_path / f"{name}.rcarchive"
            target.write_bytes(bad)
            with pytest.raises(ArchiveCorruptError) as info:
                import_archive(fresh, target)
            assert info.value.code == "archive.corrupt"
        assert fresh.last_seq() == 0
        with pytest.raises(ArchiveCorruptError):
            import_archive(fresh, tmp_path / "missing.rcarchive")


@pytest.mark.timeout(60)
def test_a_read_only_data_directory_gives_a_clear_error_and_keeps_data(tmp_path):
    mount = tmp_path / "ro"
    with tmpfs(mount, "16m"):
        with Store.open(mount, map_bytes=1 << 20) as store:
            store.put(STRUCTURAL, file_key("r", "keep"), "v")
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        with pytest.raises(StoreReadOnlyError) as info:
            Store.open(mount / "elsewhere")
        assert info.value.code == "store.read_only"
        with pytest.raises(StoreReadOnlyError):
            Store.open(mount)
        with Store.open(mount, read_only=True) as reader:
            assert reader.get(STRUCTURAL, file_key("r", "keep")).value == "v"
            with pytest.raises(StoreReadOnlyError):
                reader.put(STRUCTURAL, file_key("r", "new"), 1)
        subprocess.run(["mount", "-o", "remount,rw", str(mount)], check=True)
        with Store.open(mount) as store:
            assert snapshot(store) == [(file_key("r", "keep"), "v")]


@pytest.mark.timeout(60)
def test_a_full_disk_gives_a_clear_error_and_keeps_every_acknowledged_write(tmp_path):
    mount = tmp_path / "full"
    with tmpfs(mount, "3m"):
        acknowledged = []
        with Store.open(mount, map_bytes=64 << 20) as store:
            with pytest.raises(StoreFullError) as info:
                for i in range(10_000):
                    key = file_key("r", f"f{i:05}")
                    store.put(STRUCTURAL, key, "x" * 4000)
                    acknowledged.append(key)
            assert info.value.code == "store.full"
            assert len(acknowledged) > 10
            with pytest.raises(StoreFullError):
                export_archive(store, mount / "archive", trees=[STRUCTURAL])
        with Store.open(mount, read_only=True) as store:
            for key in acknowledged:
                assert store.get(STRUCTURAL, key).value == "x" * 4000


def test_the_configured_map_limit_reports_full(tmp_path):
    with Store.open(tmp_path / "d", map_bytes=1 << 20, max_map_bytes=2 << 20) as store:
        with pytest.raises(StoreFullError):
            for i in range(1000):
                store.put(STRUCTURAL, file_key("r", f"f{i}"), "x" * 8000)
        count = store.count(STRUCTURAL)
        assert count > 50
        assert store.get(STRUCTURAL, file_key("r", f"f{count - 1}")) is not None
