"""Memory entries in keyword search: ranking, reasons, freshness, expiry, rebuild."""

from pathlib import Path

import pytest

from repocontext.search.request import SearchRequest
from repocontext.settings import Settings
from repocontext.testing import FakeClock, make_repo
from repocontext.workspace import Workspace


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def ws(tmp_path: Path, clock: FakeClock):
    cache = "class LruCache:\n    def evict(self):\n        pass\n"
    repo = make_repo(tmp_path / "ws" / "demo", {"src/cache.py": cache})
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent, embedder="off")
    with Workspace.open(settings, clock=clock) as workspace:
        workspace.bootstrap(repo, "demo", background=False)
        yield workspace


def keys(result):
    return [hit.key for hit in result.hits]


def test_memory_scope_ranks_entries_with_reasons(ws):
    evict = ws.remember(
        "demo",
        "gotchas",
        title="Cache eviction runs on write",
        body="Not on read.",
        tags=["cache", "perf"],
    )
    other = ws.remember("demo", "decisions", title="Use LMDB", body="durable storage")
    result = ws.search(SearchRequest.of("demo", "cache eviction", scope="memory"))
    assert result.mode == "keyword" and result.retrieval_path == "keyword.no_embedder"
    assert keys(result) == [evict.key]
    [hit] = result.hits
    assert hit.path is None and hit.lines is None
    assert hit.reasons == ("tag:cache", "content-match")
    assert hit.entry.kind == "memory" and hit.entry.title == "Cache eviction runs on write"
    assert hit.entry.topic == "gotchas" and hit.entry.memory_kind == "note"
    topic = ws.search(SearchRequest.of("demo", "decisions storage", scope="memory"))
    assert keys(topic) == [other.key]
    assert topic.hits[0].reasons == ("topic-match", "content-match")
    named = ws.search(SearchRequest.of("demo", f"what did {other.id} say", scope="memory"))
    assert keys(named)[0] == other.key and "key-match" in named.hits[0].reasons
    assert ws.search(SearchRequest.of("demo", "nothing like it", scope="memory")).mode == "empty"


def test_updates_forgets_and_expiry_show_in_the_next_search(ws, clock):
    made = ws.remember("demo", "notes", title="flaky network test", ttl_seconds=60)
    assert keys(ws.search(SearchRequest.of("demo", "flaky", scope="memory"))) == [made.key]
    ws.update(made.key, fields={"title": "stable now"})
    assert ws.search(SearchRequest.of("demo", "flaky", scope="memory")).hits == ()
    assert keys(ws.search(SearchRequest.of("demo", "stable", scope="memory"))) == [made.key]
    clock.advance(61)
    assert ws.search(SearchRequest.of("demo", "stable", scope="memory")).hits == ()
    gone = ws.remember("demo", "notes", title="temporary workaround")
    ws.forget(gone.key)
    assert ws.search(SearchRequest.of("demo", "workaround", scope="memory")).hits == ()


def test_all_scope_interleaves_code_and_memory_and_code_scope_excludes_memory(ws):
    note = ws.remember("demo", "gotchas", title="LruCache evict is not thread safe")
    code = ws.search(SearchRequest.of("demo", "LruCache evict"))
    assert all(hit.path for hit in code.hits) and note.key not in keys(code)
    both = ws.search(SearchRequest.of("demo", "LruCache evict", scope="all"))
    assert keys(both)[:2] == [code.hits[0].key, note.key]


def test_a_deleted_index_is_rebuilt_with_the_memory_entries(ws):
    made = ws.remember("demo", "notes", title="rebuild me", tags=["index"])
    assert keys(ws.search(SearchRequest.of("demo", "rebuild", scope="memory"))) == [made.key]
    index = ws._search.keyword_index("demo")
    index.clear()
    assert keys(ws.search(SearchRequest.of("demo", "rebuild", scope="memory"))) == [made.key]


def test_memory_entries_are_embedded_and_fused_with_the_keyword_ranking(tmp_path: Path):
    db = "def migrate(schema):\n    return schema\n"
    repo = make_repo(tmp_path / "ws" / "demo", {"src/db.py": db})
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent, embedder="static")
    with Workspace.open(settings) as ws:
        ws.bootstrap(repo, "demo", background=False)
        ws.wait_embedded("demo", 60)
        evict = ws.remember("demo", "gotchas", title="Cache eviction runs on every write")
        ws.remember("demo", "decisions", title="Database migrations need a backup first")
        ws.wait_embedded("demo", 60)  # the write scheduled an embedding pass
        assert ws._semantic.ready_vectors("demo") >= 3
        # No term in common with the entry: only the vectors can find it.
        found = ws.search(SearchRequest.of("demo", "purge stale cached items", scope="memory"))
        assert found.mode in ("semantic", "hybrid")
        assert found.retrieval_path.endswith(".exact")
        assert found.hits[0].key == evict.key and found.hits[0].reasons == ("semantic",)
        # Found by its words and its vector: both lists answered, so the answer is hybrid.
        both = ws.search(SearchRequest.of("demo", "cache eviction on writes", scope="memory"))
        assert both.hits[0].key == evict.key
        assert "semantic" in both.hits[0].reasons and len(both.hits[0].reasons) > 1
        assert (both.mode, both.retrieval_path) == ("hybrid", "hybrid.exact")
        # Memory found by a topic the code does not mention: the mixed answer is hybrid too.
        mixed = ws.search(SearchRequest.of("demo", "database migrations backup", scope="all"))
        assert {h.key for h in mixed.hits if h.path is None} and mixed.mode == "hybrid"
        # Memory chunks never show up as files in the code scope.
        code = ws.search(SearchRequest.of("demo", "purge stale cached items"))
        assert all(hit.path and not hit.path.startswith("\x1f") for hit in code.hits)
        # An edit re-embeds the entry; forgetting it drops its vector.
        ws.forget(evict.key)
        ws.wait_embedded("demo", 60)
        again = ws.search(SearchRequest.of("demo", "purge stale cached items", scope="memory"))
        assert evict.key not in keys(again)
