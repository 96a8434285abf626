import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repocontext.errors import DangerousRootError, InvalidInputError, PathNotFoundError
from repocontext.index.files.roots import check_root
from repocontext.index.files.walk import WalkOptions, walk


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


def test_a_repository_git_refuses_is_walked_and_the_run_says_why(repo):
    assert not [i for i in walk(repo).issues if i.reason.startswith("git_refused")]
    if os.geteuid() != 0:
        return  # (only root can give the repository to another user; the check above ran)
    subprocess.run(["chown", "-R", "65534:65534", str(repo)], check=True)  # "nobody" owns it
    result = walk(repo)
    assert not result.git  # git refuses: dubious ownership
    (refusal,) = [i for i in result.issues if i.reason.startswith("git_refused")]
    assert refusal.path == "." and f"safe.directory {repo}" in refusal.reason
    assert "pkg/util.py" in paths(result)  # walked with the .gitignore files instead


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
    assert reasons["dangling"] == "dangling_symlink"
    assert "dirlink" not in paths(result) and reasons["dirlink"] == "not_a_file"


@pytest.mark.parametrize("git", [False, True])
def test_a_symlink_loop_is_an_issue_not_a_failure(tmp_path, git):
    root = tmp_path / "loops"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    (root / "self").symlink_to("self")
    (root / "one").symlink_to("two")
    (root / "two").symlink_to("one")
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    result = walk(root)
    assert paths(result) == ["a.py"]
    assert {i.path: i.reason for i in result.issues} == {
        "self": "symlink_loop",
        "one": "symlink_loop",
        "two": "symlink_loop",
    }
    with pytest.raises(PathNotFoundError) as caught:
        walk(root / "self")
    assert "symlink loop" in caught.value.hint


@pytest.mark.parametrize("git", [False, True])
def test_a_name_that_is_not_utf8_is_reported_and_skipped(tmp_path, git):
    root = tmp_path / "names"
    root.mkdir()
    (root / "ok.py").write_text("x = 1\n")
    with open(os.path.join(os.fsencode(root), b"\xffbad.py"), "wb") as handle:
        handle.write(b"def f(): pass\n")
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    result = walk(root)
    assert paths(result) == ["ok.py"]
    assert [(i.path, i.reason) for i in result.issues] == [("\\xffbad.py", "undecodable_name")]


def test_an_unlistable_directory_is_reported(tmp_path):
    root = tmp_path / "locked"
    (root / "sealed").mkdir(parents=True)
    (root / "sealed" / "x.py").write_text("x = 1\n")
    (root / "ok.py").write_text("x = 1\n")
    (root / "sealed").chmod(0)
    try:
        got = _walk_without_override(root)
    finally:
        (root / "sealed").chmod(0o755)
    assert got == {"paths": ["ok.py"], "issues": [["sealed", "unreadable: Permission denied"]]}


def _walk_without_override(root):
    """Walk ``root`` in a process that permissions apply to (root's override dropped)."""
    script = (
        "import json, sys; from repocontext.index.files.walk import walk; r = walk(sys.argv[1]);"
        "print(json.dumps({'paths': [e.path for e in r.entries],"
        " 'issues': [[i.path, i.reason] for i in r.issues]}))"
    )
    command = [sys.executable, "-c", script, str(root)]
    if os.geteuid() == 0:  # root reads anything: drop the capabilities that let it
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    return json.loads(subprocess.run(command, capture_output=True, check=True, text=True).stdout)


def test_a_subdirectory_of_a_git_work_tree_gets_gits_view(tmp_path):
    top = tmp_path / "top"
    (top / "app" / "node_modules" / "lib").mkdir(parents=True)
    (top / "app" / "src").mkdir()
    (top / ".gitignore").write_text("node_modules/\n*.gen.ts\nvendor/\n")
    (top / "app" / "src" / "a.ts").write_text("export const x = 1\n")
    (top / "app" / "src" / "b.gen.ts").write_text("export const y = 1\n")
    (top / "app" / "node_modules" / "lib" / "index.js").write_text("module.exports = 1\n")
    (top / "vendor" / "pkg").mkdir(parents=True)
    (top / "vendor" / "pkg" / "v.py").write_text("v = 1\n")
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    result = walk(top / "app")
    assert result.git and paths(result) == ["src/a.ts"]
    # A root the repository ignores is walked (git lists nothing under it).
    ignored = walk(top / "vendor" / "pkg")
    assert not ignored.git and paths(ignored) == ["v.py"]


def test_a_tracked_file_deleted_from_the_work_tree_is_no_issue(tmp_path):
    root = tmp_path / "tracked"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    (root / "b.py").write_text("y = 1\n")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    (root / "b.py").unlink()
    result = walk(root)
    assert paths(result) == ["a.py"] and result.issues == []


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


@pytest.mark.parametrize("glob", ["[", "src/[a-", "!", "\\", "", "  ", "# a comment"])
def test_a_glob_that_can_never_match_is_refused(workspace, repo, glob):
    with pytest.raises(InvalidInputError) as caught:
        workspace.bootstrap(repo, options=WalkOptions(include_globs=(glob,)), background=False)
    assert "gitignore-style" in caught.value.hint
    assert workspace.get_repo("demo") is None  # refused before anything was written


def test_usable_globs_pass_the_check():
    options = WalkOptions(include_globs=("src/**", "*.py", "\\[x].py"), exclude_globs=("!keep",))
    assert options.check() is options


def test_a_root_whose_path_is_not_utf8_is_refused_with_a_clear_error(tmp_path):
    root = os.fsdecode(bytes(tmp_path) + b"/r\xff")
    os.mkdir(root)
    with pytest.raises(InvalidInputError, match="not valid UTF-8") as caught:
        check_root(Path(root))
    assert caught.value.code == "input.invalid" and "Rename" in caught.value.hint
