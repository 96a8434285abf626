import subprocess
from pathlib import Path

import pytest

from repocontext.testing import FakeClock, make_repo


def test_the_fake_clock_moves_only_when_told():
    clock = FakeClock(100.0)
    assert clock.now() == 100.0
    assert clock.advance(5) == 105.0
    clock.set(50.0)
    assert clock.now() == 50.0
    with pytest.raises(ValueError):
        clock.advance(-1)


def git_out(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout


def test_make_repo_writes_text_and_bytes_in_a_git_work_tree_left_untracked(tmp_path: Path):
    root = make_repo(tmp_path / "a" / "repo", {"pkg/mod.py": "x = 1\n", "data.bin": b"\x00\xff"})
    assert root == tmp_path / "a" / "repo"
    assert (root / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert (root / "data.bin").read_bytes() == b"\x00\xff"
    assert git_out(root, "rev-parse", "--show-toplevel").strip() == str(root.resolve())
    assert git_out(root, "ls-files", "-co", "--exclude-standard").split() == [
        "data.bin",
        "pkg/mod.py",
    ]
    assert git_out(root, "ls-files").split() == []


def test_make_repo_commits_every_file_on_main_when_asked(tmp_path: Path):
    root = make_repo(tmp_path / "repo", {"a.py": "a = 1\n", ".gitignore": "*.log\n"}, commit=True)
    assert git_out(root, "branch", "--show-current").strip() == "main"
    assert git_out(root, "ls-files").split() == [".gitignore", "a.py"]
    assert git_out(root, "status", "--porcelain") == ""


def test_make_repo_adds_to_an_existing_directory(tmp_path: Path):
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "kept.txt").write_text("kept\n")
    root = make_repo(tmp_path / "repo", {"new.txt": "new\n"})
    assert sorted(p.name for p in root.iterdir() if p.name != ".git") == ["kept.txt", "new.txt"]
