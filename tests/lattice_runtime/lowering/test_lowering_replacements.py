"""Lowering replace_text: where oldContent must be, once, inside the grant."""

from pathlib import Path

import pytest

from lattice_runtime.grants import (
    Binding,
    GrantRegistry,
    blob_id,
)
from lattice_runtime.patch import (
    lower,
)
from lattice_runtime.protocol.messages import (
    ReplaceFile,
)
from tests.lattice_runtime.lowering.support import (
    edit,
    git,
    grant,
    proposal,
    refused,
)

# --- replacements ----------------------------------------------------------------------


def test_old_content_found_only_outside_the_slice_is_replacement_outside_grant(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/app.py", (1, 2))
    change = edit(handle, ("value = 1", "value = 2"))
    assert refused(repo, registry, binding, change) == "replacement_outside_grant"


def test_old_content_straddling_the_slice_end_is_replacement_outside_grant(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/app.py", (5, 6))
    change = edit(handle, ("value = 1\n    return value\n\n\ndef other", "x"))
    assert refused(repo, registry, binding, change) == "replacement_outside_grant"


def test_old_content_absent_from_the_file_is_replacement_source_missing(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/app.py", (1, 2))
    change = edit(handle, ('return "goodbye "', "x"))
    assert refused(repo, registry, binding, change) == "replacement_source_missing"


def test_old_content_occurring_twice_in_the_grant_is_replacement_source_ambiguous(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    whole = grant(repo, registry, "src/app.py")
    assert refused(repo, registry, binding, edit(whole, ("value = 1", "v"))) == (
        "replacement_source_ambiguous"
    )
    assert refused(repo, registry, binding, edit(whole, ("", "v"))) == (
        "replacement_source_ambiguous"
    )


@pytest.mark.parametrize(
    "pairs",
    [
        (("def part():\n    value", "a"), ("value = 1\n    return value\n\n\ndef other", "b")),
        (("def part():", "a"), ("def part():", "b")),
        (("def part():", "a"), ("\n    value = 1\n    return value\n\n\ndef other", "b")),
    ],
    ids=["overlapping", "identical", "touching"],
)
def test_replacements_that_overlap_or_touch_are_replacement_conflict(
    repo: Path, registry: GrantRegistry, binding: Binding, pairs: tuple[tuple[str, str], ...]
) -> None:
    handle = grant(repo, registry, "src/app.py", (5, 12))
    assert refused(repo, registry, binding, edit(handle, *pairs)) == "replacement_conflict"


def test_a_file_that_is_not_utf8_keeps_its_other_bytes(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    (repo / "src/latin.py").write_bytes(b"# caf\xe9\nX = 1\n")
    git(repo, "add", "src/latin.py")
    git(repo, "commit", "-qm", "latin")
    handle = grant(repo, registry, "src/latin.py")
    patch = lower(proposal(edit(handle, ("X = 1", "X = 2"))), registry, binding, repo)
    assert patch.changes[0].new_content == b"# caf\xe9\nX = 2\n"
    assert patch.changes[0].expected_fingerprint == blob_id(b"# caf\xe9\nX = 1\n")


def test_a_file_without_line_breaks_takes_replacement_content_as_given(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    (repo / "src/one.py").write_bytes(b"X = 1")
    git(repo, "add", "src/one.py")
    git(repo, "commit", "-qm", "one")
    handle = grant(repo, registry, "src/one.py")
    patch = lower(proposal(ReplaceFile(handle, "X = 2\r\nY = 3\n")), registry, binding, repo)
    assert patch.changes[0].new_content == b"X = 2\r\nY = 3\n"


def test_a_slice_reaching_past_the_end_of_the_file_covers_up_to_the_end(
    repo: Path, registry: GrantRegistry, binding: Binding
) -> None:
    handle = grant(repo, registry, "src/app.py", (11, 40))
    patch = lower(proposal(edit(handle, ("return value\n", "return 0\n"))), registry, binding, repo)
    assert (patch.changes[0].new_content or b"").endswith(b"value = 1\n    return 0\n")
