"""``repocontext archive export|restore|status`` through the CLI runner, on real stores."""

import json
from pathlib import Path

from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.settings import Settings
from repocontext.workspace import Workspace

runner = CliRunner()


def invoke(*args: str, code: int = 0, env: dict[str, str] | None = None) -> str:
    result = runner.invoke(app, list(args), env=env)
    assert result.exit_code == code, result.output
    return result.stdout if code == 0 else result.stderr


def seed(data: Path, root: Path) -> None:
    (root / "proj").mkdir(parents=True)
    with Workspace.open(Settings(data_dir=data, workspace_root=root, embedder="off")) as ws:
        ws.register_repo(root / "proj")
        ws.remember("proj", "decisions", entry_id="d1", title="Keep it", tags=["x"])
        ws.remember("proj", "gotchas", entry_id="g1", body="Watch out")


def test_export_status_and_restore_with_and_without_json(tmp_path: Path) -> None:
    data, archive_dir = tmp_path / "data", tmp_path / "archive"
    seed(data, tmp_path / "ws")
    env = {"REPOCONTEXT_ARCHIVE_DIR": str(archive_dir)}
    exported = json.loads(invoke("archive", "export", "--data-dir", str(data), "--json", env=env))
    assert exported["records"] == 2
    assert exported["path"] == str(archive_dir / "memory.rcarch")
    text = invoke("archive", "export", "--data-dir", str(data), "--out", str(tmp_path / "b.rcarch"))
    assert text.strip() == f"exported 2 memory records to {tmp_path / 'b.rcarch'}"

    status = json.loads(
        invoke(
            "archive",
            "status",
            "--archive-dir",
            str(archive_dir),
            "--data-dir",
            str(data),
            "--json",
        )
    )
    assert (status["exists"], status["records"], status["pending"]) == (True, 2, False)
    assert status["ageSeconds"] is not None and status["memoryRecords"] == 2
    text = invoke("archive", "status", "--data-dir", str(data), env=env)
    assert "2 records, written" in text and "changed since the last export: no" in text

    fresh = str(tmp_path / "fresh")
    archive = str(archive_dir / "memory.rcarch")
    first = json.loads(invoke("archive", "restore", archive, "--data-dir", fresh, "--json"))
    assert (first["records"], first["changed"], first["intoEmpty"]) == (2, 2, True)
    second = invoke("archive", "restore", archive, "--data-dir", fresh)
    assert second.strip() == f"merged {archive}: 2 records, 0 changed"
    recalled = json.loads(
        invoke("memory", "recall", "repo/proj/mem/decisions/d1", "--data-dir", fresh, "--json")
    )
    assert recalled["fields"]["title"] == "Keep it" and recalled["tags"] == ["x"]


def test_status_of_a_missing_archive_and_errors_with_codes(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    empty = invoke("archive", "status", "--archive-dir", str(tmp_path / "none"), "--data-dir", data)
    assert "no archive yet" in empty
    missing_dir = invoke("archive", "export", "--data-dir", data, code=1)
    assert "error [input.invalid]" in missing_dir and "REPOCONTEXT_ARCHIVE_DIR" in missing_dir
    bad = tmp_path / "bad.rcarch"
    bad.write_bytes(b"RCARCH01 not really")
    refused = invoke("archive", "restore", str(bad), "--data-dir", data, code=1)
    assert "error [archive.corrupt]" in refused and "bad.rcarch.prev" in refused
    missing = invoke("archive", "restore", str(tmp_path / "nope"), "--data-dir", data, code=1)
    assert "error [path.not_found]" in missing
