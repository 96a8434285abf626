import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from lattice_runtime.errors import StaleFileError
from lattice_runtime.grants import (
    blob_id,
    fingerprint,
    index_snapshot,
    probe_fingerprint,
    read_fingerprinted,
)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def make_repo(tmp_path: Path, files: dict[str, bytes], *, autocrlf: str = "false") -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.name", "t")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "core.autocrlf", autocrlf)
    for path, data in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(data)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo


def test_an_unmodified_tracked_file_fingerprints_as_its_index_blob(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"src/a.py": b"x = 1\n"})
    found = fingerprint(repo, "src/a.py")
    assert found.value == git(repo, "rev-parse", ":src/a.py")
    assert (found.kind, found.tracked) == ("blob", True)
    assert str(found) == found.value


def test_blob_id_matches_git_hash_object(tmp_path: Path) -> None:
    data = b"line one\r\nline two\n\x00\xff"
    (tmp_path / "f").write_bytes(data)
    assert blob_id(data) == git(tmp_path, "hash-object", "--no-filters", str(tmp_path / "f"))


def test_a_crlf_checkout_of_an_lf_blob_fingerprints_as_the_blob_under_autocrlf_true(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path, {"win.py": b"a = 1\r\nb = 2\r\n"}, autocrlf="true")
    indexed = git(repo, "rev-parse", ":win.py")
    assert indexed == blob_id(b"a = 1\nb = 2\n")  # git stored LF
    assert (repo / "win.py").read_bytes() == b"a = 1\r\nb = 2\r\n"
    assert fingerprint(repo, "win.py").value == indexed


def test_the_probe_ignores_the_current_autocrlf_setting(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"win.py": b"a = 1\r\nb = 2\r\n"}, autocrlf="input")
    git(repo, "config", "core.autocrlf", "false")  # changed after checkout
    assert fingerprint(repo, "win.py").value == git(repo, "rev-parse", ":win.py")


def test_a_crlf_blob_committed_without_conversion_fingerprints_as_its_raw_bytes(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path, {"win.py": b"a = 1\r\n"}, autocrlf="false")
    indexed = git(repo, "rev-parse", ":win.py")
    assert indexed == blob_id(b"a = 1\r\n")
    assert fingerprint(repo, "win.py").value == indexed


def test_an_edited_file_fingerprints_as_the_blob_of_its_raw_working_bytes(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path, {"win.py": b"a = 1\r\n"}, autocrlf="true")
    (repo / "win.py").write_bytes(b"a = 2\r\n")
    found = fingerprint(repo, "win.py")
    assert found.value == blob_id(b"a = 2\r\n")
    assert found.value != git(repo, "rev-parse", ":win.py")
    assert (found.kind, found.tracked) == ("blob", True)


def test_an_untracked_file_fingerprints_as_the_sha256_of_its_bytes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"a.py": b"x\n"})
    (repo / "new.py").write_bytes(b"fresh\n")
    found = fingerprint(repo, "new.py")
    assert found.value == "sha256:" + hashlib.sha256(b"fresh\n").hexdigest()
    assert (found.kind, found.tracked) == ("sha256", False)


def test_a_symlink_fingerprints_as_the_sha256_of_its_target_string(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"a.py": b"x\n"})
    os.symlink("a.py", repo / "link.py")
    git(repo, "add", "link.py")
    git(repo, "commit", "-qm", "link")
    found, data = read_fingerprinted(repo, "link.py") or pytest.fail("no fingerprint")
    assert found.value == "sha256:" + hashlib.sha256(b"a.py").hexdigest()
    assert (found.kind, found.tracked, data) == ("sha256", True, b"a.py")


def test_a_missing_file_has_no_fingerprint_and_fingerprint_raises_stale(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path, {"a.py": b"x\n"})
    (repo / "a.py").unlink()
    assert probe_fingerprint(repo, "a.py") is None
    assert probe_fingerprint(repo, "a.py/deeper") is None
    with pytest.raises(StaleFileError) as caught:
        fingerprint(repo, "a.py")
    assert caught.value.path == "a.py"


def test_a_directory_has_no_fingerprint(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"pkg/a.py": b"x\n"})
    assert probe_fingerprint(repo, "pkg") is None


def test_one_index_snapshot_serves_a_batch_of_paths(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"a.py": b"1\n", "b.py": b"2\n", "c.py": b"3\n"})
    index = index_snapshot(repo, ["a.py", "b.py"])
    assert sorted(index.entries) == ["a.py", "b.py"]
    assert fingerprint(repo, "b.py", index=index).value == git(repo, "rev-parse", ":b.py")


def test_paths_with_glob_characters_are_read_literally(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"a*.py": b"1\n", "ab.py": b"2\n"})
    assert sorted(index_snapshot(repo, ["a*.py"]).entries) == ["a*.py"]


def test_a_directory_outside_git_has_an_empty_index(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"x\n")
    assert index_snapshot(tmp_path).entries == {}
    assert fingerprint(tmp_path, "a.py").kind == "sha256"


def test_a_conflicted_path_is_tracked_and_fingerprints_as_its_raw_bytes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"a.py": b"base\n"})
    git(repo, "checkout", "-qb", "other")
    (repo / "a.py").write_bytes(b"other\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "-")
    (repo / "a.py").write_bytes(b"mine\n")
    git(repo, "commit", "-qam", "mine")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "other"], capture_output=True)
    found = fingerprint(repo, "a.py")
    assert (found.kind, found.tracked) == ("blob", True)
    assert found.value == blob_id((repo / "a.py").read_bytes())


def test_a_sha256_repository_fingerprints_with_sha256_blob_ids(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "--object-format=sha256")
    git(repo, "config", "core.autocrlf", "false")
    (repo / "a.py").write_bytes(b"x = 1\n")
    git(repo, "add", "a.py")
    found = fingerprint(repo, "a.py")
    assert found.value == git(repo, "rev-parse", ":a.py") == blob_id(b"x = 1\n", sha256=True)
    assert len(found.value) == 64
