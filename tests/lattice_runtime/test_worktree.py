import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from lattice_runtime.compile.task import VerificationCommand
from lattice_runtime.errors import TransactionError, UnsafePathError
from lattice_runtime.verify import (
    OwnerRecord,
    Worktree,
    cleanup_stale,
    link_environment,
    reproduce_state,
    run_transaction,
    worktrees_dir,
)
from tests.lattice_runtime.verify_support import git, make_repo, patch_of, worktree_list


def dead_pid() -> int:
    child = subprocess.Popen((sys.executable, "-c", "pass"))
    child.wait()
    return child.pid


def test_a_worktree_is_a_detached_checkout_of_head_with_an_owner_record(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": b"x = 1\n"})
    with Worktree(repo) as worktree:
        assert worktree.path.parent == repo / ".lattice" / "worktrees"
        assert (worktree.path / "a.py").read_bytes() == b"x = 1\n"
        assert git(worktree.path, "rev-parse", "HEAD") == git(repo, "rev-parse", "HEAD")
        assert git(worktree.path, "branch", "--show-current") == ""
        record = json.loads((worktree.path.parent / f"{worktree.txid}.owner.json").read_text())
        assert record["pid"] == os.getpid()
        assert record["hostname"] == socket.gethostname()
        assert record["txid"] == worktree.txid
        assert record["started"].endswith("+00:00")
        assert str(worktree.path) in worktree_list(repo)
    assert worktree_list(repo) == [str(repo)]
    assert list(worktrees_dir(repo).iterdir()) == []


def test_a_worktree_is_removed_even_when_the_block_raises(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": b"x = 1\n"})
    with pytest.raises(RuntimeError), Worktree(repo) as worktree:
        raise RuntimeError("boom")
    assert not worktree.path.exists()
    assert worktree_list(repo) == [str(repo)]


def test_the_lattice_directory_is_excluded_so_the_user_status_stays_clean(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": b"x = 1\n"})
    with Worktree(repo):
        assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert "/.lattice/" in (repo / ".git" / "info" / "exclude").read_text().splitlines()


def test_a_symlinked_worktrees_directory_is_refused_before_anything_is_written(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": b"x = 1\n"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".lattice").mkdir()
    (repo / ".lattice" / "worktrees").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafePathError), Worktree(repo):
        pass
    assert list(elsewhere.iterdir()) == []
    assert worktree_list(repo) == [str(repo)]


def test_a_repository_without_a_commit_cannot_start_and_leaves_no_record(tmp_path):
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q")
    with pytest.raises(TransactionError), Worktree(repo):
        pass
    assert list(worktrees_dir(repo).iterdir()) == []


def test_cleanup_removes_the_worktree_of_a_dead_owner_and_keeps_a_live_one(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": b"x = 1\n"})
    dead = Worktree(repo, keep=True).__enter__()
    live = Worktree(repo, keep=True).__enter__()
    record_path = dead.path.parent / f"{dead.txid}.owner.json"
    record = OwnerRecord.read(record_path)
    assert record is not None
    stale = OwnerRecord(record.txid, dead_pid(), record.hostname, record.started)
    record_path.write_bytes(stale.to_json())

    assert cleanup_stale(repo) == (dead.txid,)

    assert not dead.path.exists()
    assert not record_path.exists()
    assert sorted(worktree_list(repo)) == sorted([str(repo), str(live.path)])
    live.__exit__(None, None, None)


def test_cleanup_removes_a_worktree_directory_without_a_readable_owner_record(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": b"x = 1\n"})
    orphan = Worktree(repo, keep=True).__enter__()
    (orphan.path.parent / f"{orphan.txid}.owner.json").write_text("{not json")
    unknown = worktrees_dir(repo) / "tx-unknown"
    unknown.mkdir()
    (unknown / "f.txt").write_text("left by something else")
    (worktrees_dir(repo) / "tx-file").write_text("not a worktree")

    assert cleanup_stale(repo) == tuple(sorted((orphan.txid, "tx-file", "tx-unknown")))

    assert list(worktrees_dir(repo).iterdir()) == []
    assert worktree_list(repo) == [str(repo)]


def test_cleanup_removes_the_record_of_a_dead_owner_that_made_no_worktree(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": b"x = 1\n"})
    directory = worktrees_dir(repo)
    directory.mkdir()
    record = OwnerRecord("tx-early", dead_pid(), socket.gethostname(), "2026-01-01T00:00:00+00:00")
    (directory / "tx-early.owner.json").write_bytes(record.to_json())
    assert cleanup_stale(repo) == ("tx-early",)
    assert list(directory.iterdir()) == []


def test_cleanup_never_reaches_through_an_environment_link_into_the_user_venv(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": b"x = 1\n"})
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "bin" / "python").write_text("#!/bin/sh\n")
    worktree = Worktree(repo, keep=True).__enter__()
    assert link_environment(repo, worktree.path) == (".venv",)
    (worktree.path.parent / f"{worktree.txid}.owner.json").unlink()

    assert cleanup_stale(repo) == (worktree.txid,)

    assert (repo / ".venv" / "bin" / "python").read_text() == "#!/bin/sh\n"
    assert not worktree.path.exists()


CRASHING_CHILD = """
import sys
from pathlib import Path
from lattice_runtime.verify import Worktree

with Worktree(Path(sys.argv[1])) as worktree:
    print(worktree.path, flush=True)
    sys.stdin.read()  # blocks until the parent kills us
"""


def test_a_transaction_killed_mid_way_leaves_no_worktree_after_the_next_start(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": b"x = 1\n"})
    child = subprocess.Popen(
        (sys.executable, "-c", CRASHING_CHILD, str(repo)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    path = Path(child.stdout.readline().strip())  # the gate: the worktree exists now
    assert path.is_dir()
    assert str(path) in worktree_list(repo)
    child.kill()
    child.wait()
    child.stdin.close()
    child.stdout.close()
    assert path.is_dir()  # the crash left it behind

    next_run = run_transaction(repo, patch_of(), [VerificationCommand((sys.executable, "-c", ""))])

    assert next_run.passed

    assert not path.exists()
    assert worktree_list(repo) == [str(repo)]
    assert list(worktrees_dir(repo).iterdir()) == []


def test_the_user_uncommitted_and_untracked_state_is_reproduced_in_the_worktree(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {"mod.py": b"old\n", "gone.py": b"bye\n", "pkg/keep.py": b"same\n", "bin.dat": b"\0\1"},
    )
    (repo / "mod.py").write_bytes(b"new\r\n")
    (repo / "gone.py").unlink()
    (repo / "staged.py").write_bytes(b"staged\n")
    git(repo, "add", "staged.py")
    (repo / "pkg" / "untracked.py").write_bytes(b"untracked\n")
    (repo / "bin.dat").write_bytes(b"\0\2\3")
    (repo / "tool.sh").write_bytes(b"#!/bin/sh\n")
    (repo / "tool.sh").chmod(0o755)
    (repo / "link").symlink_to("pkg/keep.py")
    (repo / "debug.log").write_bytes(b"ignored\n")

    with Worktree(repo) as worktree:
        copied = reproduce_state(repo, worktree.path)
        tree = worktree.path
        assert (tree / "mod.py").read_bytes() == b"new\r\n"
        assert not (tree / "gone.py").exists()
        assert (tree / "staged.py").read_bytes() == b"staged\n"
        assert (tree / "pkg" / "untracked.py").read_bytes() == b"untracked\n"
        assert (tree / "pkg" / "keep.py").read_bytes() == b"same\n"
        assert (tree / "bin.dat").read_bytes() == b"\0\2\3"
        assert os.access(tree / "tool.sh", os.X_OK)
        assert os.readlink(tree / "link") == "pkg/keep.py"
        assert not (tree / "debug.log").exists()
    assert set(copied) == {
        "mod.py", "gone.py", "staged.py", "pkg/untracked.py", "bin.dat", "tool.sh", "link"
    }  # fmt: skip


def test_environment_directories_are_linked_into_the_worktree_not_copied(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": b"x = 1\n"})
    for name in (".venv/bin", "node_modules/left-pad"):
        (repo / name).mkdir(parents=True)
        (repo / name / "marker").write_text(name)
    with Worktree(repo) as worktree:
        reproduce_state(repo, worktree.path)
        assert link_environment(repo, worktree.path) == (".venv", "node_modules")
        for name in (".venv", "node_modules"):
            link = worktree.path / name
            assert link.is_symlink()
            assert link.resolve() == (repo / name).resolve()
        assert (worktree.path / ".venv" / "bin" / "marker").read_text() == ".venv/bin"
    assert (repo / ".venv" / "bin" / "marker").read_text() == ".venv/bin"
    assert (repo / "node_modules" / "left-pad" / "marker").exists()


def test_a_file_replaced_by_a_directory_and_back_is_reproduced(tmp_path):
    repo = make_repo(tmp_path / "repo", {"was_file": b"f\n", "was_dir/x.py": b"x\n"})
    (repo / "was_file").unlink()
    (repo / "was_file").mkdir()
    (repo / "was_file" / "inner.py").write_bytes(b"inner\n")
    (repo / "was_dir" / "x.py").unlink()
    (repo / "was_dir").rmdir()
    (repo / "was_dir").write_bytes(b"now a file\n")
    with Worktree(repo) as worktree:
        reproduce_state(repo, worktree.path)
        assert (worktree.path / "was_file" / "inner.py").read_bytes() == b"inner\n"
        assert (worktree.path / "was_dir").read_bytes() == b"now a file\n"


def test_a_copy_never_goes_through_a_symlink_left_from_head(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = make_repo(tmp_path / "repo", {"real/a.py": b"a\n"})
    (repo / "lnk").symlink_to(outside, target_is_directory=True)
    git(repo, "add", "lnk")
    git(repo, "commit", "-q", "-m", "link")
    (repo / "lnk").unlink()
    (repo / "lnk").mkdir()
    (repo / "lnk" / "new.py").write_bytes(b"new\n")
    with Worktree(repo) as worktree:
        reproduce_state(repo, worktree.path)
        assert not (worktree.path / "lnk").is_symlink()
        assert (worktree.path / "lnk" / "new.py").read_bytes() == b"new\n"
    assert list(outside.iterdir()) == []


def test_a_transaction_id_already_in_use_is_refused_without_touching_it(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": b"x = 1\n"})
    with Worktree(repo, txid="tx-same") as first:
        with pytest.raises(TransactionError, match="already"), Worktree(repo, txid="tx-same"):
            pass
        assert (first.path / "a.py").exists()
        assert OwnerRecord.read(first.path.parent / "tx-same.owner.json") is not None
