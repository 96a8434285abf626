import json
from pathlib import Path

from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.settings import Settings
from repocontext.store import STRUCTURAL
from repocontext.store.keys import file_key
from repocontext.workspace import Workspace

runner = CliRunner()


def test_doctor_json_shows_versions_data_dir_and_store_stats(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    settings = Settings(data_dir=tmp_path / "data", workspace_root=tmp_path)
    with Workspace.open(settings) as ws:
        ws.register_repo(tmp_path / "proj")
    result = runner.invoke(app, ["doctor", "--json", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["dataDir"] == str(tmp_path / "data")
    assert set(report["versions"]) == {"python", "repocontext", "lmdb", "pycrdt", "mcp"}
    store = report["store"]
    assert store["path"] == str(tmp_path / "data" / "store")
    assert store["records"][STRUCTURAL] == 1
    assert store["lastSeq"] >= 1
    assert store["feedFloor"] == 0


def test_doctor_shows_where_a_trimmed_change_feed_starts(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", workspace_root=tmp_path, feed_max_events=1000)
    with Workspace.open(settings) as ws:
        with ws.store.batch(commit_every=600) as batch:
            for i in range(1200):
                batch.put(STRUCTURAL, file_key("r", f"f{i}"), i)
        ws.sweep()
    result = runner.invoke(app, ["doctor", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 0, result.output
    assert "last seq 1200 (change feed after seq 600)" in result.stdout


def test_doctor_text_lists_the_store_trees(tmp_path: Path) -> None:
    Workspace.open(Settings(data_dir=tmp_path)).close()
    result = runner.invoke(app, ["doctor", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert str(tmp_path) in result.stdout
    assert f"{STRUCTURAL}: 0" in result.stdout


def test_doctor_reports_a_missing_store_without_creating_it(tmp_path: Path) -> None:
    missing = tmp_path / "never-served"
    result = runner.invoke(app, ["doctor", "--json", "--data-dir", str(missing)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["store"] is None
    assert report["storeError"]["code"] == "store.unavailable"
    assert not missing.exists()
    text = runner.invoke(app, ["doctor", "--data-dir", str(missing)]).stdout
    assert "not available" in text


def test_doctor_reads_the_data_dir_from_the_environment(tmp_path: Path) -> None:
    env = {"REPOCONTEXT_DATA_DIR": str(tmp_path / "env-data")}
    result = runner.invoke(app, ["doctor", "--json"], env=env)
    assert json.loads(result.stdout)["dataDir"] == str(tmp_path / "env-data")


def test_version_flag_prints_the_installed_version() -> None:
    from repocontext import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"repocontext {__version__}"
    assert __version__ != "0+unknown"  # installed: the distribution's metadata answers
