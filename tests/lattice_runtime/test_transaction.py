import hashlib
import sys

import pytest

from lattice_runtime.compile.task import VerificationCommand
from lattice_runtime.errors import StaleFileError, TransactionError, UnsafePathError
from lattice_runtime.patch.ir import FileChange
from lattice_runtime.verify import (
    EXIT_TIMEOUT,
    apply_patch,
    current_fingerprint,
    diff_paths,
    run_transaction,
    worktrees_dir,
)
from tests.lattice_runtime.verify_support import git, make_repo, patch_of, snapshot, worktree_list

SOURCE = b"def add(a, b):\n    return a - b\n"
FIXED = b"def add(a, b):\n    return a + b\n"
TEST = b"from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def pytest_command(*args: str) -> VerificationCommand:
    argv = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args)
    return VerificationCommand(argv)


def python(code: str) -> VerificationCommand:
    return VerificationCommand((sys.executable, "-c", code))


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", {"calc.py": SOURCE, "test_calc.py": TEST})


def modify(repo, path: str, content: bytes) -> FileChange:
    return FileChange(path, "modify", current_fingerprint(repo, path), content)


def test_a_patch_that_fixes_the_tests_passes_and_yields_its_diff(repo):
    before = snapshot(repo)
    result = run_transaction(repo, patch_of(modify(repo, "calc.py", FIXED)), [pytest_command()])
    assert result.passed
    assert [r.exit_code for r in result.results] == [0]
    assert "1 passed" in result.results[0].output_tail
    assert "-    return a - b\n+    return a + b\n" in result.diff
    assert not result.worktree_kept
    assert snapshot(repo) == before  # verification never touches the user's files
    assert worktree_list(repo) == [str(repo)]


def test_a_patch_whose_tests_fail_does_not_pass_and_keeps_the_failure(repo):
    wrong = b"def add(a, b):\n    return a * b\n"
    result = run_transaction(repo, patch_of(modify(repo, "calc.py", wrong)), [pytest_command()])
    assert not result.passed
    assert result.results[0].exit_code == 1
    assert "assert 6 == 5" in result.results[0].output_tail


def test_a_transaction_passes_only_when_every_command_exits_zero(repo):
    patch = patch_of(modify(repo, "calc.py", FIXED))
    ok, bad = python("pass"), python("raise SystemExit(2)")
    result = run_transaction(repo, patch, [ok, bad, ok])
    assert [r.exit_code for r in result.results] == [0, 2, 0]
    assert not result.passed


def test_a_transaction_without_commands_does_not_pass(repo):
    result = run_transaction(repo, patch_of(modify(repo, "calc.py", FIXED)), [])
    assert not result.passed
    assert result.results == ()


def test_a_hanging_command_ends_with_exit_124_and_fails_the_transaction(repo):
    hang = python("import os; r, w = os.pipe(); os.read(r, 1)")
    patch = patch_of(modify(repo, "calc.py", FIXED))
    result = run_transaction(repo, patch, [hang], timeout_seconds=0.5)
    assert result.results[0].exit_code == EXIT_TIMEOUT
    assert result.results[0].timed_out
    assert not result.passed
    assert worktree_list(repo) == [str(repo)]


def test_the_commands_see_the_user_uncommitted_and_untracked_state_with_the_patch(repo):
    (repo / "test_calc.py").write_bytes(TEST + b"\n\ndef test_more():\n    assert add(0, 0) == 0\n")
    (repo / "test_extra.py").write_bytes(
        b"from calc import add\n\n\ndef test_x():\n    add(1, 1)\n"
    )
    result = run_transaction(repo, patch_of(modify(repo, "calc.py", FIXED)), [pytest_command()])
    assert result.passed
    assert "3 passed" in result.results[0].output_tail
    assert "test_calc.py" not in result.diff  # the diff is the patch alone, not the user's work


def test_the_repository_venv_is_linked_for_the_commands_not_copied(repo):
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "marker").write_text("env")
    probe = python(
        "import os, pathlib; p = pathlib.Path('.venv'); "
        "assert p.is_symlink() and (p / 'marker').read_text() == 'env'; "
        "assert os.environ['PATH'].split(os.pathsep)[0].endswith('.venv/bin')"
    )
    result = run_transaction(repo, patch_of(modify(repo, "calc.py", FIXED)), [probe])
    assert result.passed, result.results[0].output_tail
    assert ".venv" not in result.diff
    assert (repo / ".venv" / "marker").read_text() == "env"


def test_a_file_changed_since_its_grant_is_stale_and_nothing_is_written(repo):
    patch = patch_of(modify(repo, "calc.py", FIXED))
    (repo / "calc.py").write_bytes(SOURCE + b"# the user's edit\n")
    before = snapshot(repo)
    with pytest.raises(StaleFileError) as caught:
        run_transaction(repo, patch, [python("pass")])
    assert caught.value.path == "calc.py"
    assert snapshot(repo) == before
    assert not (repo / ".lattice").exists()
    assert worktree_list(repo) == [str(repo)]


def test_a_create_whose_target_now_exists_is_stale(repo):
    (repo / "new.py").write_bytes(b"mine\n")
    before = snapshot(repo)
    with pytest.raises(StaleFileError):
        run_transaction(repo, patch_of(FileChange("new.py", "create", None, b"x\n")), [])
    assert snapshot(repo) == before


def test_a_patch_path_through_the_linked_environment_is_refused(repo):
    (repo / ".venv").mkdir()
    (repo / "docs").symlink_to(repo / ".venv", target_is_directory=True)
    for path in ("docs/evil.py", ".venv/evil.py", "../outside.py", ".git/config"):
        with pytest.raises(UnsafePathError):
            run_transaction(repo, patch_of(FileChange(path, "create", None, b"x\n")), [])
    assert list((repo / ".venv").iterdir()) == []
    assert worktree_list(repo) == [str(repo)]


def test_apply_writes_exactly_the_patch_into_the_user_tree(repo):
    (repo / "data.bin").write_bytes(b"\0\1\2")
    git(repo, "add", "data.bin")
    git(repo, "commit", "-q", "-m", "binary")
    (repo / "notes.txt").write_bytes(b"user's untracked work\n")
    patch = patch_of(
        modify(repo, "calc.py", FIXED),
        modify(repo, "data.bin", b"\0\3\4\5"),
        FileChange("pkg/new.py", "create", None, b"NEW = 1\r\n"),
        FileChange("test_calc.py", "delete", current_fingerprint(repo, "test_calc.py"), None),
    )
    result = run_transaction(repo, patch, [python("pass")])
    before = snapshot(repo)

    apply_patch(repo, patch, result.diff)

    after = snapshot(repo)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert changed == {"calc.py", "data.bin", "pkg/new.py", "test_calc.py"}
    assert (repo / "calc.py").read_bytes() == FIXED
    assert (repo / "data.bin").read_bytes() == b"\0\3\4\5"
    assert (repo / "pkg" / "new.py").read_bytes() == b"NEW = 1\r\n"
    assert not (repo / "test_calc.py").exists()
    assert git(repo, "diff", "--cached", "--name-only") == ""  # the index is the user's


def test_apply_fits_a_file_the_user_had_already_changed(repo):
    (repo / "calc.py").write_bytes(b"# header\n" + SOURCE)
    patched = b"# header\n" + FIXED
    patch = patch_of(modify(repo, "calc.py", patched))
    result = run_transaction(repo, patch, [python("pass")])
    apply_patch(repo, patch, result.diff)
    assert (repo / "calc.py").read_bytes() == patched


def test_apply_refuses_a_file_changed_after_verification_and_writes_nothing(repo):
    patch = patch_of(modify(repo, "calc.py", FIXED))
    result = run_transaction(repo, patch, [python("pass")])
    (repo / "calc.py").write_bytes(SOURCE + b"# late edit\n")
    before = snapshot(repo)
    with pytest.raises(StaleFileError):
        apply_patch(repo, patch, result.diff)
    assert snapshot(repo) == before


def test_apply_refuses_a_diff_that_touches_other_paths_than_the_patch(repo):
    patch = patch_of(modify(repo, "calc.py", FIXED))
    other = patch_of(modify(repo, "test_calc.py", b"# gutted\n"))
    other_diff = run_transaction(repo, other, [python("pass")]).diff
    before = snapshot(repo)
    with pytest.raises(TransactionError, match="touches"):
        apply_patch(repo, patch, other_diff)
    assert snapshot(repo) == before


def test_the_diff_names_exactly_the_patch_paths(repo):
    patch = patch_of(
        modify(repo, "calc.py", FIXED), FileChange("b c/new file.txt", "create", None, b"x\n")
    )
    diff = run_transaction(repo, patch, [python("pass")]).diff
    assert diff_paths(repo, diff.encode()) == ("b c/new file.txt", "calc.py")


def test_the_next_transaction_start_removes_a_crashed_worktree(repo):
    leftover = worktrees_dir(repo) / "tx-crashed"
    leftover.mkdir(parents=True)  # a directory with no owner record: its owner is gone
    run_transaction(repo, patch_of(modify(repo, "calc.py", FIXED)), [python("pass")])
    assert not leftover.exists()
    assert list(worktrees_dir(repo).iterdir()) == []


def test_a_crlf_checkout_under_autocrlf_verifies_and_applies_with_its_line_endings(tmp_path):
    repo = make_repo(tmp_path / "repo", {"f.txt": b"a\nb\nc\n"})
    git(repo, "config", "core.autocrlf", "true")
    (repo / "f.txt").write_bytes(b"a\r\nb\r\nc\r\n")  # what a checkout under autocrlf has
    patch = patch_of(modify(repo, "f.txt", b"a\r\nB\r\nc\r\n"))
    result = run_transaction(repo, patch, [python("pass")])
    apply_patch(repo, patch, result.diff)
    assert (repo / "f.txt").read_bytes() == b"a\r\nB\r\nc\r\n"


def test_fingerprints_are_blob_ids_for_tracked_files_and_sha256_otherwise(repo):
    assert current_fingerprint(repo, "calc.py") == git(repo, "hash-object", "calc.py").strip()
    (repo / "calc.py").write_bytes(SOURCE.replace(b"\n", b"\r\n"))  # autocrlf-style checkout
    assert current_fingerprint(repo, "calc.py") == git(repo, "rev-parse", ":calc.py").strip()
    (repo / "calc.py").write_bytes(FIXED)
    assert current_fingerprint(repo, "calc.py") == git(repo, "hash-object", "calc.py").strip()
    (repo / "new.txt").write_bytes(b"untracked\n")
    assert current_fingerprint(repo, "new.txt") == (
        "sha256:" + hashlib.sha256(b"untracked\n").hexdigest()
    )
    (repo / "link").symlink_to("calc.py")
    assert current_fingerprint(repo, "link") == "sha256:" + hashlib.sha256(b"calc.py").hexdigest()
    assert current_fingerprint(repo, "missing.py") is None


def test_a_subdirectory_of_a_repository_is_refused_as_the_root(repo):
    (repo / "sub").mkdir()
    patch = patch_of(modify(repo, "calc.py", FIXED))
    with pytest.raises(TransactionError, match="top-level"):
        run_transaction(repo / "sub", patch, [python("pass")])
    with pytest.raises(TransactionError, match="top-level"):
        apply_patch(repo / "sub", patch, "")
    assert not (repo / "sub" / ".lattice").exists()


def test_a_diff_that_no_longer_fits_the_tree_is_refused_by_the_check_and_nothing_is_written(
    repo,
):
    (repo / "calc.py").write_bytes(b"# header\n" + SOURCE)
    old_diff = run_transaction(repo, patch_of(modify(repo, "calc.py", FIXED)), []).diff
    (repo / "calc.py").write_bytes(b"# other\n" + SOURCE)
    patch = patch_of(modify(repo, "calc.py", FIXED))  # fresh fingerprint, stale diff
    before = snapshot(repo)
    with pytest.raises(TransactionError, match="git apply --check"):
        apply_patch(repo, patch, old_diff)
    assert snapshot(repo) == before


def test_an_empty_patch_has_an_empty_diff_and_applies_as_nothing(repo):
    result = run_transaction(repo, patch_of(), [python("pass")])
    assert result.passed
    assert result.diff == ""
    before = snapshot(repo)
    apply_patch(repo, patch_of(), result.diff)
    assert snapshot(repo) == before


def test_a_change_without_content_is_refused(repo):
    patch = patch_of(FileChange("calc.py", "modify", current_fingerprint(repo, "calc.py"), None))
    with pytest.raises(TransactionError, match="no content"):
        run_transaction(repo, patch, [python("pass")])
    assert worktree_list(repo) == [str(repo)]
