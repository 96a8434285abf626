import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repocontext.entries import recall
from repocontext.errors import InvalidInputError, NotFoundError, PathOutsideWorkspaceError
from repocontext.index.files.extract import PARALLEL_THRESHOLD
from repocontext.index.files.nodes import iter_file_nodes, load_file_nodes
from repocontext.index.files.walk import WalkOptions
from repocontext.index.projections.projection import ProjectionState
from repocontext.index.projections.projection_writer import ProjectionWriter
from repocontext.index.run.job import FLUSH_LOCAL_AT
from repocontext.search.request import SearchRequest
from repocontext.store import CONTENT, STRUCTURAL, SYMBOL, XREF
from repocontext.store.keys import content_key, file_key, repo_key, symbol_key, xref_key


def index(workspace, repo, **options):
    return workspace.bootstrap(repo, options=WalkOptions(**options), background=False)


def test_a_first_run_indexes_every_tracked_and_untracked_unignored_file(workspace, repo):
    status = index(workspace, repo)
    assert status.status == "completed"
    nodes = load_file_nodes(workspace.store, "demo")
    assert "ignored.log" not in nodes
    assert {"pkg/util.py", "pkg/app.py", "tests/test_util.py", "web/index.js"} <= set(nodes)
    util = nodes["pkg/util.py"]
    assert util["language"] == "python"
    assert util["matchesGitIndex"] is True
    assert util["tokenCount"] > 10
    assert [s["name"] for s in util["symbols"]] == ["DEFAULT", "parse", "Helper"]
    assert nodes["README.md"]["language"] is None
    assert (
        workspace.store.get(CONTENT, content_key("demo", "README.md")).value["text"] == "# demo\n"
    )
    assert status.counters["filesAdded"] == len(nodes)
    assert workspace.get_repo("demo").files == len(nodes)
    assert workspace.health("demo").repository.verdict == "keyword_only"


def test_links_carry_the_reason_they_were_made(workspace, repo):
    index(workspace, repo)
    related = workspace.related("demo", "pkg/util.py")
    assert {link.path for link in related.dependents} >= {"pkg/app.py"}
    tests = {link.path: link.reason for link in related.covering_tests}
    assert "tests/test_util.py" in tests
    assert "import" in tests["tests/test_util.py"]
    js = workspace.related("demo", "web/index.js")
    assert [link.path for link in js.imports] == ["web/lib/index.js"]
    symbol = workspace.store.get(SYMBOL, symbol_key("demo", "pkg.util.parse"))
    assert symbol.value["defs"][0]["path"] == "pkg/util.py"
    users = workspace.store.get(XREF, xref_key("demo", "name:parse")).value
    assert "pkg/app.py" in users["users"] and users["count"] >= 2
    entry = recall(workspace.store, symbol_key("demo", "pkg.util.parse"))
    assert "pkg/app.py" in entry.fields["users"]


def test_a_rerun_over_an_unchanged_tree_writes_nothing_but_status(workspace, repo):
    index(workspace, repo)
    before = workspace.store.last_seq()
    status = index(workspace, repo)
    changes = workspace.store.changes(after=before)
    assert {c.key for c in changes} == {"repo/demo"}
    assert status.counters["filesUnchanged"] == status.counters["filesSeen"]
    assert status.counters["filesRead"] == 0


def test_an_edit_a_new_file_and_a_deletion_are_applied_incrementally(workspace, repo):
    index(workspace, repo)
    (repo / "pkg/util.py").write_text(
        "def parse(text):\n    return [text]\n\n\ndef extra():\n    pass\n"
    )
    (repo / "pkg/new.py").write_text("from pkg.util import extra\n")
    (repo / "web/lib/index.js").unlink()
    status = index(workspace, repo)
    counters = status.counters
    assert (counters["filesUpdated"], counters["filesAdded"], counters["filesRemoved"]) == (1, 1, 1)
    nodes = load_file_nodes(workspace.store, "demo")
    assert "web/lib/index.js" not in nodes
    assert workspace.store.get(CONTENT, content_key("demo", "web/lib/index.js")) is None
    assert workspace.store.get(XREF, xref_key("demo", "in:web/lib/index.js")) is None
    assert workspace.related("demo", "web/index.js").imports == ()
    assert workspace.store.get(SYMBOL, symbol_key("demo", "pkg.util.Helper")) is None
    assert nodes["pkg/util.py"]["matchesGitIndex"] is False
    dependents = workspace.related("demo", "pkg/util.py").dependents
    assert "pkg/new.py" in {link.path for link in dependents}


def test_a_touched_file_with_the_same_bytes_is_not_reparsed(workspace, repo):
    index(workspace, repo)
    target = repo / "pkg/app.py"
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000))
    status = index(workspace, repo)
    assert status.counters["filesTouched"] == 1
    assert status.counters["filesUpdated"] == 0
    assert (
        load_file_nodes(workspace.store, "demo")["pkg/app.py"]["mtimeNs"]
        == stat.st_mtime_ns + 10_000_000
    )


def test_binary_oversized_undecodable_and_symlinked_files_are_handled(workspace, repo):
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    (repo / "big.py").write_text("x = 1\n" * 50)
    (repo / "latin1.py").write_bytes("name = 'caf\xe9'\n".encode("latin-1"))
    (repo / "outside").symlink_to("/etc/hostname")
    status = index(workspace, repo, max_file_bytes=200)
    nodes = load_file_nodes(workspace.store, "demo")
    assert "blob.bin" not in nodes
    assert nodes["big.py"]["oversized"] is True
    assert nodes["big.py"]["hasContent"] is False
    assert nodes["latin1.py"]["undecodable"] is True
    assert "outside" not in nodes
    reasons = {i["path"]: i["reason"] for i in status.issues}
    assert reasons["outside"] == "symlink_outside"
    assert "blob.bin" not in workspace.changed("demo").added  # excluded is no change
    (repo / "late.bin").write_bytes(b"\x00" * 10)
    (repo / "late.txt").write_text("new\n")
    assert workspace.changed("demo").added == ["late.txt"]
    kept = index(workspace, repo, max_file_bytes=200, exclude_binary=False)
    assert load_file_nodes(workspace.store, "demo")["blob.bin"]["binary"] is True
    assert kept.status == "completed"


def test_a_rerun_tells_skipped_binaries_apart_and_still_indexes_new_text(workspace, repo):
    # More binaries than PARALLEL_THRESHOLD: a rerun probes them itself (8 KiB each) and,
    # with nothing else to read, neither parses nor writes anything but its status.
    for i in range(PARALLEL_THRESHOLD + 20):
        (repo / "assets" / f"img{i}.bin").parent.mkdir(exist_ok=True)
        (repo / "assets" / f"img{i}.bin").write_bytes(b"PNG\x00" + bytes([i]) * 50)
    first = index(workspace, repo)
    assert first.counters["filesSkipped"] == PARALLEL_THRESHOLD + 20
    before = workspace.store.last_seq()
    again = index(workspace, repo)
    assert {c.key for c in workspace.store.changes(after=before)} == {"repo/demo"}
    assert again.counters["filesSkipped"] == again.counters["filesRead"] == PARALLEL_THRESHOLD + 20
    (repo / "assets" / "notes.py").write_text("def noted():\n    return 1\n")
    (repo / "assets" / "img0.bin").write_text("now text\n")  # a binary turned text
    third = index(workspace, repo)
    nodes = load_file_nodes(workspace.store, "demo")
    assert {"assets/notes.py", "assets/img0.bin"} <= set(nodes)
    assert "assets/img1.bin" not in nodes
    assert third.counters["filesAdded"] == 2


def test_include_and_exclude_globs_filter_the_index(workspace, repo):
    index(workspace, repo, include_globs=("pkg/**",), exclude_globs=("pkg/app.py",))
    assert set(load_file_nodes(workspace.store, "demo")) == {"pkg/__init__.py", "pkg/util.py"}


def test_a_tree_without_git_honours_gitignore_files(tmp_path, workspace):
    plain = tmp_path / "ws" / "plain"
    (plain / "sub").mkdir(parents=True)
    (plain / ".gitignore").write_text("*.tmp\n")
    (plain / "sub" / ".gitignore").write_text("secret.py\n")
    (plain / "sub" / "secret.py").write_text("x = 1\n")
    (plain / "sub" / "open.py").write_text("y = 2\n")
    (plain / "junk.tmp").write_text("z")
    workspace.bootstrap(plain, background=False)
    assert set(load_file_nodes(workspace.store, "plain")) == {
        ".gitignore",
        "sub/.gitignore",
        "sub/open.py",
    }


def test_background_bootstrap_returns_at_once_and_completes(workspace, repo):
    first = workspace.bootstrap(repo)
    assert first.status in ("running", "completed")
    done = workspace.wait_indexed("demo", timeout=120)
    assert done.status == "completed"
    assert done.attempt == 1
    assert workspace.outline("demo", "pkg/util.py").exists


def test_a_bootstrap_joining_a_run_with_other_filters_runs_again_with_them(
    workspace, repo, monkeypatch
):
    monkeypatch.setattr("repocontext.index.service.START_WAIT_S", 0.05)
    workspace.bootstrap(repo, background=False)
    with workspace._index.exclusive("demo"):  # the next run waits for the lock: still going
        workspace.bootstrap(repo)
        workspace.bootstrap(repo, options=WalkOptions(exclude_globs=("web/",)))
    workspace.wait_indexed("demo", timeout=120)
    deadline = time.monotonic() + 60
    while workspace.outline("demo", "web/index.js").exists:
        assert time.monotonic() < deadline, "the follow-up run never dropped web/"
        time.sleep(0.05)
    workspace.wait_indexed("demo", timeout=120)
    assert workspace.index_status("demo").status == "completed"
    assert workspace.changed("demo").removed == []  # the stored filters ran


def test_file_records_live_under_the_key_grammar(workspace, repo):
    index(workspace, repo)
    assert workspace.store.get(STRUCTURAL, file_key("demo", "pkg/util.py")) is not None
    assert Path(workspace.get_repo("demo").root) == repo.resolve()


def test_a_path_no_key_can_hold_is_reported_not_fatal(workspace, repo):
    (repo / "odd\nname.py").write_text("x = 1\n")
    (repo / "templ.cpp").write_text(
        "template <typename T,\n          typename U>\nint Box<T,\n    U>::size() { return 1; }\n"
    )
    status = index(workspace, repo)
    assert status.status == "completed"
    assert {"path": "odd\nname.py", "reason": "invalid_path"} in status.issues
    symbols = workspace.outline("demo", "templ.cpp").symbols
    assert all("\n" not in s.fq_name for s in symbols)


def test_a_build_larger_than_one_flush_writes_the_same_projections(
    workspace, repo_factory, tmp_path
):
    # More qualified names than FLUSH_LOCAL_AT: symbol and package records are written in
    # groups while files are still parsed, and a later twin definition rewrites its record.
    per_file = 120
    files: dict[str, str | bytes] = {
        f"gen/p{i // 40}/m{i}.py": "".join(
            f"def f{j}(x):\n    return g{i}(x)\n" for j in range(per_file)
        )
        for i in range(FLUSH_LOCAL_AT // per_file + 30)
    }
    files["gen/p0/m0/__init__.py"] = "def f0(x):\n    return x\n"  # gen.p0.m0.f0 twice
    files["use.py"] = "from gen.p0 import m0\n\n\ndef caller():\n    return f0(1)\n"
    root = repo_factory(tmp_path / "ws" / "big", files)
    status = workspace.bootstrap(root, "big", background=False)
    assert status.status == "completed"
    stored = ProjectionWriter(workspace.store, "big")._have
    assert len(stored[SYMBOL]) > FLUSH_LOCAL_AT
    expected = ProjectionState.build("big", iter_file_nodes(workspace.store, "big"), None)
    assert stored == expected.records
    twin = workspace.store.get(SYMBOL, symbol_key("big", "gen.p0.m0.f0")).value
    assert [d["path"] for d in twin["defs"]] == ["gen/p0/m0.py", "gen/p0/m0/__init__.py"]
    # Rebuilt (the projections marked dirty), the stored nodes are staged and their symbol
    # records flushed before the one changed file is; it drops 119 definitions. It is
    # staged only as changed, so none of its old records is flushed and left behind.
    dropped = root / "gen" / "p0" / "m0.py"
    dropped.write_text("def f0(x):\n    return x\n")
    repo = dict(workspace.store.get(STRUCTURAL, repo_key("big")).value)
    workspace.store.put(STRUCTURAL, repo_key("big"), {**repo, "projectionsDirty": True})
    assert workspace.bootstrap(root, "big", background=False).counters["filesUpdated"] == 1
    stored = ProjectionWriter(workspace.store, "big")._have
    expected = ProjectionState.build("big", iter_file_nodes(workspace.store, "big"), None)
    assert stored == expected.records
    assert workspace.store.get(SYMBOL, symbol_key("big", "gen.p0.m0.f1")) is None


def test_a_run_completes_over_a_symlink_loop_and_a_name_that_is_not_utf8(workspace, repo):
    (repo / "loop").symlink_to("loop")
    with open(os.path.join(os.fsencode(repo), b"\xffbad.py"), "wb") as handle:
        handle.write(b"def f(): pass\n")
    status = workspace.bootstrap(repo, background=False)
    assert status.status == "completed"
    assert {"path": "loop", "reason": "symlink_loop"} in status.issues
    assert {"path": "\\xffbad.py", "reason": "undecodable_name"} in status.issues
    assert workspace.outline("demo", "pkg/util.py").exists


def test_files_lists_every_indexed_node_in_path_order_with_its_outline(workspace, repo):
    with pytest.raises(NotFoundError):
        workspace.files("demo")
    index(workspace, repo)
    files = workspace.files("demo")
    paths = [node.path for node in files]
    assert paths == sorted(load_file_nodes(workspace.store, "demo"))
    by_path = {node.path: node for node in files}
    assert [s.name for s in by_path["pkg/util.py"].symbols] == ["DEFAULT", "parse", "Helper"]
    assert by_path["tests/test_util.py"].is_test and not by_path["pkg/util.py"].is_test
    assert by_path["pkg/util.py"].blob_id == workspace.page("demo", "pkg/util.py").blob_id


def test_outline_and_related_accept_the_spellings_of_a_file_path(workspace, repo, tmp_path):
    index(workspace, repo)
    root = workspace.get_repo("demo").root
    plain = workspace.outline("demo", "pkg/util.py")
    (tmp_path / "link").symlink_to(repo)  # the root as an operator may have named it
    spellings = ("./pkg/util.py", "pkg//util.py", "pkg/sub/../util.py", f"{root}/pkg/util.py")
    for spelling in (*spellings, f"{tmp_path}/link/pkg/util.py"):
        assert workspace.outline("demo", spelling) == plain
        assert workspace.related("demo", spelling) == workspace.related("demo", "pkg/util.py")
    for outside in ("../x.py", "/etc/hostname", "pkg/../../x.py"):
        with pytest.raises(PathOutsideWorkspaceError):
            workspace.outline("demo", outside)
    for blank in ("", ".", "./"):
        with pytest.raises(InvalidInputError):
            workspace.related("demo", blank)


@pytest.mark.parametrize("repo_id", ["", "r" * 600])
def test_an_id_no_key_can_hold_is_simply_not_registered(workspace, repo_id):
    for call in (
        lambda: workspace.index_status(repo_id),
        lambda: workspace.outline(repo_id, "a.py"),
        lambda: workspace.changed(repo_id),
    ):
        with pytest.raises(NotFoundError):
            call()
    with pytest.raises(InvalidInputError):  # a search request checks the id itself
        SearchRequest.of(repo_id, "anything")


_ORPHAN_PARENT = """
import os, sys, time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from repocontext.index.files.extract import worker_started
if __name__ == "__main__":
    context = get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=worker_started)
    print(pool.submit(os.getpid).result(), flush=True)
    time.sleep(120)
"""


def test_a_parser_worker_dies_with_a_process_killed_mid_run(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(_ORPHAN_PARENT)
    parent = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert parent.stdout is not None
    worker = int(parent.stdout.readline())
    parent.kill()  # SIGKILL: no shutdown code runs in the parent
    parent.wait(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(worker, signal.SIGKILL)
    raise AssertionError("the parser worker outlived its killed parent")
