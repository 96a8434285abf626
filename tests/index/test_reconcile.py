"""Keeping the index fresh: scoped refreshes, the warm projection state and the reconcile loop."""

import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from repocontext.errors import PathOutsideWorkspaceError
from repocontext.index.files.nodes import load_file_nodes
from repocontext.index.files.walk import WalkOptions
from repocontext.index.projections.projection import ProjectionState, record_digest
from repocontext.settings import Settings
from repocontext.store import STRUCTURAL, SYMBOL, XREF
from repocontext.store.keys import family_prefix, repo_key, symbol_key
from repocontext.testing import FakeClock
from repocontext.workspace import Workspace


def projections(workspace):
    """The stored projection records, as digests (what a state keeps of them)."""
    return {
        tree: {
            r.key: record_digest(r.value)
            for r in workspace.store.iter_records(tree, family_prefix("demo", f))
        }
        for tree, f in ((STRUCTURAL, "pkg"), (SYMBOL, "symbol"), (XREF, "xref"))
    }


def rebuilt(workspace):
    nodes = load_file_nodes(workspace.store, "demo").values()
    return ProjectionState.build("demo", nodes, None).records


def wait_for(condition, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_refresh_applies_edits_additions_and_deletions_under_its_paths(workspace, repo):
    workspace.bootstrap(repo, background=False)
    (repo / "pkg/util.py").write_text(
        "def parse(text):\n    return [text]\n\n\ndef extra():\n    pass\n"
    )
    (repo / "pkg/new.py").write_text("from pkg.util import extra\n")
    (repo / "web/lib/index.js").unlink()
    (repo / "tests/test_util.py").write_text("# also changed, but not refreshed\n")
    progress = workspace.refresh("demo", ["pkg", "web/lib/index.js"])
    assert (progress.files_updated, progress.files_added, progress.files_removed) == (1, 1, 1)
    assert progress.phase == "reconciling"
    nodes = load_file_nodes(workspace.store, "demo")
    assert "web/lib/index.js" not in nodes and "pkg/new.py" in nodes
    assert workspace.store.get(SYMBOL, symbol_key("demo", "pkg.util.extra")) is not None
    assert "pkg/new.py" in {d.path for d in workspace.related("demo", "pkg/util.py").dependents}
    # Outside the scope nothing was looked at; the records equal a rebuild from the nodes.
    assert workspace.changed("demo").updated == ["tests/test_util.py"]
    assert projections(workspace) == rebuilt(workspace)
    assert workspace.index_status("demo").counters["filesSeen"] == 4  # pkg/ holds four files now


def test_the_warm_state_is_used_and_matches_a_rebuild_after_many_changes(workspace, repo):
    workspace.bootstrap(repo, background=False)
    for i in range(5):
        (repo / f"pkg/m{i}.py").write_text(
            f"from pkg.util import parse\n\n\ndef f{i}():\n    return parse('x')\n"
        )
        workspace.refresh("demo", [f"pkg/m{i}.py"])
        if i % 2:
            (repo / f"pkg/m{i - 1}.py").unlink()
            workspace.refresh("demo", [f"pkg/m{i - 1}.py"])
    (repo / "pkg/util.py").write_text("def renamed(text):\n    return text\n")
    status = workspace.bootstrap(repo, background=False)
    assert status.counters["filesUpdated"] == 1
    assert projections(workspace) == rebuilt(workspace)
    users = workspace.store.get(XREF, "repo/demo/xref/name:parse")
    assert users is None  # parse is defined nowhere any more


def test_a_refresh_of_unchanged_or_ignored_paths_writes_nothing(workspace, repo):
    workspace.bootstrap(repo, background=False)
    (repo / "noise.log").write_text("ignored by .gitignore\n")
    before = workspace.store.last_seq()
    progress = workspace.refresh("demo", ["pkg/util.py", "noise.log", "missing.py"])
    assert progress.files_read == 0
    assert workspace.store.last_seq() == before


def test_a_refresh_refuses_paths_outside_the_root(workspace, repo, tmp_path):
    workspace.bootstrap(repo, background=False)
    with pytest.raises(PathOutsideWorkspaceError):
        workspace.refresh("demo", ["../elsewhere.py"])
    with pytest.raises(PathOutsideWorkspaceError):
        workspace.refresh("demo", [str(tmp_path)])


def test_another_process_writing_the_projections_invalidates_the_warm_state(tmp_path, repo):
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent)
    with Workspace.open(settings, clock=FakeClock()) as first:
        first.bootstrap(repo, background=False)
        (repo / "pkg/util.py").write_text("def other():\n    pass\n")
        # Another process (the CLI) runs a pass and rewrites the projections meanwhile.
        cli = [str(Path(sys.executable).parent / "repocontext"), "index", str(repo), "--json"]
        subprocess.run(
            [*cli, "--data-dir", str(tmp_path / "data")], check=True, capture_output=True
        )
        (repo / "pkg/app.py").write_text("from pkg.util import other\n")
        first.refresh("demo", ["pkg/app.py"])
        assert projections(first) == rebuilt(first)


@contextmanager
def watched(tmp_path, repo):
    """A workspace with ``repo`` indexed and its watcher running."""
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent, reconcile="watch")
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, background=False)
        workspace.start_background()
        assert workspace.reconciler is not None
        assert workspace.reconciler.watching.wait(30)
        yield workspace


def test_the_watch_loop_reflects_edits_new_files_and_deletions(tmp_path, repo):
    with watched(tmp_path, repo) as workspace:
        (repo / "pkg/util.py").write_text("def watched():\n    pass\n")
        assert wait_for(lambda: symbol_names(workspace, "pkg/util.py") == ["watched"])
        (repo / "pkg/fresh.py").write_text("def fresh():\n    pass\n")
        assert wait_for(lambda: symbol_names(workspace, "pkg/fresh.py") == ["fresh"])
        shutil.move(repo / "web", tmp_path / "web-moved")  # one event for a whole directory
        assert wait_for(
            lambda: not any(p.startswith("web/") for p in load_file_nodes(workspace.store, "demo"))
        )
        assert wait_for(lambda: projections(workspace) == rebuilt(workspace))
        assert workspace.reconciler is not None and workspace.reconciler.batches >= 1


def test_every_registration_holding_an_edited_path_follows_it(tmp_path, repo):
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent, reconcile="watch")
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, background=False)
        workspace.bootstrap(repo / "pkg", "inner", background=False)  # nested
        workspace.start_background()
        assert workspace.reconciler is not None
        assert workspace.reconciler.watching.wait(30)
        (repo / "pkg/util.py").write_text("def watched():\n    pass\n")
        for repo_id, path in (
            ("demo", "pkg/util.py"),
            ("inner", "util.py"),
        ):
            assert wait_for(
                lambda r=repo_id, p=path: (
                    [s.name for s in workspace.outline(r, p).symbols] == ["watched"]
                )
            ), repo_id


def test_the_poll_loop_runs_full_passes(tmp_path, repo):
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_root=repo.parent,
        reconcile="poll",
        reconcile_interval_seconds=1,
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, background=False)
        workspace.start_background()
        (repo / "pkg/util.py").write_text("def polled():\n    pass\n")
        assert wait_for(lambda: symbol_names(workspace, "pkg/util.py") == ["polled"])
        assert wait_for(lambda: workspace.index_status("demo").status == "completed")
        assert workspace.store.get(STRUCTURAL, repo_key("demo")).value["projectionsDirty"] is False


def symbol_names(workspace, path):
    return [s.name for s in workspace.outline("demo", path).symbols]


def test_warming_loads_a_consistent_index_without_writing(tmp_path, repo):
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent)
    with Workspace.open(settings, clock=FakeClock()) as first:
        first.bootstrap(repo, background=False)
    with Workspace.open(settings, clock=FakeClock()) as workspace:  # a fresh process: no state
        before = workspace.store.last_seq()
        assert workspace._index.warm("demo") is True
        assert workspace.store.last_seq() == before
        (repo / "pkg/util.py").write_text("def warmed():\n    pass\n")
        progress = workspace.refresh("demo", ["pkg/util.py"])
        # Incremental: only the records the edit affects, not every projection record.
        assert 0 < progress.projection_writes + progress.projection_deletes < 12
        assert projections(workspace) == rebuilt(workspace)


def test_changes_made_before_the_watcher_started_are_caught_up(tmp_path, repo):
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent, reconcile="watch")
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, background=False)
        (repo / "pkg/util.py").write_text("def before_watch():\n    pass\n")  # no event seen
        workspace.start_background()
        assert workspace.reconciler is not None and workspace.reconciler.watching.wait(30)
        assert symbol_names(workspace, "pkg/util.py") == ["before_watch"]


def test_a_run_outside_a_background_thread_reports_running_not_interrupted(workspace, repo):
    # Reconcile passes and foreground runs are not the job threads `start` makes; their
    # status must still read "running" while they run (it once read failed/interrupted).
    workspace.bootstrap(repo, background=False)
    (repo / "pkg/util.py").write_text("def changed():\n    pass\n")
    seen = []
    options = WalkOptions.from_wire(None)
    workspace._index.run(
        "demo", repo, options, lambda *_: seen.append(workspace.index_status("demo"))
    )
    assert seen and {(s.status, s.error) for s in seen} == {("running", None)}
    assert workspace.index_status("demo").status == "completed"


def test_a_refresh_skips_what_it_cannot_index_and_applies_the_rest(workspace, repo, tmp_path):
    workspace.bootstrap(repo, background=False)
    outside = tmp_path / "outside.py"
    outside.write_text("secret = 1\n")
    (repo / "host.py").symlink_to(outside)  # leaves the root: reported, not followed
    (repo / "inlink.py").symlink_to(repo / "pkg/util.py")  # inside: the link is a file
    (repo / "new\nline.py").write_text("x = 1\n")  # no store key can hold the name
    (repo / "b.py").write_text("def b():\n    pass\n")
    workspace.refresh("demo", ["host.py", "inlink.py", "new\nline.py", "b.py"])
    nodes = load_file_nodes(workspace.store, "demo")
    assert "b.py" in nodes and "inlink.py" in nodes
    assert "host.py" not in nodes and "pkg/util.py" in nodes
    assert symbol_names(workspace, "inlink.py") == symbol_names(workspace, "pkg/util.py")
    assert workspace.refresh("demo", ["new\nline.py"]).files_read == 0


def test_a_path_through_a_symlinked_directory_out_of_the_root_is_skipped(workspace, repo, tmp_path):
    workspace.bootstrap(repo, background=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.py").write_text("def x():\n    pass\n")
    (repo / "ext").symlink_to(outside)  # watchfiles reports events inside such links
    (repo / "b.py").write_text("def b():\n    pass\n")
    workspace.refresh("demo", ["ext/x.py", "b.py"])  # no failure: b.py applied
    nodes = load_file_nodes(workspace.store, "demo")
    assert "b.py" in nodes and not any(path.startswith("ext") for path in nodes)


def test_a_file_replaced_by_a_directory_of_its_name_is_refreshed_as_both(workspace, repo):
    workspace.bootstrap(repo, background=False)
    (repo / "pkg/app.py").unlink()
    (repo / "pkg/app.py").mkdir()
    (repo / "pkg/app.py/inner.py").write_text("def inner():\n    pass\n")
    report = workspace.changed("demo", "pkg/app.py")
    assert (report.added, report.removed) == (["pkg/app.py/inner.py"], ["pkg/app.py"])
    workspace.refresh("demo", ["pkg/app.py"])
    nodes = load_file_nodes(workspace.store, "demo")
    assert "pkg/app.py" not in nodes and "pkg/app.py/inner.py" in nodes
    shutil.rmtree(repo / "pkg/app.py")  # and back: a directory replaced by a file
    (repo / "pkg/app.py").write_text("def again():\n    pass\n")
    workspace.refresh("demo", ["pkg/app.py"])
    nodes = load_file_nodes(workspace.store, "demo")
    assert "pkg/app.py/inner.py" not in nodes and symbol_names(workspace, "pkg/app.py") == ["again"]
    assert projections(workspace) == rebuilt(workspace)


def test_the_watcher_restarts_after_a_name_it_cannot_report(tmp_path, repo):
    with watched(tmp_path, repo) as workspace:
        reconciler = workspace.reconciler
        assert reconciler is not None
        with open(bytes(repo) + b"/\xffbad.py", "wb") as handle:
            handle.write(b"x = 1\n")
        assert wait_for(lambda: reconciler.restarts >= 1)
        (repo / "pkg/util.py").write_text("def after_restart():\n    pass\n")
        assert wait_for(lambda: symbol_names(workspace, "pkg/util.py") == ["after_restart"])
        assert reconciler.mode == "watch"


def test_a_refresh_removes_a_deleted_file_without_git_too(workspace, repo):
    shutil.rmtree(repo / ".git")  # a plain walk: the scope's directory form does not exist
    workspace.bootstrap(repo, background=False)
    (repo / "pkg/app.py").unlink()
    assert workspace.refresh("demo", ["pkg/app.py"]).files_removed == 1
    assert "pkg/app.py" not in load_file_nodes(workspace.store, "demo")
    assert workspace.index_status("demo").issues == []


def test_a_registered_root_that_is_gone_does_not_stop_watching_the_others(
    tmp_path, repo, repo_factory
):
    other = repo_factory(tmp_path / "ws" / "other")
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent, reconcile="watch")
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, background=False)
        workspace.bootstrap(other, background=False)
        shutil.rmtree(other)  # (the watcher refuses every root when one is missing)
        workspace.start_background()
        reconciler = workspace.reconciler
        assert reconciler is not None and reconciler.watching.wait(30)
        (repo / "pkg/util.py").write_text("def still_watched():\n    pass\n")
        assert wait_for(lambda: symbol_names(workspace, "pkg/util.py") == ["still_watched"])
        repo_factory(other)  # the root is back: watched again, caught up
        (other / "pkg/util.py").write_text("def back():\n    pass\n")
        assert wait_for(
            lambda: [s.name for s in workspace.outline("other", "pkg/util.py").symbols] == ["back"]
        )
        assert reconciler.mode == "watch"


def test_a_batch_refused_while_another_process_indexes_is_applied_after(
    tmp_path, repo, run_lock_holder
):
    with watched(tmp_path, repo) as workspace:
        with run_lock_holder(tmp_path / "data", "demo"):  # as a CLI run holds it
            reconciler = workspace.reconciler
            assert reconciler is not None
            before = reconciler.batches
            (repo / "pkg/during.py").write_text("def during():\n    pass\n")
            # the batch arrives and is refused (index.running): kept for later
            assert wait_for(lambda: reconciler.batches > before)
            assert symbol_names(workspace, "pkg/during.py") == []
        assert wait_for(lambda: symbol_names(workspace, "pkg/during.py") == ["during"])


def test_a_root_deleted_and_made_again_at_once_is_watched_anew(tmp_path, repo, repo_factory):
    with watched(tmp_path, repo) as workspace:
        shutil.rmtree(repo)
        repo_factory(repo)  # a new directory under the same path, within one tick
        (repo / "pkg/util.py").write_text("def anew():\n    pass\n")
        assert wait_for(lambda: symbol_names(workspace, "pkg/util.py") == ["anew"])


def test_the_only_root_gone_and_back_is_watched_again_in_seconds(tmp_path, repo, repo_factory):
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_root=repo.parent,
        reconcile="watch",
        reconcile_interval_seconds=600,  # (not the periodic pass)
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, background=False)
        moved = tmp_path / "away"
        shutil.move(repo, moved)
        workspace.start_background()
        time.sleep(1.5)  # the loop finds no root to watch
        shutil.move(moved, repo)
        (repo / "pkg/util.py").write_text("def back_again():\n    pass\n")
        assert wait_for(lambda: symbol_names(workspace, "pkg/util.py") == ["back_again"])
