import pytest

from repocontext.errors import ArchiveEmptyRefusedError
from repocontext.store import MEMORY, STRUCTURAL, DocPatch, export_archive, import_archive
from repocontext.store.archive import read_archive
from repocontext.store.keys import file_key, mem_key


def fill(store, n):
    for i in range(n):
        key = mem_key("r", "notes", f"n{i}")
        store.merge_fields(MEMORY, key, DocPatch(set_fields={"i": i}, add={"tags": ["x"]}))


def test_export_then_import_into_an_empty_store_restores_every_record(tmp_path, open_store):
    archive = tmp_path / "memory.rcarchive"
    with open_store("a") as source:
        fill(source, 20)
        source.delete(MEMORY, mem_key("r", "notes", "n0"))
        report = export_archive(source, archive)
        assert report.records == 20
        expected = {r.key: r.doc for r in source.iter_records(MEMORY)}
    with open_store("b") as target:
        first = import_archive(target, archive)
        assert first.changed == 20
        assert {r.key: r.doc for r in target.iter_records(MEMORY)} == expected
        assert target.get(MEMORY, mem_key("r", "notes", "n0")) is None
        seq = target.last_seq()
        second = import_archive(target, archive)
        assert second.changed == 0
        assert target.last_seq() == seq


def test_import_merges_with_newer_local_changes_instead_of_overwriting(tmp_path, open_store):
    archive = tmp_path / "memory.rcarchive"
    with open_store("a") as store:
        fill(store, 3)
        export_archive(store, archive)
        key = mem_key("r", "notes", "n1")
        store.merge_fields(MEMORY, key, DocPatch(set_fields={"i": 100}, add={"tags": ["y"]}))
        import_archive(store, archive)
        doc = store.get(MEMORY, key).doc
        assert doc.fields["i"] == 100
        assert doc.sets["tags"] == {"x", "y"}


def test_export_keeps_the_previous_snapshot_and_replaces_atomically(tmp_path, open_store):
    archive = tmp_path / "memory.rcarchive"
    with open_store("a") as store:
        fill(store, 2)
        export_archive(store, archive)
        fill(store, 5)
        export_archive(store, archive)
    assert len(read_archive(archive)[1]) == 5
    assert len(read_archive(archive.with_name("memory.rcarchive.prev"))[1]) == 2
    assert not list(tmp_path.glob("*.tmp-*"))


def test_an_empty_export_over_a_non_empty_archive_is_refused(tmp_path, open_store):
    archive = tmp_path / "memory.rcarchive"
    with open_store("a") as store:
        fill(store, 3)
        export_archive(store, archive)
    before = archive.read_bytes()
    with open_store("empty") as empty:
        with pytest.raises(ArchiveEmptyRefusedError) as info:
            export_archive(empty, archive)
        assert info.value.code == "archive.empty_refused"
        assert export_archive(empty, tmp_path / "new.rcarchive").records == 0
    assert archive.read_bytes() == before


def test_archives_can_cover_several_trees(tmp_path, open_store):
    archive = tmp_path / "all.rcarchive"
    with open_store("a") as store:
        fill(store, 2)
        store.put(STRUCTURAL, file_key("r", "a.py"), {"size": 1})
        assert export_archive(store, archive, trees=[MEMORY, STRUCTURAL]).records == 3
    with open_store("b") as target:
        import_archive(target, archive)
        assert target.get(STRUCTURAL, file_key("r", "a.py")).value == {"size": 1}
        assert target.count(MEMORY) == 2
