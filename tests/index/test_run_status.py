"""A stored run is parsed once into a RunRecord and read back as the reported status."""

import os
from pathlib import Path

from repocontext.index.run.status import IndexProgress, RunRecord, recorded_status, run_record
from repocontext.settings import Settings
from repocontext.store import STRUCTURAL, EmbedStatus
from repocontext.store.keys import repo_key
from repocontext.testing import FakeClock, make_repo
from repocontext.workspace import Workspace


def stored_run(status: str, error=None) -> dict:
    clock = FakeClock()
    progress = IndexProgress(phase="parsing", files_seen=5, files_added=2, issues=["skipped"])
    started = clock.now()
    clock.advance(1.5)
    return run_record(status, progress, 3, started, clock, error)


def test_a_stored_run_parses_back_into_its_typed_record():
    run = RunRecord.of_value(stored_run("running"))

    assert (run.status, run.phase, run.attempt, run.pid) == ("running", "parsing", 3, os.getpid())
    assert run.elapsed_ms == 1500 and run.started_at and run.finished_at is None
    assert run.counters["filesSeen"] == 5 and run.issues == ["skipped"] and run.error is None


def test_a_malformed_stored_run_reads_with_defaults():
    run = RunRecord.of_value({"status": "failed", "pid": "7", "counters": [], "error": "x"})

    assert (run.pid, run.counters, run.error, run.attempt, run.phase) == (None, {}, None, 0, None)


def test_no_stored_run_reports_none():
    assert recorded_status("demo", None, EmbedStatus(), alive=lambda pid: True).status == "none"


def test_a_running_run_whose_process_is_gone_reports_interrupted():
    status = recorded_status("demo", stored_run("running"), EmbedStatus(), alive=lambda pid: False)

    assert status.status == "failed" and status.error["code"] == "index.interrupted"
    assert status.counters["filesAdded"] == 2 and status.attempt == 3


def test_a_running_embedding_pass_folds_its_counters_and_phase_into_a_completed_run():
    embedding = EmbedStatus("running", "hash-256", 4, 10, 30, None, False, os.getpid())

    status = recorded_status("demo", stored_run("completed"), embedding, alive=lambda pid: True)

    assert (status.status, status.phase) == ("running", "embedding")
    assert (status.counters["chunks"], status.counters["chunksTotal"]) == (4, 10)
    assert status.counters["vectors"] == 30


def test_a_completed_run_is_stored_in_no_phase_and_a_failed_one_keeps_its_phase():
    assert RunRecord.of_value(stored_run("completed")).phase is None
    completed = recorded_status("demo", stored_run("completed"), EmbedStatus(), alive=bool)
    assert (completed.status, completed.phase) == ("completed", None)
    assert completed.counters["filesAdded"] == 2
    failed = recorded_status("demo", stored_run("failed", {"code": "x"}), EmbedStatus(), alive=bool)
    assert (failed.status, failed.phase) == ("failed", "parsing")


def test_a_completed_run_recorded_with_its_last_phase_reads_in_no_phase():
    # What runs stored before the fix: the phase the run was in when it completed.
    old = {**stored_run("running"), "status": "completed", "phase": "applying"}

    status = recorded_status("demo", old, EmbedStatus(), alive=lambda pid: True)

    assert (status.status, status.phase) == ("completed", None)


def test_the_status_read_during_and_after_a_real_run_pairs_completed_with_no_phase(
    tmp_path: Path,
) -> None:
    files = {f"pkg/m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(30)}
    repo = make_repo(tmp_path / "ws" / "proj", files)
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=repo.parent, reconcile="off", embedder="off"
    )
    seen: list[tuple[str, str | None]] = []
    with Workspace.open(settings) as workspace:

        def read_status(progress: IndexProgress, done: int, total: int) -> None:
            status = workspace.index_status("proj")  # as another reader would, mid-run
            seen.append((status.status, status.phase))

        workspace.bootstrap(repo, "proj", background=False, on_progress=read_status)
        during = list(seen)
        after = workspace.index_status("proj")

    assert during and all(status == "running" and phase for status, phase in during)
    assert (after.status, after.phase) == ("completed", None)


def test_a_run_recorded_on_another_host_is_alive_exactly_while_its_run_lock_is_held(
    tmp_path: Path, run_lock_holder
):
    repo = make_repo(tmp_path / "ws" / "demo", {"a.py": "x = 1\n"})
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent, embedder="off")
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, "demo", background=False)
        record = workspace.store.get(STRUCTURAL, repo_key("demo"))
        assert record is not None and isinstance(record.value, dict)
        # A server on another machine records its run (pid 1 exists here too: it means nothing).
        foreign = {**stored_run("running"), "pid": 1, "host": "another-machine"}
        workspace.store.put(STRUCTURAL, repo_key("demo"), {**record.value, "index": foreign})
        with run_lock_holder(tmp_path / "data", "demo"):
            assert workspace.index_status("demo").status == "running"
        status = workspace.index_status("demo")
        assert status.status == "failed" and status.error["code"] == "index.interrupted"
