"""Derived indexes shared between processes, and kept current from the store's change feed.

Several processes serve one data directory (``serve --workers N``) and several servers may
share one store with a data directory each: what one writes, the others find, by keyword at
once and semantically once their change-feed follower has embedded it.
"""

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from repocontext.mcp.client import http_client
from repocontext.search.embed import Chunk, EmbeddingSpace
from repocontext.search.keyword import KeywordDoc, KeywordIndex
from repocontext.search.memory_vectors import memory_key_of
from repocontext.search.semantic import SemanticService
from repocontext.search.vectors import VectorPlane
from repocontext.settings import Settings
from repocontext.store import SystemClock
from repocontext.testing import make_repo, start_http_server, tool_ok
from repocontext.workspace import Workspace
from repocontext.workspace.follower import FeedFollower, repos_changed

DEADLINE_S = 90.0
DB = "def migrate(schema):\n    return schema\n"


@pytest.mark.anyio
@pytest.mark.timeout(240)
async def test_what_one_process_writes_another_serving_the_data_dir_finds_and_embeds(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "ws" / "demo", {"src/db.py": DB})
    data = tmp_path / "data"
    # A writes and never embeds (embedder off); B serves the same data dir with vectors.
    with Workspace.open(Settings(data_dir=data, workspace_root=repo.parent, embedder="off")) as a:
        a.bootstrap(repo, "demo", background=False)
        env = {"REPOCONTEXT_EMBEDDER": "static", "HF_HUB_OFFLINE": "1"}
        server, base = start_http_server(data, repo.parent, env=env)
        try:
            note = a.remember("demo", "gotchas", title="Cache eviction runs on every write")
            (repo / "src" / "quokka.py").write_text("def quokka_handler():\n    return 2\n")
            a.bootstrap(repo, "demo", background=False)  # A re-indexes the tree
            async with http_client(f"{base}/mcp") as b:
                memory = {"repoId": "demo", "query": "eviction", "scope": "memory"}
                hits = tool_ok(await b.call_tool("repocontext_search", memory))["hits"]
                assert hits[0]["key"] == note.key
                code = {"repoId": "demo", "query": "quokka handler"}
                hits = tool_ok(await b.call_tool("repocontext_search", code))["hits"]
                assert hits[0]["path"] == "src/quokka.py"
                # No word in common with the note: only B's vectors find it, and only B's
                # follower can have made them (A has no embedder, B wrote nothing).
                semantic = {**memory, "query": "purge stale cached items", "mode": "semantic"}
                found = await _poll(b, semantic, lambda hit: hit["key"] == note.key)
                assert found["reasons"] == ["semantic"]
                code_semantic = {**code, "query": "quokka handler", "mode": "semantic"}
                await _poll(b, code_semantic, lambda hit: hit["path"] == "src/quokka.py")
        finally:
            server.terminate()
            server.wait(60)


async def _poll(client: Any, arguments: dict[str, str], wanted: Any) -> dict[str, Any]:
    """Search until the first hit is the wanted one (a vectors-unavailable error meanwhile)."""
    started = time.monotonic()
    while True:
        result = await client.call_tool("repocontext_search", arguments)
        hits = [] if result.is_error else result.structured_content["hits"]
        if hits and wanted(hits[0]):
            return dict(hits[0])
        assert time.monotonic() - started < DEADLINE_S, f"never found: {result.content}"


def test_a_server_answers_semantically_only_from_planes_its_own_data_dir_holds(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "ws" / "demo", {"src/db.py": DB})
    settings = Settings(data_dir=tmp_path / "a", workspace_root=repo.parent, embedder="static")
    with Workspace.open(settings) as a:
        a.bootstrap(repo, "demo", background=False)
        a.wait_embedded("demo", 60)
        # Server B: the same store (its status record says "completed"), its own data dir.
        b = SemanticService(a.store, tmp_path / "b" / "vectors", "static", SystemClock())
        try:
            assert a.store is b.store and b.status("demo").planes_complete
            assert b.ready_plane("demo") is None  # nothing of B's answers yet: keyword only
            assert b.search("demo", "migrate schema", 5) is None
            assert b.catch_up("demo") is True  # the vectors the store records, embedded here
            b.wait("demo", 60)
            plane = b.ready_plane("demo")
            assert plane is not None and plane.size > 0
            assert b.catch_up("demo") is False  # nothing left to catch up
            hits = b.search("demo", "migrate schema", 5)
            assert hits is not None and hits[0].path == "src/db.py"
        finally:
            b.close()


def test_a_keyword_index_file_shared_by_two_processes_never_moves_back_nor_redoes_work(
    tmp_path: Path,
) -> None:
    path = tmp_path / "search" / "demo.fts"
    one, two = KeywordIndex(path), KeywordIndex(path)
    try:

        def doc(name: str) -> KeywordDoc:
            return KeywordDoc(name, None, name.replace(".", " "), "", "")

        assert one.apply([doc("a.py")], [], 5, rebuild=True) == 1
        assert two.seq == 5  # read from the file, not remembered
        # Two: the same feed (0..5) again, then an older one: nothing written, seq stays.
        assert two.apply([doc("a.py")], [], 5, base=0) == 0
        assert two.apply([doc("old.py")], [], 3, base=0) == 0
        assert two.apply([doc("b.py")], [], 7, base=5) == 1
        assert one.seq == 7 and one.blobs().keys() == {"a.py", "b.py"}
        # A rebuild to where the file already is changes nothing; one emptied meanwhile
        # (a drop) refuses an incremental apply that assumes the rows it lost.
        assert one.apply([doc("a.py")], [], 7, rebuild=True) == 0 and one.count() == 2
        two.clear()
        assert one.apply([doc("c.py")], [], 9, base=7) == 0 and one.seq == 0
    finally:
        one.close()
        two.close()


def test_a_vector_plane_loads_what_another_process_rewrote(tmp_path: Path) -> None:
    space = EmbeddingSpace("test", "unit", 4)
    writer = VectorPlane(tmp_path / "plane", space)
    reader = VectorPlane(tmp_path / "plane", space)
    assert not reader.on_disk and reader.reload() is False
    rows = np.eye(4, dtype=np.float32)[:2]
    chunks = [Chunk(name, "window", 1, 2, None, name) for name in ("a.py", "b.py")]
    writer.replace(rows, list(chunks), {"a.py": "1", "b.py": "2"})
    assert reader.size == 0  # (what it loaded before)
    assert reader.reload() is True and reader.on_disk and reader.size == 2
    assert reader.reload() is False  # one stat, nothing new
    assert reader.search(np.eye(4, dtype=np.float32)[1], 1)[0].path == "b.py"


def test_the_follower_reports_each_repository_whose_files_or_memory_changed(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    for name in ("alpha", "beta"):
        make_repo(ws / name, {"core.py": f"def {name}():\n    return 1\n"})
    settings = Settings(data_dir=tmp_path / "data", workspace_root=ws, embedder="off")
    with Workspace.open(settings) as workspace:
        for name in ("alpha", "beta"):
            workspace.bootstrap(ws / name, name, background=False)
        reported: list[tuple[str, int]] = []
        follower = FeedFollower(
            workspace.store, lambda *change: reported.append(change), lambda: ["alpha", "beta"]
        )
        follower.cursor = workspace.store.last_seq()
        assert follower.poll() == set()
        workspace.remember("beta", "notes", title="only beta changed")
        assert follower.poll() == {"beta"} and reported == [("beta", workspace.store.last_seq())]
        assert follower.poll() == set() and follower.cursor == workspace.store.last_seq()
    changes = [(3, "repo/a%2Fb/file/x.py"), (4, "repo/c/vec/status"), (2, "repo/a%2Fb/mem/t/1")]
    assert repos_changed([*changes, (5, "repo/d")]) == {"a/b": 3}


def test_a_scheduled_pass_is_skipped_when_another_process_of_the_data_dir_embedded_its_changes(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "ws" / "demo", {"src/db.py": DB})
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent, embedder="static")
    with Workspace.open(settings) as a:
        a.bootstrap(repo, "demo", background=False)
        a.wait_embedded("demo", 60)
        # B: another process's service over the same data dir (its planes, its embed lock).
        b = SemanticService(a.store, tmp_path / "data" / "vectors", "static", SystemClock())
        try:
            a.remember("demo", "notes", title="written through A")
            seq = a.store.last_seq()
            a.wait_embedded("demo", 60)  # A's own pass embedded the note
            b.schedule("demo", seq)  # B's follower saw the note
            b.wait("demo", 60)
            skipped = b.refresh("demo", scheduled=True)
            assert skipped is not None and skipped.vectors == 0  # no scan, no pass
            ran = b.refresh("demo")  # asked directly: a pass (with nothing left to embed)
            assert ran is not None and ran.chunks_embedded == 0 and ran.vectors > 0
            # A change no pass saw yet: B's scheduled pass runs and embeds it.
            second = a.remember("demo", "notes", title="zeppelin hangar maintenance")
            b.schedule("demo")
            b.wait("demo", 60)
            hits = b.search("demo", "zeppelin hangar maintenance", 3) or []
            assert memory_key_of(hits[0].path) == second.key
        finally:
            b.close()
