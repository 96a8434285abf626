"""Lowering create_file: which destinations a worker may name."""

import os
from pathlib import Path

import pytest

from lattice_runtime.grants import (
    Binding,
    GrantRegistry,
)
from lattice_runtime.patch import (
    FileChange,
    lower,
)
from lattice_runtime.protocol.messages import (
    CreateFile,
)
from tests.lattice_runtime.lowering.support import (
    proposal,
    refused,
)

# --- create_file -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/tmp/abs.py",
        "src//x.py",
        "./x.py",
        "src/../x.py",
        "src/.hidden.py",
        ".env",
        "src\\x.py",
        "src/x\0.py",
        "src/x\n.py",
        "build/out.py",
        "src/debug.log",
    ],
)
def test_a_create_path_that_is_not_plain_or_is_ignored_is_unsafe_destination(
    repo: Path, registry: GrantRegistry, binding: Binding, path: str
) -> None:
    assert refused(repo, registry, binding, CreateFile(path, "x")) == "unsafe_destination"


def test_a_create_under_a_symlinked_or_file_parent_is_unsafe_destination(
    repo: Path, registry: GrantRegistry, binding: Binding, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo / "src/out")
    os.symlink(repo / "src", repo / "inner")
    for path in ("src/out/x.py", "inner/x.py", "src/util.py/x.py"):
        assert refused(repo, registry, binding, CreateFile(path, "x")) == "unsafe_destination"
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("path", ["tests/test_new.py", "src/new_test.py", "setup.cfg", "ci.yml"])
def test_creating_a_test_or_config_file_is_protected_destination(
    repo: Path, registry: GrantRegistry, binding: Binding, path: str
) -> None:
    assert refused(repo, registry, binding, CreateFile(path, "x")) == "protected_destination"


def test_creating_an_existing_or_tracked_file_is_destination_exists(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    assert refused(repo, registry, binding, CreateFile("src/util.py", "")) == "destination_exists"
    (repo / "src/util.py").unlink()  # deleted in the work tree, still in the index
    assert refused(repo, registry, binding, CreateFile("src/util.py", "")) == "destination_exists"
    (repo / "src/untracked.py").write_text("")
    assert refused(repo, registry, binding, CreateFile("src/untracked.py", "")) == (
        "destination_exists"
    )
    assert refused(repo, registry, binding, CreateFile("src", "")) == "destination_exists"


def test_a_create_in_a_new_directory_is_allowed(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    patch = lower(proposal(CreateFile("src/pkg/mod.py", "Z = 1\n")), registry, binding, repo)
    assert patch.changes == (FileChange("src/pkg/mod.py", "create", None, b"Z = 1\n"),)
    assert not (repo / "src/pkg").exists()
