import os
from pathlib import Path

import pytest

from repocontext.errors import DangerousRootError, PathNotFoundError
from repocontext.index.walk import WalkOptions, check_root, walk


def paths(result):
    return [e.path for e in result.entries]


def test_a_git_work_tree_lists_tracked_and_untracked_unignored_files(repo):
    (repo / "new.py").write_text("x = 1\n")
    (repo / "debug.log").write_text("noise\n")
    result = walk(repo)
    assert result.git
    assert "new.py" in paths(result) and "pkg/util.py" in paths(result)
    assert "debug.log" not in paths(result) and "ignored.log" not in paths(result)
    assert not any(p.startswith(".git/") for p in paths(result))
    unfiltered = walk(repo, WalkOptions(respect_gitignore=False))
    assert "debug.log" in paths(unfiltered)


def test_nested_gitignore_files_apply_below_their_directory_without_git(tmp_path):
    root = tmp_path / "plain"
    (root / "a" / "b").mkdir(parents=True)
    (root / ".gitignore").write_text("build/\n*.tmp\n")
    (root / "a" / ".gitignore").write_text("secret.txt\n!keep.tmp\n")
    for rel in (
        "a/secret.txt",
        "a/b/secret.txt",
        "secret.txt",
        "a/keep.tmp",
        "x.tmp",
        "build/out.js",
        "a/b/ok.py",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("1")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("not a repo")
    got = paths(walk(root))
    assert "secret.txt" in got and "a/b/ok.py" in got and "a/keep.tmp" in got
    assert "a/secret.txt" not in got and "a/b/secret.txt" not in got
    assert "x.tmp" not in got and "build/out.js" not in got
    assert not any(p.startswith(".git") and p != ".gitignore" for p in got)


def test_symlinks_are_followed_only_to_files_inside_the_root(tmp_path):
    root = tmp_path / "links"
    (root / "dir").mkdir(parents=True)
    (root / "real.py").write_text("x = 1\n")
    (root / "inside.py").symlink_to(root / "real.py")
    (root / "outside").symlink_to("/etc/hostname")
    (root / "dangling").symlink_to(root / "missing")
    (root / "dirlink").symlink_to(root / "dir")
    result = walk(root)
    reasons = {i.path: i.reason for i in result.issues}
    assert "inside.py" in paths(result)
    assert reasons["outside"] == "symlink_outside"
    assert reasons["dangling"] == "vanished"
    assert "dirlink" not in paths(result)


def test_globs_and_the_size_cap_shape_the_entries(repo):
    big = repo / "pkg" / "big.py"
    big.write_text("x = 1\n" * 100)
    result = walk(
        repo,
        WalkOptions(include_globs=("pkg/",), exclude_globs=("__init__.py",), max_file_bytes=100),
    )
    assert paths(result) == ["pkg/app.py", "pkg/big.py", "pkg/util.py"]
    entry = {e.path: e for e in result.entries}["pkg/big.py"]
    assert entry.oversized and entry.size == 600 and entry.mtime_ns > 0 and entry.inode > 0


def test_dangerous_or_missing_roots_are_refused(tmp_path):
    with pytest.raises(DangerousRootError):
        check_root(Path("/"))
    with pytest.raises(DangerousRootError):
        check_root(Path.home())
    with pytest.raises(PathNotFoundError):
        walk(tmp_path / "nope")
    file_root = tmp_path / "f"
    file_root.write_text("x")
    with pytest.raises(PathNotFoundError):
        check_root(file_root)


def test_an_unreadable_directory_entry_is_reported_not_fatal(tmp_path):
    root = tmp_path / "fifo"
    root.mkdir()
    (root / "ok.py").write_text("x\n")
    os.mkfifo(root / "pipe")
    result = walk(root)
    assert paths(result) == ["ok.py"]
    assert {i.path: i.reason for i in result.issues} == {"pipe": "not_a_file"}
