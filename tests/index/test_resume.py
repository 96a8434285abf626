import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from repocontext.settings import Settings
from repocontext.store import CONTENT, STRUCTURAL, SYMBOL, VECTOR_METADATA, XREF
from repocontext.store.keys import vec_key
from repocontext.workspace import Workspace

WORKER = str(Path(__file__).with_name("index_worker.py"))


def generated_tree(count: int) -> dict[str, str]:
    files: dict[str, str] = {}
    for i in range(count):
        mod = f"pkg{i % 20}/mod{i}.py"
        files[f"pkg{i % 20}/__init__.py"] = ""
        files[mod] = (
            f"from pkg{(i + 1) % 20} import mod{(i + 1) % count}\n\n\n"
            f"def func_{i}(x):\n    return x + {i}\n\n\nclass Thing{i}:\n"
            f"    def method(self):\n        return func_{i}(1)\n"
        )
        if i % 10 == 0:
            files[f"tests/test_mod{i}.py"] = f"from pkg{i % 20}.mod{i} import func_{i}\n"
    return files


def snapshot(data_dir: Path, root: Path) -> dict[str, dict[str, object]]:
    settings = Settings(data_dir=data_dir, workspace_root=root.parent)
    with Workspace.open(settings) as workspace:
        out: dict[str, dict[str, object]] = {}
        for tree in (STRUCTURAL, SYMBOL, XREF, CONTENT):
            out[tree] = {
                r.key: r.value
                for r in workspace.store.iter_records(tree, "repo/")
                if r.key.count("/") > 1  # the repository record holds timings
            }
        return out


@pytest.mark.timeout(240)
def test_a_run_killed_mid_way_is_finished_by_the_next_one_with_the_same_records(
    tmp_path, repo_factory
):
    root = repo_factory(tmp_path / "ws" / "gen", generated_tree(600))
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, WORKER, str(killed), str(root)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the kill takes its parser workers too
    )
    for line in proc.stdout:
        if line.startswith("READ") and int(line.split()[1]) >= 250:
            break
    os.killpg(proc.pid, signal.SIGKILL)  # the indexer and its workers die at once, like a crash
    proc.wait(timeout=30)
    settings = Settings(data_dir=killed, workspace_root=root.parent)
    with Workspace.open(settings) as workspace:
        interrupted = workspace.index_status("gen")
        assert interrupted.status == "failed"
        assert interrupted.error["code"] == "index.interrupted"
        done = workspace.bootstrap(root, background=False)
        assert done.status == "completed"
        assert done.attempt == 2
        assert done.counters["filesUnchanged"] > 0
    clean = tmp_path / "clean"
    result = subprocess.run(
        [sys.executable, WORKER, str(clean), str(root)], capture_output=True, text=True, timeout=200
    )
    assert "DONE" in result.stdout, result.stderr
    assert snapshot(killed, root) == snapshot(clean, root)


def test_an_embedding_pass_whose_process_died_reads_as_interrupted(tmp_path, repo_factory):
    root = repo_factory(tmp_path / "ws" / "gen", generated_tree(20))
    settings = Settings(data_dir=tmp_path / "data", workspace_root=root.parent, embedder="off")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(30)  # a process that has ended
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(root, "gen", background=False)
        running = {"status": "running", "chunksDone": 3, "chunksTotal": 9, "vectors": 0}
        key = vec_key("gen", "status")
        workspace.store.put(VECTOR_METADATA, key, {**running, "pid": os.getpid()})
        assert (workspace.index_status("gen").status, workspace.index_status("gen").phase) == (
            "running",
            "embedding",
        )
        workspace.store.put(VECTOR_METADATA, key, {**running, "pid": gone.pid})
        died = workspace.index_status("gen")
        assert died.status == "failed" and died.error["code"] == "index.interrupted"
        assert died.counters["chunks"] == 3
