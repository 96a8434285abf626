"""The sweep trims the change feed; a consumer behind the trimmed part is told, never misled."""

import pytest
from pydantic import ValidationError

from repocontext.errors import FeedTrimmedError
from repocontext.settings import Settings
from repocontext.store import STRUCTURAL, Store
from repocontext.store.keys import file_key
from repocontext.workspace import Workspace


def put_batches(store: Store, batches: int, size: int, tag: str = "f") -> None:
    """``batches`` transactions (one feed entry each) of ``size`` writes."""
    for b in range(batches):
        with store.batch(commit_every=size) as batch:
            for i in range(size):
                batch.put(STRUCTURAL, file_key("r", f"{tag}{b}-{i}"), i)


def test_entries_older_than_the_grace_period_are_trimmed(store, clock):
    put_batches(store, 3, 1)
    clock.advance(3601)  # the store fixture's grace period is one hour
    put_batches(store, 1, 2, tag="new")
    report = store.sweep()
    assert report.trimmed == 3
    assert store.feed_floor() == 3
    assert [c.seq for c in store.changes(after=3)] == [4, 5]
    for after in (0, 2):
        with pytest.raises(FeedTrimmedError) as raised:
            store.changes(after=after)
        assert raised.value.code == "store.feed_trimmed"
        assert "3" in raised.value.message and raised.value.hint
    assert store.get(STRUCTURAL, file_key("r", "f0-0")).value == 0  # records are untouched
    assert store.sweep().trimmed == 0


def test_the_feed_keeps_at_most_its_event_cap_in_whole_entries(open_store):
    with open_store(feed_max_events=10) as store:
        put_batches(store, 5, 5)
        assert store.sweep(limit=1).trimmed == 5  # one entry per sweep at most
        assert store.sweep().trimmed == 10
        assert store.feed_floor() == 15
        assert [c.seq for c in store.changes(after=15)] == list(range(16, 26))
        assert store.count(STRUCTURAL, "repo/r/") == 25
    with open_store(feed_max_events=10) as store:
        assert store.feed_floor() == 15  # durable
        with pytest.raises(FeedTrimmedError):
            store.changes(after=14)
        put_batches(store, 1, 3, tag="g")
        assert store.sweep().trimmed == 5
        assert [c.seq for c in store.changes(after=20)] == list(range(21, 29))


def test_a_young_feed_under_the_cap_is_kept_whole(store):
    put_batches(store, 4, 3)
    assert store.sweep().trimmed == 0
    assert store.feed_floor() == 0
    assert len(store.changes()) == 12


def test_the_workspace_setting_reaches_the_store_and_its_sweep(tmp_path):
    settings = Settings(
        data_dir=tmp_path / "data", embedder="off", reconcile="off", feed_max_events=1000
    )
    with Workspace.open(settings) as workspace:
        assert workspace.store.feed_max_events == 1000
        put_batches(workspace.store, 3, 600)
        assert workspace.sweep().trimmed == 1200  # whole entries until at most 1000 are left
        assert workspace.store.feed_floor() == 1200
    with pytest.raises(ValidationError):
        Settings(feed_max_events=10)
