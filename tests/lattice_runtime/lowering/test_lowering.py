"""Lowering a proposal against its grants: results, the run's binding, handles, permissions."""

import dataclasses
import json
import os
from pathlib import Path
from typing import cast

import pytest

from lattice_runtime.errors import LOWERING_REASONS, LoweringError
from lattice_runtime.grants import (
    Binding,
    GrantRegistry,
)
from lattice_runtime.patch import (
    TRANSACTION_FIELDS,
    FileChange,
    lower,
    reject_transaction_fields,
)
from lattice_runtime.protocol.messages import (
    Change,
    CreateFile,
    DeleteFile,
    ReplaceFile,
)
from tests.lattice_runtime.lowering.support import (
    APP,
    COVERED,
    edit,
    git,
    grant,
    proposal,
    refused,
)


def test_every_contract_reason_code_is_covered_here() -> None:
    assert set(LOWERING_REASONS) == COVERED
    assert len(LOWERING_REASONS) == 21


# --- results ---------------------------------------------------------------------------


def test_a_replacement_inside_a_slice_lowers_to_a_modify_with_the_grant_fingerprint(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/app.py", (5, 7))
    patch = lower(proposal(edit(handle, ("value = 1", "value = 2"))), registry, binding, repo)
    assert patch.binding == binding and patch.summary == "a patch"
    assert patch.verification_commands == ("pytest",)
    expected = APP.replace("def part():\n    value = 1", "def part():\n    value = 2").encode()
    assert patch.changes == (
        FileChange("src/app.py", "modify", git(repo, "rev-parse", ":src/app.py"), expected),
    )
    assert (repo / "src/app.py").read_text() == APP  # lowering never writes


def test_changes_are_sorted_by_path_and_carry_their_actions(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    app, util = grant(repo, registry, "src/app.py"), grant(repo, registry, "src/util.py")
    patch = lower(
        proposal(
            DeleteFile(util),
            CreateFile("src/new_module.py", "Y = 2\n"),
            ReplaceFile(app, "print('hi')\n"),
        ),
        registry,
        binding,
        repo,
    )
    assert patch.paths == ("src/app.py", "src/new_module.py", "src/util.py")
    assert [c.action for c in patch.changes] == ["modify", "create", "delete"]
    created = patch.changes[1]
    assert (created.expected_fingerprint, created.new_content) == (None, b"Y = 2\n")
    assert patch.changes[2].new_content is None
    assert patch.changes[2].expected_fingerprint == registry.get(util).fingerprint


def test_several_replacements_in_one_change_are_applied_to_the_original_text(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/app.py")
    patch = lower(
        proposal(edit(handle, ("def part():", "def part2():"), ("def other():", "def greet():"))),
        registry,
        binding,
        repo,
    )
    text = (patch.changes[0].new_content or b"").decode()
    assert "def part2():" in text and text.count("def greet(") == 2


def test_a_crlf_file_keeps_crlf_when_lf_replacements_are_applied(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/win.py", (1, 2))
    assert registry.get(handle).fingerprint == git(repo, "rev-parse", ":src/win.py")
    assert registry.get(handle).operations == ("replace_text",)
    patch = lower(
        proposal(edit(handle, ("def win():\n    return 1", "def win():\n    x = 2\n    return x"))),
        registry,
        binding,
        repo,
    )
    assert patch.changes[0].new_content == b"def win():\r\n    x = 2\r\n    return x\r\n"


def test_a_crlf_file_replaced_whole_keeps_crlf_and_a_new_file_keeps_its_content(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/win.py")
    patch = lower(
        proposal(ReplaceFile(handle, "a = 1\nb = 2\n"), CreateFile("src/lf.py", "c\r\nd\n")),
        registry,
        binding,
        repo,
    )
    assert patch.changes[0].new_content == b"c\r\nd\n"
    assert patch.changes[1].new_content == b"a = 1\r\nb = 2\r\n"


def test_an_lf_file_stays_lf_when_the_worker_sends_crlf(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/util.py")
    patch = lower(proposal(ReplaceFile(handle, "X = 2\r\nY = 3\r\n")), registry, binding, repo)
    assert patch.changes[0].new_content == b"X = 2\nY = 3\n"


def test_text_that_also_occurs_outside_the_slice_is_taken_inside_it(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/app.py", (10, 12))
    patch = lower(proposal(edit(handle, ("value = 1", "value = 3"))), registry, binding, repo)
    text = (patch.changes[0].new_content or b"").decode()
    assert text.endswith("def other():\n    value = 3\n    return value\n")
    assert "def part():\n    value = 1\n" in text


# --- the run ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("task_id", "task-2", "task_mismatch"),
        ("session_id", "session-2", "session_mismatch"),
        ("repository_id", "repo-2", "repository_mismatch"),
        ("base_commit", "f" * 40, "base_commit_mismatch"),
        ("epoch", 2, "epoch_mismatch"),
    ],
)
def test_a_registry_of_another_run_is_refused_by_the_differing_binding_field(
    repo: Path, registry: GrantRegistry, binding: Binding, field: str, value: object, reason: str
) -> None:
    handle = grant(repo, registry, "src/util.py")
    other = dataclasses.replace(binding, **{field: value})
    assert refused(repo, registry, other, DeleteFile(handle)) == reason


def test_binding_fields_are_checked_task_first(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    other = Binding("t", "s", "r", "0" * 40, epoch=9)
    assert refused(repo, registry, other, CreateFile("src/x.py", "")) == "task_mismatch"
    other = dataclasses.replace(binding, repository_id="r", epoch=9)
    assert refused(repo, registry, other, CreateFile("src/x.py", "")) == "repository_mismatch"


def test_lowering_without_a_binding_or_a_git_work_tree_is_workspace_required(
    repo: Path, registry: GrantRegistry, binding: Binding, tmp_path: Path
) -> None:
    change = CreateFile("src/x.py", "")
    assert refused(repo, registry, None, change) == "workspace_required"
    assert refused(None, registry, binding, change) == "workspace_required"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert refused(plain, registry, binding, change) == "workspace_required"


def test_a_tampered_registry_never_reaches_lowering(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    grant(repo, registry, "tests/test_app.py")
    path = repo / ".lattice" / "grants.json"
    registry.save(path, root=repo)
    wrapped = json.loads(path.read_bytes())
    wrapped["registry"]["grants"][0]["operations"] = ["replace_file"]
    path.write_text(json.dumps(wrapped))
    with pytest.raises(LoweringError) as caught:
        GrantRegistry.load(path)
    assert caught.value.reason == "registry_integrity"


def test_transaction_fields_in_a_proposal_are_provider_transaction_field() -> None:
    reject_transaction_fields(["editHandle", "operation", "replacements"])
    with pytest.raises(LoweringError) as caught:
        reject_transaction_fields(["editHandle", "operation", "expectedFingerprint"])
    assert caught.value.reason == "provider_transaction_field"
    assert "expectedFingerprint" in caught.value.message
    assert {"expectedFingerprint", "baseCommit", "epoch"} <= TRANSACTION_FIELDS


# --- handles ---------------------------------------------------------------------------


@pytest.mark.parametrize("handle", ["E9", "E0", "edit-1", "../src/app.py"])
def test_a_handle_never_granted_is_unknown_handle(
    repo: Path, registry: GrantRegistry, binding: Binding, handle: str
) -> None:
    grant(repo, registry, "src/util.py")
    assert refused(repo, registry, binding, DeleteFile(handle)) == "unknown_handle"


def test_the_same_handle_in_two_changes_is_duplicate_handle(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/app.py")
    changes = (edit(handle, ("def part", "def part1")), edit(handle, ("def other", "def o")))
    assert refused(repo, registry, binding, *changes) == "duplicate_handle"


def test_two_changes_to_one_path_are_duplicate_path(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    first = grant(repo, registry, "src/app.py", (1, 2))
    second = grant(repo, registry, "src/app.py", (5, 7))
    util = grant(repo, registry, "src/util.py")
    two_slices = (edit(first, ("hello", "hi")), edit(second, ("value = 1", "value = 2")))
    assert refused(repo, registry, binding, *two_slices) == "duplicate_path"
    edit_and_create = (DeleteFile(util), CreateFile("src/util.py", "X = 2\n"))
    assert refused(repo, registry, binding, *edit_and_create) == "duplicate_path"
    two_creates = (CreateFile("src/n.py", "a"), CreateFile("src/n.py", "b"))
    assert refused(repo, registry, binding, *two_creates) == "duplicate_path"


def test_a_withdrawn_handle_is_invalidated_handle(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/util.py")
    registry.invalidate(handle)
    assert refused(repo, registry, binding, DeleteFile(handle)) == "invalidated_handle"


def test_a_file_changed_since_its_grant_is_invalidated_handle_and_withdrawn(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    slice_handle = grant(repo, registry, "src/util.py", (1, 1))
    handle = grant(repo, registry, "src/util.py")
    (repo / "src/util.py").write_bytes(b"X = 100\n")
    assert refused(repo, registry, binding, ReplaceFile(handle, "X = 2\n")) == "invalidated_handle"
    assert registry.get(handle).invalidated
    assert registry.get(slice_handle).invalidated  # it saw the same old bytes
    assert (repo / "src/util.py").read_bytes() == b"X = 100\n"


def test_a_file_deleted_since_its_grant_is_invalidated_handle(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/util.py")
    (repo / "src/util.py").unlink()
    assert refused(repo, registry, binding, DeleteFile(handle)) == "invalidated_handle"


@dataclasses.dataclass(frozen=True)
class RenameFile:
    edit_handle: str
    new_path: str


def test_a_change_type_lowering_does_not_know_is_unsupported_operation(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/util.py")
    foreign = cast(Change, RenameFile(handle, "src/elsewhere.py"))
    assert refused(repo, registry, binding, foreign) == "unsupported_operation"


# --- permissions -----------------------------------------------------------------------


def test_a_slice_grant_allows_only_replace_text(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/app.py", (1, 2))
    assert refused(repo, registry, binding, ReplaceFile(handle, "")) == "permission_denied"
    assert refused(repo, registry, binding, DeleteFile(handle)) == "permission_denied"


@pytest.mark.parametrize("path", ["tests/test_app.py", "pyproject.toml"])
def test_editing_a_test_or_config_file_is_permission_denied(
    repo: Path, registry: GrantRegistry, binding: Binding, path: str
) -> None:
    handle = grant(repo, registry, path)
    assert registry.get(handle).operations == ()
    change = edit(handle, ((repo / path).read_text().splitlines()[0], "x"))
    assert refused(repo, registry, binding, change) == "permission_denied"


def test_an_untracked_file_is_permission_denied(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    (repo / "src/scratch.py").write_text("A = 1\n")
    handle = grant(repo, registry, "src/scratch.py")
    assert refused(repo, registry, binding, ReplaceFile(handle, "A = 2\n")) == "permission_denied"


def test_a_symlink_is_read_only_and_permission_denied(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    os.symlink("util.py", repo / "src/alias.py")
    git(repo, "add", "src/alias.py")
    git(repo, "commit", "-qm", "alias")
    handle = grant(repo, registry, "src/alias.py")
    assert registry.get(handle).fingerprint.startswith("sha256:")
    assert refused(repo, registry, binding, edit(handle, ("X = 1", "X = 2"))) == "permission_denied"
    assert (repo / "src/util.py").read_bytes() == b"X = 1\n"
