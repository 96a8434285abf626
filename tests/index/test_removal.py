"""The removal plans on a bare store: every page, expired records, neighbours untouched."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from repocontext.errors import NotFoundError
from repocontext.index.removal import (
    CODE_INDEX_TREES,
    PAGE,
    remove_repo_records,
    reset_index_records,
    short_tree_name,
)
from repocontext.store import MEMORY, STRUCTURAL, TREES, XREF, DocPatch, Store, Value
from repocontext.store.keys import file_key, mem_key, repo_key, repo_prefix, xref_key
from repocontext.testing import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    with Store.open(tmp_path, clock=clock) as opened:
        for repo_id in ("r", "r2"):
            opened.put(STRUCTURAL, repo_key(repo_id), {"root": f"/ws/{repo_id}", "files": 1})
            opened.put(STRUCTURAL, file_key(repo_id, "a.py"), {"path": "a.py"})
            opened.merge_fields(MEMORY, mem_key(repo_id, "t", "1"), DocPatch({"title": "x"}))
        yield opened


def live(store: Store, repo_id: str) -> dict[str, int]:
    return {tree: store.count(tree, repo_prefix(repo_id)) for tree in TREES}


def test_removal_sweeps_every_page_and_expired_records(store: Store, clock: FakeClock) -> None:
    with store.batch() as batch:
        for i in range(PAGE + 5):
            batch.put(XREF, xref_key("r", f"n{i}"), {"n": i})
    store.put(XREF, xref_key("r", "soon"), {"n": 0}, ttl_seconds=5)
    clock.advance(10)  # expired, hidden from reads, not yet swept
    neighbour = live(store, "r2")

    removal = remove_repo_records(store, "r")

    assert removal.existed
    assert removal.removed["xref"] == PAGE + 6
    assert (removal.removed["structural"], removal.removed["memory"]) == (2, 1)
    assert removal.total == PAGE + 9
    every = list(store.iter_records(XREF, repo_prefix("r"), include_deleted=True))
    assert len(every) == PAGE + 6 and all(r.deleted for r in every)
    assert store.get(STRUCTURAL, repo_key("r")) is None
    assert live(store, "r2") == neighbour
    assert store.get(STRUCTURAL, repo_key("r2")) is not None


def test_removing_an_unknown_repository_writes_nothing(store: Store) -> None:
    seq = store.last_seq()
    removal = remove_repo_records(store, "nope")
    assert (removal.existed, removal.total) == (False, 0)
    assert store.last_seq() == seq


def test_reset_keeps_memory_and_rewrites_the_registration(store: Store) -> None:
    record = store.get(STRUCTURAL, repo_key("r"))
    assert record is not None and isinstance(record.value, dict)
    indexed: dict[str, Value] = {
        **record.value,
        "indexedAt": "2027-01-01T00:00:00.000Z",
        "lastIngestedAt": "2027-01-01T00:00:00.000Z",
        "indexedCommit": "abc",
        "vectors": 4,
        "projectionsEpoch": "e1",
        "index": {"status": "completed"},
        "filters": {"excludeGlobs": ["*.log"]},
    }
    store.put(STRUCTURAL, repo_key("r"), indexed)

    reset = reset_index_records(store, "r")

    assert reset.trees_swept == tuple(short_tree_name(t) for t in CODE_INDEX_TREES)
    assert (reset.entries_deleted, reset.removed["structural"]) == (1, 1)
    after = store.get(STRUCTURAL, repo_key("r"))
    assert after is not None and after.value == {
        "root": "/ws/r",
        "files": 0,
        "filters": {"excludeGlobs": ["*.log"]},
        "indexedAt": None,
        "vectors": 0,
        "lastIngestedAt": None,
        "indexedCommit": None,
        "projectionsDirty": True,
    }
    assert store.count(MEMORY, repo_prefix("r")) == 1


def test_reset_of_an_unknown_repository_raises_not_found(store: Store) -> None:
    with pytest.raises(NotFoundError):
        reset_index_records(store, "nope")
