import threading

import pytest

from repocontext.errors import (
    InvalidInputError,
    InvalidTokenError,
    MergeModeError,
    StoreUnavailableError,
    UnknownTreeError,
)
from repocontext.store import (
    MEMORY,
    STRUCTURAL,
    VECTOR_MEMBERSHIP,
    DocPatch,
    Store,
)
from repocontext.store.keys import file_key, mem_key, vec_key
from repocontext.store.records import pack, unpack


def test_put_then_get_returns_the_value_with_a_version(store):
    first = store.put(STRUCTURAL, file_key("r", "a.py"), {"size": 1})
    second = store.put(STRUCTURAL, file_key("r", "a.py"), {"size": 2})
    record = store.get(STRUCTURAL, file_key("r", "a.py"))
    assert record.value == {"size": 2}
    assert record.version == second.version > first.version
    assert store.get(STRUCTURAL, file_key("r", "missing.py")) is None


def test_values_of_unstorable_types_are_refused(store):
    for bad in ({1, 2}, object(), 2**70):
        with pytest.raises(InvalidInputError):
            store.put(STRUCTURAL, file_key("r", "a"), bad)
    assert store.last_seq() == 0


def test_values_keep_their_types_exactly(store):
    value = {"n": 3, "f": 1.5, "b": True, "s": "x", "raw": b"\x00\x01", "l": [1, None], "m": {1: 2}}
    store.put(STRUCTURAL, file_key("r", "t"), value)
    assert store.get(STRUCTURAL, file_key("r", "t")).value == value


def test_merge_fields_builds_a_document_field_by_field(store):
    key = mem_key("r", "todo", "1")
    store.merge_fields(MEMORY, key, DocPatch(set_fields={"title": "t"}, add={"tags": ["x"]}))
    store.merge_fields(MEMORY, key, DocPatch(set_fields={"body": "b"}, add={"tags": ["y"]}))
    store.merge_fields(MEMORY, key, DocPatch(remove={"tags": ["x"]}, raise_max={"fence": 4}))
    store.merge_fields(MEMORY, key, DocPatch(raise_max={"fence": 2}))
    doc = store.get(MEMORY, key).doc
    assert doc.fields == {"title": "t", "body": "b"}
    assert doc.sets == {"tags": frozenset({"y"})}
    assert doc.maxima == {"fence": 4}


def test_operations_that_do_not_fit_the_tree_merge_mode_are_refused(store):
    with pytest.raises(MergeModeError):
        store.put(MEMORY, mem_key("r", "t", "1"), "x")
    with pytest.raises(MergeModeError):
        store.merge_fields(STRUCTURAL, file_key("r", "a"), DocPatch())
    with pytest.raises(UnknownTreeError):
        store.get("no-such-tree", file_key("r", "a"))
    assert store.last_seq() == 0


def test_reserved_or_malformed_field_names_are_refused(store):
    for patch in (
        DocPatch(set_fields={"_w": 1}),
        DocPatch(set_fields={"a\x1fb": 1}),
        DocPatch(add={"tags": "abc"}),
        DocPatch(raise_max={"fence": "7"}),
        DocPatch(set_fields={"title": {1, 2}}),
        DocPatch(set_fields={"n": 2**70}),
    ):
        with pytest.raises(InvalidInputError):
            store.merge_fields(MEMORY, mem_key("r", "t", "1"), patch)
    assert store.get(MEMORY, mem_key("r", "t", "1")) is None


def test_delete_leaves_a_hidden_tombstone_and_a_later_write_revives(store):
    key = file_key("r", "a.py")
    store.put(STRUCTURAL, key, 1)
    tombstone = store.delete(STRUCTURAL, key)
    assert tombstone.deleted
    assert store.get(STRUCTURAL, key) is None
    assert store.get(STRUCTURAL, key, include_deleted=True).deleted
    assert store.delete(STRUCTURAL, key) is None
    assert store.count(STRUCTURAL, "repo/r/") == 0
    store.put(STRUCTURAL, key, 2)
    assert store.get(STRUCTURAL, key).value == 2


def test_a_deleted_document_keeps_its_fencing_register(store):
    key = mem_key("r", "t", "1")
    store.merge_fields(MEMORY, key, DocPatch(set_fields={"a": 1}, raise_max={"fence": 9}))
    store.delete(MEMORY, key)
    store.merge_fields(MEMORY, key, DocPatch(set_fields={"b": 2}))
    doc = store.get(MEMORY, key).doc
    assert doc.fields == {"b": 2}
    assert doc.maxima["fence"] == 9


def test_scan_pages_through_a_prefix_with_continuation_tokens(store):
    for i in range(25):
        store.put(STRUCTURAL, file_key("r", f"src/f{i:02}.py"), i)
    store.put(STRUCTURAL, file_key("r", "srcx/other.py"), -1)
    store.delete(STRUCTURAL, file_key("r", "src/f03.py"))
    seen, token = [], None
    while True:
        page = store.scan(STRUCTURAL, "repo/r/file/src/", limit=10, token=token)
        seen += [r.value for r in page.records]
        token = page.next_token
        if token is None:
            break
    assert seen == [i for i in range(25) if i != 3]
    assert store.count(STRUCTURAL, "repo/r/file/src/") == 24
    assert len(list(store.iter_records(STRUCTURAL, "repo/r/", page_size=7))) == 25


def test_iter_fields_decodes_only_the_named_fields_of_live_records(store, clock):
    for i in range(12):
        value = {"path": f"f{i:02}", "size": i, "symbols": [{"name": "x" * 50}] * 20}
        store.put(STRUCTURAL, file_key("r", f"f{i:02}"), value)
    store.put(STRUCTURAL, file_key("r", "not-a-map"), [1, 2])
    store.put(STRUCTURAL, file_key("r", "short-lived"), {"size": -1}, ttl_seconds=5)
    store.delete(STRUCTURAL, file_key("r", "f05"))
    clock.advance(6)
    found = list(store.iter_fields(STRUCTURAL, "repo/r/file/", frozenset({"size"}), page_size=4))
    assert found == [(file_key("r", f"f{i:02}"), {"size": i}) for i in range(12) if i != 5]
    assert store.count(STRUCTURAL, "repo/r/file/") == 12  # f05 and short-lived are gone
    with pytest.raises(MergeModeError):
        list(store.iter_fields(MEMORY, "repo/r/", frozenset({"x"})))


def test_iter_packed_yields_the_written_bytes_of_live_records(store, clock):
    values = {f"f{i:02}": {"path": f"f{i:02}", "n": [i, "x" * i, None, 1.5]} for i in range(9)}
    for name, value in values.items():
        store.put(STRUCTURAL, file_key("r", name), value)
    store.put(STRUCTURAL, file_key("r", "short-lived"), {"size": -1}, ttl_seconds=5)
    store.delete(STRUCTURAL, file_key("r", "f03"))
    clock.advance(6)
    found = list(store.iter_packed(STRUCTURAL, "repo/r/file/", page_size=2))
    assert found == [(file_key("r", n), pack(v)) for n, v in values.items() if n != "f03"]
    assert [unpack(p) for _, p in found] == [v for n, v in values.items() if n != "f03"]
    with pytest.raises(MergeModeError):
        list(store.iter_packed(MEMORY, "repo/r/"))


def test_keys_lists_live_keys_in_order_and_tombstones_only_when_asked(store, clock):
    for name in ("b.py", "a.py", "c.py"):
        store.put(STRUCTURAL, file_key("r", name), {"size": 1})
    store.put(STRUCTURAL, file_key("r", "short-lived"), {"size": -1}, ttl_seconds=5)
    store.put(STRUCTURAL, file_key("other", "z.py"), {"size": 1})
    store.delete(STRUCTURAL, file_key("r", "b.py"))
    clock.advance(6)
    assert store.keys(STRUCTURAL, "repo/r/file/") == [file_key("r", "a.py"), file_key("r", "c.py")]
    assert store.keys(STRUCTURAL, "repo/r/file/", include_deleted=True) == [
        file_key("r", n) for n in ("a.py", "b.py", "c.py", "short-lived")
    ]


def test_a_token_from_another_scan_is_refused(store):
    for i in range(3):
        store.put(STRUCTURAL, file_key("r", f"a{i}"), i)
    token = store.scan(STRUCTURAL, "repo/r/", limit=1).next_token
    with pytest.raises(InvalidTokenError):
        store.scan(STRUCTURAL, "repo/q/", token=token)
    with pytest.raises(InvalidTokenError):
        store.scan(STRUCTURAL, "repo/r/", token="not-a-token")


def test_expired_records_are_invisible_then_swept_then_compacted(store, clock):
    key = file_key("r", "tmp")
    store.put(STRUCTURAL, key, "x", ttl_seconds=10)
    store.put(STRUCTURAL, file_key("r", "durable"), "y")
    assert store.get(STRUCTURAL, key).expires_at == pytest.approx(clock.now() + 10)
    clock.advance(11)
    assert store.get(STRUCTURAL, key) is None
    assert store.count(STRUCTURAL, "repo/r/") == 1
    report = store.sweep()
    assert (report.expired, report.compacted) == (1, 0)
    assert store.changes()[-1].op == "delete"
    assert store.get(STRUCTURAL, key, include_deleted=True).deleted
    clock.advance(3601)
    assert store.sweep().compacted == 1
    assert store.get(STRUCTURAL, key, include_deleted=True) is None
    assert store.get(STRUCTURAL, file_key("r", "durable")).value == "y"


def test_a_rewritten_ttl_supersedes_the_old_expiry(store, clock):
    key = file_key("r", "tmp")
    store.put(STRUCTURAL, key, "x", ttl_seconds=10)
    store.put(STRUCTURAL, key, "x2", ttl_seconds=100)
    clock.advance(50)
    assert store.sweep().expired == 0
    assert store.get(STRUCTURAL, key).value == "x2"


def test_document_expiry_only_moves_later(store, clock):
    key = mem_key("r", "t", "1")
    later = int((clock.now() + 100) * 1000)
    store.merge_fields(MEMORY, key, DocPatch(set_fields={"a": 1}, expires_at_ms=later))
    store.merge_fields(MEMORY, key, DocPatch(expires_at_ms=later - 50_000))
    assert store.get(MEMORY, key).expires_at == later / 1000
    clock.advance(101)
    assert store.get(MEMORY, key) is None
    assert store.sweep().expired == 1


def test_drop_expiry_lets_a_document_written_anew_be_durable_or_expire_sooner(store, clock):
    key = mem_key("r", "t", "1")
    first = int((clock.now() + 100) * 1000)
    store.merge_fields(MEMORY, key, DocPatch(set_fields={"a": 1}, expires_at_ms=first))
    clock.advance(101)
    assert store.get(MEMORY, key) is None
    # Written anew without an expiry: durable, although the old expiry was a max-register.
    store.merge_fields(MEMORY, key, DocPatch(set_fields={"b": 2}, drop_expiry=True))
    assert store.get(MEMORY, key).expires_at is None
    assert store.sweep().expired == 0  # the old expiry's index entry went with it
    # Deleted while its expiry is still ahead, then written anew with a sooner one.
    later = int((clock.now() + 3600) * 1000)
    store.merge_fields(MEMORY, key, DocPatch(expires_at_ms=later))
    store.delete(MEMORY, key)
    sooner = int((clock.now() + 10) * 1000)
    patch = DocPatch(set_fields={"c": 3}, expires_at_ms=sooner, drop_expiry=True)
    assert store.merge_fields(MEMORY, key, patch).expires_at == sooner / 1000
    clock.advance(11)
    assert store.get(MEMORY, key) is None
    assert store.sweep().expired == 1


def test_a_dropped_expiry_converges_and_keeps_a_concurrent_one_it_did_not_observe(
    open_store, clock
):
    with (
        open_store("a") as a,
        open_store("b") as b,
    ):
        key = mem_key("r", "t", "1")
        soon = int((clock.now() + 10) * 1000)
        a.merge_fields(MEMORY, key, DocPatch(set_fields={"a": 1}, expires_at_ms=soon))
        b.apply_update(MEMORY, key, a.export_update(MEMORY, key))
        a.merge_fields(MEMORY, key, DocPatch(set_fields={"a": 2}, drop_expiry=True))
        b.apply_update(MEMORY, key, a.export_update(MEMORY, key))
        # The drop reached b: the expiry b had observed is gone there too.
        assert a.get(MEMORY, key).doc == b.get(MEMORY, key).doc
        assert b.get(MEMORY, key).expires_at is None
        # A drop and a concurrent expiry it did not observe: that expiry survives, both ways.
        later = int((clock.now() + 50) * 1000)
        b.merge_fields(MEMORY, key, DocPatch(expires_at_ms=later))
        a.merge_fields(MEMORY, key, DocPatch(set_fields={"a": 3}, drop_expiry=True))
        a.apply_update(MEMORY, key, b.export_update(MEMORY, key))
        b.apply_update(MEMORY, key, a.export_update(MEMORY, key))
        assert a.get(MEMORY, key).doc == b.get(MEMORY, key).doc
        assert a.get(MEMORY, key).expires_at == b.get(MEMORY, key).expires_at == later / 1000


def test_fenced_document_tombstones_survive_compaction(store, clock):
    key = mem_key("r", "t", "1")
    store.merge_fields(MEMORY, key, DocPatch(raise_max={"fence": 3}))
    store.delete(MEMORY, key)
    clock.advance(4000)
    assert store.sweep().kept == 1
    assert store.get(MEMORY, key, include_deleted=True).doc.maxima == {"fence": 3}


@pytest.mark.parametrize("ttl", [0, -1, float("nan"), float("inf"), 1e17, 1e300])
def test_non_positive_infinite_or_unrepresentable_ttls_are_refused(store, ttl):
    with pytest.raises(InvalidInputError):
        store.put(STRUCTURAL, file_key("r", "a"), 1, ttl_seconds=ttl)
    assert store.get(STRUCTURAL, file_key("r", "a")) is None


def test_a_document_expiry_beyond_the_frame_range_is_refused(store):
    key = mem_key("r", "t", "1")
    with pytest.raises(InvalidInputError, match="out of range"):
        store.merge_fields(MEMORY, key, DocPatch(set_fields={"a": 1}, expires_at_ms=2**70))
    assert store.get(MEMORY, key, include_deleted=True) is None


def test_the_change_feed_is_monotonic_and_cursors_persist(open_store, clock):
    with open_store("d") as store:
        for i in range(5):
            store.put(STRUCTURAL, file_key("r", f"f{i}"), i)
        changes = store.changes()
        assert [c.seq for c in changes] == [1, 2, 3, 4, 5]
        assert store.changes(after=3) == changes[3:]
        assert len(store.changes(limit=2)) == 2
        store.save_cursor("keyword-index", 3)
    with open_store("d") as store:
        assert store.cursor("keyword-index") == 3
        assert store.cursor("new") == 0
        store.put(STRUCTURAL, file_key("r", "f9"), 9)
        assert store.last_seq() == 6


def test_the_hybrid_clock_never_goes_backwards_across_restarts(open_store, clock):
    with open_store("d") as store:
        first = store.put(STRUCTURAL, file_key("r", "a"), 1).hlc
    clock.set(clock.now() - 3600)
    with open_store("d") as store:
        assert store.put(STRUCTURAL, file_key("r", "a"), 2).hlc > first
        assert store.get(STRUCTURAL, file_key("r", "a")).value == 2


def test_observed_remove_flags_track_vector_membership(store):
    key = vec_key("r", "minilm", "c1")
    assert store.set_flag(VECTOR_MEMBERSHIP, key, True).present
    assert store.get(VECTOR_MEMBERSHIP, key).present
    store.set_flag(VECTOR_MEMBERSHIP, key, False)
    assert store.get(VECTOR_MEMBERSHIP, key).present is False
    assert store.set_flag(VECTOR_MEMBERSHIP, key, False) is None


def test_apply_update_merges_foreign_state_and_is_idempotent(open_store, clock):
    with (
        open_store("a") as a,
        open_store("b") as b,
    ):
        key = mem_key("r", "t", "1")
        a.merge_fields(MEMORY, key, DocPatch(set_fields={"title": "A"}, add={"tags": ["a"]}))
        b.merge_fields(MEMORY, key, DocPatch(set_fields={"body": "B"}, add={"tags": ["b"]}))
        assert a.apply_update(MEMORY, key, b.export_update(MEMORY, key)) is not None
        assert b.apply_update(MEMORY, key, a.export_update(MEMORY, key)) is not None
        assert a.get(MEMORY, key).doc == b.get(MEMORY, key).doc
        seq = a.last_seq()
        assert a.apply_update(MEMORY, key, b.export_update(MEMORY, key)) is None
        assert a.last_seq() == seq
        with pytest.raises(MergeModeError):
            a.apply_update(STRUCTURAL, file_key("r", "x"), a.export_update(MEMORY, key))


def test_batches_acknowledge_only_committed_groups(store):
    acked = []
    with store.batch(commit_every=4, on_commit=acked.append) as batch:
        for i in range(10):
            batch.put(STRUCTURAL, file_key("r", f"f{i}"), i)
            if i == 5:
                assert batch.acknowledged == 4
                assert batch.pending == 2
    assert batch.acknowledged == 10
    assert [len(keys) for keys in acked] == [4, 4, 2]
    assert store.count(STRUCTURAL, "repo/r/") == 10


def test_a_batch_abandoned_by_an_exception_writes_nothing_unacknowledged(store):
    with pytest.raises(RuntimeError), store.batch(commit_every=100) as batch:
        batch.put(STRUCTURAL, file_key("r", "a"), 1)
        raise RuntimeError("boom")
    assert store.get(STRUCTURAL, file_key("r", "a")) is None


def test_the_map_grows_automatically_when_full(tmp_path, clock):
    with Store.open(tmp_path / "d", clock=clock, map_bytes=1 << 20) as store:
        blob = b"x" * 50_000
        with store.batch(commit_every=50) as batch:
            for i in range(200):
                batch.put(STRUCTURAL, file_key("r", f"f{i}"), blob)
        assert store.stats().map_bytes > 1 << 20
        assert store.count(STRUCTURAL) == 200


def test_a_closed_store_refuses_calls(open_store):
    store = open_store()
    store.close()
    store.close()
    with pytest.raises(StoreUnavailableError):
        store.get(STRUCTURAL, file_key("r", "a"))


def test_stats_report_records_per_tree(store, backend):
    store.put(STRUCTURAL, file_key("r", "a"), 1)
    stats = store.stats()
    assert stats.records[STRUCTURAL] == 1
    assert stats.last_seq == 1
    assert stats.engine == backend
    assert stats.file_bytes > 0


def test_the_change_feed_can_resume_inside_a_batch(store):
    with store.batch(commit_every=10) as batch:
        for i in range(25):
            batch.put(STRUCTURAL, file_key("r", f"f{i:02}"), i)
    assert [c.seq for c in store.changes(after=4, limit=3)] == [5, 6, 7]
    assert [c.seq for c in store.changes(after=9)] == list(range(10, 26))
    assert store.changes(after=12)[0].key == file_key("r", "f12")
    assert store.changes(after=25) == []


def test_scan_can_start_at_a_key_to_skip_a_range(store):
    for name in ("a/1", "a/2", "b/1", "c/1"):
        store.put(STRUCTURAL, file_key("r", name), name)
    page = store.scan(STRUCTURAL, "repo/r/file/", start=file_key("r", "b"))
    assert [r.value for r in page.records] == ["b/1", "c/1"]


def test_the_sweeper_thread_sweeps_until_stopped(open_store, clock):
    from repocontext.store import Sweeper

    with open_store() as store:
        store.put(STRUCTURAL, file_key("r", "tmp"), 1, ttl_seconds=1)
        clock.advance(2)
        sweeper = Sweeper(store, interval_seconds=0.01)
        sweeper.start()
        try:
            for _ in range(500):
                if sweeper.last_report is not None:
                    break
                threading.Event().wait(0.01)
        finally:
            sweeper.stop()
        assert store.get(STRUCTURAL, file_key("r", "tmp"), include_deleted=True).deleted


def test_export_update_of_a_missing_key_is_none(store):
    assert store.export_update(MEMORY, mem_key("r", "t", "nope")) is None
