import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lattice_runtime.errors import LoweringError, UnsafePathError
from lattice_runtime.grants import Binding, Fingerprint, GrantRegistry

BINDING = Binding("task-1", "session-1", "repo-1", "a" * 40, epoch=2)
FP = "b" * 40


def registry_with_grants() -> GrantRegistry:
    registry = GrantRegistry(BINDING)
    registry.grant("src/a.py", FP, (1, 10), ("replace_text",))
    registry.grant("src/b.py", "c" * 40, None, ("replace_text", "replace_file", "delete_file"))
    registry.grant("tests/test_a.py", "d" * 40, None, ())
    return registry


def test_handles_are_numbered_in_grant_order() -> None:
    registry = registry_with_grants()
    assert [g.handle for g in registry.grants()] == ["E1", "E2", "E3"]
    assert registry.get("E2").path == "src/b.py"
    assert registry.get("E2").whole_file and not registry.get("E1").whole_file
    assert all(g.binding == BINDING for g in registry.grants())


def test_regranting_the_same_path_lines_and_fingerprint_returns_the_same_handle() -> None:
    registry = registry_with_grants()
    again = registry.grant("src/a.py", Fingerprint(FP, "blob", True), (1, 10), ("replace_text",))
    assert again.handle == "E1"
    assert registry.grant("src/a.py", FP, (11, 20), ("replace_text",)).handle == "E4"
    assert registry.grant("src/a.py", "e" * 40, (1, 10), ("replace_text",)).handle == "E5"


def test_an_invalidated_grant_is_not_reissued_and_a_fresh_handle_is_minted() -> None:
    registry = registry_with_grants()
    withdrawn = registry.invalidate("E1")
    assert withdrawn.invalidated and registry.get("E1").invalidated
    assert registry.grant("src/a.py", FP, (1, 10), ("replace_text",)).handle == "E4"


def test_invalidate_path_withdraws_every_live_handle_on_the_path() -> None:
    registry = registry_with_grants()
    registry.grant("src/a.py", FP, (30, 40), ("replace_text",))
    withdrawn = registry.invalidate_path("src/a.py")
    assert [g.handle for g in withdrawn] == ["E1", "E4"]
    assert registry.invalidate_path("src/a.py") == ()
    assert not registry.get("E2").invalidated


@pytest.mark.parametrize("handle", ["E0", "e1", "E01", "X1", "E9", "", "E1 "])
def test_an_unknown_or_malformed_handle_is_unknown_handle(handle: str) -> None:
    registry = registry_with_grants()
    with pytest.raises(LoweringError) as caught:
        registry.get(handle)
    assert caught.value.reason == "unknown_handle"
    with pytest.raises(LoweringError):
        registry.invalidate(handle)


def test_a_saved_registry_loads_back_identical(tmp_path: Path) -> None:
    registry = registry_with_grants()
    registry.invalidate("E3")
    path = tmp_path / ".lattice" / "grants.json"
    registry.save(path, root=tmp_path)
    loaded = GrantRegistry.load(path)
    assert loaded.binding == BINDING
    assert loaded.grants() == registry.grants()


def test_the_saved_file_is_canonical_json_with_the_sha256_of_the_registry(tmp_path: Path) -> None:
    path = tmp_path / "grants.json"
    registry_with_grants().save(path, root=tmp_path)
    raw = path.read_bytes()
    wrapped = json.loads(raw)
    assert raw == json.dumps(wrapped, sort_keys=True, separators=(",", ":")).encode()
    body = json.dumps(wrapped["registry"], sort_keys=True, separators=(",", ":")).encode()
    assert wrapped["digest"] == hashlib.sha256(body).hexdigest()


def test_editing_the_saved_registry_is_registry_integrity(tmp_path: Path) -> None:
    path = tmp_path / "grants.json"
    registry_with_grants().save(path, root=tmp_path)
    wrapped = json.loads(path.read_bytes())
    wrapped["registry"]["grants"][2]["operations"] = ["replace_file"]  # widen a read-only grant
    path.write_text(json.dumps(wrapped))
    with pytest.raises(LoweringError) as caught:
        GrantRegistry.load(path)
    assert caught.value.reason == "registry_integrity"


def _set(*keys: str | int, value: object) -> Callable[[dict[str, Any]], None]:
    def apply(record: dict[str, Any]) -> None:
        target: Any = record
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return apply


EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "handle order": _set("grants", 0, "handle", value="E7"),
    "unknown operation": _set("grants", 0, "operations", value=["chmod"]),
    "operations not a list": _set("grants", 0, "operations", value="replace_text"),
    "escaping path": _set("grants", 0, "path", value="../outside.py"),
    "bad lines": _set("grants", 0, "lines", value=[5, 2]),
    "bad epoch": _set("binding", "epoch", value=0),
    "extra key": _set("grants", 0, "extra", value=True),
    "version": _set("version", value=99),
    "grants not a list": _set("grants", value={"E1": {}}),
    "empty task id": _set("binding", "task_id", value=""),
    "malformed handle": _set("grants", 0, "handle", value="e1"),
    "invalidated not a boolean": _set("grants", 0, "invalidated", value="no"),
    "backslash path": _set("grants", 0, "path", value="src\\a.py"),
    "lines not integers": _set("grants", 0, "lines", value=[1, "10"]),
    "repeated operation": _set("grants", 1, "operations", value=["replace_text"] * 2),
}


def resealed(tmp_path: Path, edit: str) -> Path:
    path = tmp_path / "grants.json"
    registry_with_grants().save(path, root=tmp_path)
    wrapped = json.loads(path.read_bytes())
    EDITS[edit](wrapped["registry"])
    body = json.dumps(wrapped["registry"], sort_keys=True, separators=(",", ":")).encode()
    wrapped["digest"] = hashlib.sha256(body).hexdigest()  # a forger who recomputes the digest
    path.write_text(json.dumps(wrapped))
    return path


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_resealed_registry_that_could_not_have_been_written_is_refused(
    tmp_path: Path, edit: str
) -> None:
    with pytest.raises(LoweringError) as caught:
        GrantRegistry.load(resealed(tmp_path, edit))
    assert caught.value.reason == "registry_integrity"


@pytest.mark.parametrize("content", [b"", b"not json", b"[]", b'{"digest": "x"}', b"\xff"])
def test_malformed_registry_files_are_registry_integrity(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "grants.json"
    path.write_bytes(content)
    with pytest.raises(LoweringError) as caught:
        GrantRegistry.load(path)
    assert caught.value.reason == "registry_integrity"


def test_a_missing_or_symlinked_registry_file_is_registry_integrity(tmp_path: Path) -> None:
    with pytest.raises(LoweringError) as missing:
        GrantRegistry.load(tmp_path / "absent.json")
    assert missing.value.reason == "registry_integrity"
    real = tmp_path / "real.json"
    registry_with_grants().save(real, root=tmp_path)
    os.symlink(real, tmp_path / "link.json")
    with pytest.raises(LoweringError) as linked:
        GrantRegistry.load(tmp_path / "link.json")
    assert linked.value.reason == "registry_integrity"


def test_saving_through_a_symlink_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("keep")
    os.symlink(target, tmp_path / "grants.json")
    with pytest.raises(UnsafePathError):
        registry_with_grants().save(tmp_path / "grants.json", root=tmp_path)
    assert target.read_text() == "keep"
