import os
from pathlib import Path

import pytest

from lattice_runtime.grants import (
    SLICE_OPERATIONS,
    WHOLE_FILE_OPERATIONS,
    is_config_path,
    is_protected,
    is_test_path,
    operations_for,
)


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_app.py",
        "src/tests/helpers.py",
        "test_app.py",
        "pkg/app_test.py",
        "conftest.py",
        "web/__tests__/app.js",
        "web/app.test.js",
        "web/app.spec.ts",
        "cmd/main_test.go",
    ],
)
def test_test_files_are_recognised(path: str) -> None:
    assert is_test_path(path)
    assert is_protected(path)


@pytest.mark.parametrize(
    "path",
    [
        "pyproject.toml",
        "setup.cfg",
        "setup.py",
        "package.json",
        "package-lock.json",
        "tsconfig.build.json",
        "Makefile",
        "tox.ini",
        "noxfile.py",
        ".github/workflows/ci.yml",
        "Dockerfile",
        "deploy/app.yaml",
        "mypy.ini",
        "poetry.lock",
        "requirements-dev.txt",
        ".gitattributes",
    ],
)
def test_config_files_are_recognised(path: str) -> None:
    assert is_config_path(path)
    assert is_protected(path)


@pytest.mark.parametrize("path", ["src/app.py", "lib/auth/service.js", "README.md", "testing.py"])
def test_source_files_are_not_protected(path: str) -> None:
    assert not is_protected(path)


def test_a_tracked_source_slice_gets_replace_text_only(tmp_path: Path) -> None:
    found = operations_for(tmp_path, "src/a.py", whole_file=False, tracked=True, symlink=False)
    assert found == SLICE_OPERATIONS == ("replace_text",)


def test_a_tracked_whole_source_file_gets_every_operation(tmp_path: Path) -> None:
    found = operations_for(tmp_path, "src/a.py", whole_file=True, tracked=True, symlink=False)
    assert found == WHOLE_FILE_OPERATIONS == ("replace_text", "replace_file", "delete_file")


@pytest.mark.parametrize(
    ("path", "tracked", "symlink"),
    [
        ("tests/test_a.py", True, False),
        ("pyproject.toml", True, False),
        ("src/new.py", False, False),
        ("src/link.py", True, True),
    ],
)
def test_tests_config_untracked_files_and_symlinks_are_read_only(
    tmp_path: Path, path: str, tracked: bool, symlink: bool
) -> None:
    assert operations_for(tmp_path, path, whole_file=True, tracked=tracked, symlink=symlink) == ()


def test_a_file_reached_through_a_symlinked_directory_is_read_only(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "alias")
    assert (
        operations_for(tmp_path, "alias/a.py", whole_file=True, tracked=True, symlink=False) == ()
    )
    assert operations_for(tmp_path, "real/a.py", whole_file=True, tracked=True, symlink=False)


@pytest.mark.parametrize("path", ["", "/etc/passwd", "../outside.py"])
def test_a_path_that_is_not_plainly_inside_is_read_only(tmp_path: Path, path: str) -> None:
    assert operations_for(tmp_path, path, whole_file=True, tracked=True, symlink=False) == ()
