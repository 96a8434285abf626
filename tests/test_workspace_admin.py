"""Removing a repository and resetting its index: every record, every projection, no disk I/O."""

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repocontext.errors import (
    EmbeddingStoppedError,
    IndexRunningError,
    NotFoundError,
    PathOutsideWorkspaceError,
)
from repocontext.index.removal import CODE_INDEX_TREES, reset_index_records, short_tree_name
from repocontext.index.run.status import IndexProgress
from repocontext.pack.bundle import ContextRequest
from repocontext.search import EmbedReport
from repocontext.search.request import SearchRequest
from repocontext.settings import Settings
from repocontext.store import MEMORY, SESSION, STRUCTURAL, TREES, VECTOR_METADATA, Value
from repocontext.store.keys import repo_key, repo_prefix, vec_key
from repocontext.testing import make_repo
from repocontext.workspace import Workspace

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": (
        "def compute(x):\n    return x * 2\n\n\nclass Engine:\n    def start(self):\n"
        "        return compute(1)\n"
    ),
    "pkg/mailer.py": "import smtplib\n\n\ndef send_email(to):\n    return smtplib.SMTP(to)\n",
    "tests/test_core.py": (
        "from pkg.core import compute\n\n\ndef test_compute():\n    assert compute(2) == 4\n"
    ),
    "README.md": "# proj\n\nComputes things.\n",
}


def disk_state(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def counts(workspace: Workspace, repo_id: str) -> dict[str, int]:
    store = workspace.store
    return {tree: store.count(tree, repo_prefix(repo_id)) for tree in TREES}


@pytest.fixture
def ws_root(tmp_path: Path) -> Path:
    make_repo(tmp_path / "ws" / "proj", FILES)
    make_repo(tmp_path / "ws" / "proj2", FILES)  # an id sharing a prefix: must stay untouched
    return tmp_path / "ws"


@pytest.fixture
def workspace(tmp_path: Path, ws_root: Path) -> Iterator[Workspace]:
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=ws_root, reconcile="off", embedder="static"
    )
    with Workspace.open(settings) as ws:
        for name in ("proj", "proj2"):
            assert ws.bootstrap(ws_root / name, background=False).status == "completed"
            ws.wait_embedded(name)
        yield ws


def populate_memory_and_session(workspace: Workspace, repo_id: str) -> str:
    entry = workspace.remember(
        repo_id, "decisions", title="Engine stays pure", body="compute has no side effects"
    )
    workspace.context(ContextRequest(repo_id=repo_id, task="compute engine", session="s1"))
    workspace.embed(repo_id)  # the memory write scheduled a pass; run it now
    return entry.key


def answers(workspace: Workspace, repo_id: str) -> dict[str, object]:
    search = workspace.search(SearchRequest.of(repo_id, "compute engine", k=5))
    return {
        "hits": [(h.path, h.reasons) for h in search.hits],
        "outline": workspace.outline(repo_id, "pkg/core.py"),
        "related": workspace.related(repo_id, "pkg/core.py"),
        "files": workspace.get_repo(repo_id).files,  # type: ignore[union-attr]  # registered
        "records": {t: n for t, n in counts(workspace, repo_id).items() if t in CODE_INDEX_TREES},
    }


def test_remove_deletes_every_record_in_every_tree_and_every_projection(
    workspace: Workspace, ws_root: Path
) -> None:
    populate_memory_and_session(workspace, "proj")
    before = counts(workspace, "proj")
    for tree in (STRUCTURAL, MEMORY, SESSION, VECTOR_METADATA, *CODE_INDEX_TREES[:4]):
        assert before[tree] > 0, tree
    neighbour = counts(workspace, "proj2")
    disk = disk_state(ws_root / "proj")
    assert workspace.search(SearchRequest.of("proj", "compute")).hits
    fts = workspace._search.directory / (repo_key("proj").replace("/", "_") + ".fts")
    planes = workspace._semantic.directory / repo_key("proj").replace("/", "_")
    assert fts.exists() and planes.exists()

    removal = workspace.remove_repo("proj")

    assert removal.existed
    assert removal.removed == {
        short_tree_name(tree): before[tree] + (tree == STRUCTURAL) for tree in TREES
    }
    assert counts(workspace, "proj") == dict.fromkeys(TREES, 0)
    assert workspace.store.get(STRUCTURAL, repo_key("proj")) is None
    assert [r.repo_id for r in workspace.list_repos()] == ["proj2"]
    assert counts(workspace, "proj2") == neighbour
    assert not fts.exists() and not planes.exists()
    with pytest.raises(NotFoundError):
        workspace.search(SearchRequest.of("proj", "compute"))
    assert disk_state(ws_root / "proj") == disk


def test_remove_of_an_unknown_repository_is_a_no_op(workspace: Workspace) -> None:
    before = counts(workspace, "proj")
    removal = workspace.remove_repo("nope")
    assert (removal.existed, removal.total) == (False, 0)
    assert removal.removed == dict.fromkeys(map(short_tree_name, TREES), 0)
    assert counts(workspace, "proj") == before


def test_remove_twice_removes_nothing_the_second_time(workspace: Workspace) -> None:
    assert workspace.remove_repo("proj").total > 0
    again = workspace.remove_repo("proj")
    assert (again.existed, again.total) == (False, 0)


def test_reset_drops_the_code_index_and_keeps_memory_sessions_and_registration(
    workspace: Workspace, ws_root: Path
) -> None:
    key = populate_memory_and_session(workspace, "proj")
    before = counts(workspace, "proj")
    disk = disk_state(ws_root / "proj")

    reset = workspace.reset_index("proj")

    assert reset.memory_preserved
    assert reset.trees_swept == tuple(map(short_tree_name, CODE_INDEX_TREES))
    swept = {t: before[t] for t in CODE_INDEX_TREES}
    assert reset.entries_deleted == sum(swept.values()) > 0
    after = counts(workspace, "proj")
    assert {t: after[t] for t in CODE_INDEX_TREES} == dict.fromkeys(CODE_INDEX_TREES, 0)
    assert (after[MEMORY], after[SESSION]) == (before[MEMORY], before[SESSION])
    assert workspace.recall_note(key).exists is True
    info = workspace.get_repo("proj")
    assert info is not None and info.root == str(ws_root / "proj")
    assert (info.files, info.indexed_at, info.vectors, info.last_ingested_at) == (0, None, 0, None)
    assert info.indexed_commit is None
    assert workspace.index_status("proj").status == "none"
    assert workspace.health("proj").repository.verdict == "building"  # type: ignore[union-attr]
    assert workspace.search(SearchRequest.of("proj", "compute engine")).hits == ()
    memory = workspace.search(SearchRequest.of("proj", "engine pure", scope="memory"))
    assert [h.key for h in memory.hits] == [key]
    assert workspace.store.get(VECTOR_METADATA, vec_key("proj", "status")) is None
    assert disk_state(ws_root / "proj") == disk


def test_an_open_keyword_index_follows_a_reset_made_by_another_process(
    workspace: Workspace,
) -> None:
    # Another process (the CLI) tombstones the records; this one only sees the change feed.
    key = populate_memory_and_session(workspace, "proj")
    assert workspace.search(SearchRequest.of("proj", "compute engine")).hits
    reset_index_records(workspace.store, "proj")
    assert workspace.search(SearchRequest.of("proj", "compute engine")).hits == ()
    memory = workspace.search(SearchRequest.of("proj", "engine pure", scope="memory"))
    assert [h.key for h in memory.hits] == [key]


def test_reset_of_an_unknown_repository_is_repo_not_found(workspace: Workspace) -> None:
    with pytest.raises(NotFoundError) as caught:
        workspace.reset_index("nope")
    assert caught.value.code == "repo.not_found"


def test_indexing_again_after_reset_gives_the_same_answers(
    workspace: Workspace, ws_root: Path
) -> None:
    before = answers(workspace, "proj")
    workspace.reset_index("proj")
    status = workspace.bootstrap(ws_root / "proj", background=False)
    workspace.wait_embedded("proj")
    assert status.status == "completed" and status.counters["filesAdded"] == len(FILES)
    assert answers(workspace, "proj") == before


def test_the_reconcile_entry_points_write_nothing_after_reset_or_remove(
    workspace: Workspace,
) -> None:
    workspace.reset_index("proj")
    assert workspace._index.reindex("proj") == IndexProgress(phase="reconciling")
    assert workspace.refresh("proj", ["pkg/core.py"]) == IndexProgress(phase="reconciling")
    assert {t: n for t, n in counts(workspace, "proj").items() if n} == {}
    workspace.remove_repo("proj")
    with pytest.raises(NotFoundError):
        workspace._index.reindex("proj")
    report = workspace.embed("proj")  # a pass scheduled before the removal
    assert report is not None and report.vectors == 0
    assert counts(workspace, "proj") == dict.fromkeys(TREES, 0)
    assert workspace.store.get(STRUCTURAL, repo_key("proj")) is None


@pytest.mark.parametrize("drop", ["remove_repo", "reset_index"])
def test_a_pass_asked_for_before_a_removal_writes_nothing_whichever_runs_first(
    workspace: Workspace, drop: str
) -> None:
    # A pass holds the repository's turn (the lock every pass of it takes); meanwhile an
    # explicit pass with work to do (a new note) waits for that turn, then the removal
    # starts and waits too. Whichever of the two goes first, the waiting pass must write
    # nothing: before the fix, the removal let it go between dropping the plane and
    # deleting the records, and it wrote the vector status record behind the sweep.
    semantic = workspace._semantic
    turn = semantic._run_locks.setdefault("proj", threading.Lock())
    reports: list[object] = []
    with turn:
        workspace.remember("proj", "decisions", title="Engine stays pure", body="no effects")
        waiting = threading.Thread(target=lambda: reports.append(workspace.embed("proj")))
        waiting.start()
        time.sleep(0.3)  # (it waits for the turn)
        dropping = threading.Thread(target=getattr(workspace, drop), args=("proj",))
        dropping.start()
        deadline = time.monotonic() + 30
        while "proj" not in semantic._dropping and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "proj" in semantic._dropping
    dropping.join(30)
    waiting.join(30)
    workspace.wait_embedded("proj", 30)
    assert reports == [EmbedReport(0, 0, 0, 0.0)]
    assert workspace.store.get(VECTOR_METADATA, vec_key("proj", "status")) is None
    if drop == "remove_repo":
        assert counts(workspace, "proj") == dict.fromkeys(TREES, 0)


def test_an_explicit_pass_stopped_by_a_removal_raises_a_coded_error(tmp_path: Path) -> None:
    functions = "".join(f"def step_{i}(x):\n    return x + {i}\n\n\n" for i in range(300))
    root = make_repo(tmp_path / "ws" / "big", {"pkg/steps.py": functions})
    plain = Settings(data_dir=tmp_path / "data", workspace_root=root.parent, reconcile="off")
    with Workspace.open(plain.model_copy(update={"embedder": "off"})) as workspace:
        workspace.bootstrap(root, background=False)  # indexed, nothing embedded
    with Workspace.open(plain.model_copy(update={"embedder": "static"})) as workspace:
        first_batch, go = threading.Event(), threading.Event()

        def hold(done: int, total: int) -> None:
            first_batch.set()
            assert go.wait(30)

        raised: list[BaseException] = []

        def embed() -> None:
            try:
                workspace.embed("big", on_progress=hold)
            except BaseException as exc:  # (recorded for the assertion below)
                raised.append(exc)

        passing = threading.Thread(target=embed)
        passing.start()
        assert first_batch.wait(30)  # 256 of its 300 chunks embedded, none written yet
        removal = threading.Thread(target=workspace.remove_repo, args=("big",))
        removal.start()
        deadline = time.monotonic() + 30
        while "big" not in workspace._semantic._dropping and time.monotonic() < deadline:
            time.sleep(0.01)
        go.set()
        passing.join(30)
        removal.join(30)
        assert [type(e) for e in raised] == [EmbeddingStoppedError]
        assert raised[0].code == "embed.stopped"  # type: ignore[attr-defined]
        assert counts(workspace, "big") == dict.fromkeys(TREES, 0)


def test_remove_and_reset_refuse_while_an_index_run_is_in_progress(
    workspace: Workspace, ws_root: Path
) -> None:
    (ws_root / "proj" / "pkg" / "extra.py").write_text("def extra():\n    return 1\n")
    os.utime(ws_root / "proj" / "pkg" / "core.py", ns=(1, 1))  # changed stat: read again
    parsing, release = threading.Event(), threading.Event()

    def hold(progress: IndexProgress, done: int, total: int) -> None:
        parsing.set()
        assert release.wait(30)

    run = threading.Thread(
        target=workspace.bootstrap,
        args=(ws_root / "proj",),
        kwargs={"background": False, "on_progress": hold},
    )
    run.start()
    try:
        assert parsing.wait(30)
        before = counts(workspace, "proj")
        for drop in (workspace.remove_repo, workspace.reset_index):
            with pytest.raises(IndexRunningError) as caught:
                drop("proj")
            assert caught.value.code == "index.running"
        assert counts(workspace, "proj") == before
    finally:
        release.set()
        run.join(30)
    assert workspace.index_status("proj").status == "completed"
    assert workspace.remove_repo("proj").existed
    assert counts(workspace, "proj") == dict.fromkeys(TREES, 0)


def test_add_refuses_a_symlink_or_dotdot_path_outside_the_root(
    workspace: Workspace, ws_root: Path, tmp_path: Path
) -> None:
    outside = make_repo(tmp_path / "outside", FILES)
    (ws_root / "link").symlink_to(outside, target_is_directory=True)
    for path in (ws_root / "link", ws_root / ".." / "outside"):
        with pytest.raises(PathOutsideWorkspaceError) as caught:
            workspace.bootstrap(path, background=False)
        assert caught.value.code == "path.outside_workspace"
    assert [r.repo_id for r in workspace.list_repos()] == ["proj", "proj2"]


def test_exclusive_refuses_a_run_of_another_process_and_ignores_stale_records(
    workspace: Workspace, tmp_path: Path, run_lock_holder: Any
) -> None:
    record = workspace.store.get(STRUCTURAL, repo_key("proj"))
    assert record is not None and isinstance(record.value, dict)
    dead = subprocess.Popen(["true"])  # reaped below: its pid is gone
    dead.wait()
    alive = subprocess.Popen(["cat"], stdin=subprocess.PIPE)  # alive, but holds no run lock
    try:
        with run_lock_holder(tmp_path / "data", "proj") as running:
            assert_refusals(workspace, record.value, [(running.pid, True)])
        # A "running" record whose process holds no lock is stale (a reused pid, say).
        assert_refusals(workspace, record.value, [(alive.pid, False), (dead.pid, False)])
    finally:
        assert alive.stdin is not None
        alive.stdin.close()
        alive.wait(30)


def assert_refusals(
    workspace: Workspace, registration: dict[str, Value], cases: list[tuple[int, bool]]
) -> None:
    for pid, refused in cases:
        run: dict[str, Value] = {"status": "running", "pid": pid, "phase": "parsing"}
        running: dict[str, Value] = {**registration, "index": run}
        workspace.store.put(STRUCTURAL, repo_key("proj"), running)
        if refused:
            with pytest.raises(IndexRunningError, match="in process"):
                workspace.remove_repo("proj")
        else:
            assert workspace.remove_repo("proj").existed
            workspace.register_repo(registration["root"], "proj")  # (for the next case)


def test_exclusive_waits_for_a_quiet_refresh_only_up_to_its_timeout(workspace: Workspace) -> None:
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with workspace._index.exclusive("proj"):  # stands in for a refresh holding the lock
            holding.set()
            assert release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(30)
        with (
            pytest.raises(IndexRunningError, match="did not end"),
            workspace._index.exclusive("proj", timeout=0.01),
        ):
            pass
    finally:
        release.set()
        holder.join(30)
    with workspace._index.exclusive("proj", timeout=0.01):
        pass


def test_an_index_run_is_refused_while_another_process_runs_one(
    workspace: Workspace, ws_root: Path, tmp_path: Path, run_lock_holder: Any
) -> None:
    record = workspace.store.get(STRUCTURAL, repo_key("proj"))
    assert record is not None and isinstance(record.value, dict)
    with run_lock_holder(tmp_path / "data", "proj") as holder:
        other = holder.pid
        run: dict[str, Value] = {"status": "running", "pid": other, "phase": "parsing"}
        workspace.store.put(STRUCTURAL, repo_key("proj"), {**record.value, "index": run})
        with pytest.raises(IndexRunningError, match=f"in process {other}") as caught:
            workspace.bootstrap(ws_root / "proj", background=False)
        assert caught.value.code == "index.running"
        with pytest.raises(IndexRunningError):
            workspace.refresh("proj", ["app.py"])
        assert workspace.index_status("proj").status == "running"  # its status untouched
    # (its process gone: the record reads as interrupted, and the next run goes ahead)
    assert workspace.bootstrap(ws_root / "proj", background=False).status == "completed"


def test_a_first_pass_killed_with_its_process_is_resumed_when_a_server_starts(
    tmp_path: Path, ws_root: Path
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=ws_root, reconcile="off", embedder="off"
    )
    dead = subprocess.Popen(["true"])
    dead.wait()
    with Workspace.open(settings) as workspace:
        for name in ("proj", "proj2"):
            workspace.register_repo(ws_root / name)
        record = workspace.store.get(STRUCTURAL, repo_key("proj"))
        assert record is not None and isinstance(record.value, dict)
        killed: dict[str, Value] = {"status": "running", "pid": dead.pid, "phase": "parsing"}
        workspace.store.put(STRUCTURAL, repo_key("proj"), {**record.value, "index": killed})
        assert workspace.index_status("proj").status == "failed"  # index.interrupted
    with Workspace.open(settings) as workspace:
        workspace.start_background()
        assert workspace.wait_indexed("proj", timeout=120).status == "completed"
        assert workspace.get_repo("proj").indexed_at is not None
        # One registered but never indexed (no failed run) is left alone.
        assert workspace.index_status("proj2").status == "none"


def test_a_quiet_refresh_of_another_process_is_waited_for(
    tmp_path: Path, run_lock_holder: Any
) -> None:
    repo = tmp_path / "ws" / "proj"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("def a():\n    pass\n")
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent, embedder="off")
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, background=False)
        # Another process holds the lock for a moment and records no run (a refresh that
        # changes nothing): a run waits for it instead of refusing.
        with run_lock_holder(tmp_path / "data", "proj", seconds=1.0):
            assert workspace.bootstrap(repo, background=False).status == "completed"
