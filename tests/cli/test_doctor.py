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
    assert set(report["versions"]) == {"python", "repocontext", "lmdb", "psycopg", "pycrdt", "mcp"}
    backend = report["backend"]
    assert (backend["engine"], backend["reachable"]) == ("lmdb", True)
    assert backend["latencyMs"] >= 0
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


def test_doctor_reports_a_postgresql_store_and_its_latency_without_the_password(
    tmp_path: Path, pg_cluster, pg_url: str
) -> None:
    url = pg_url.replace("postgres@", "postgres:s3cret-pw@")  # (trust auth ignores it)
    Workspace.open(Settings(data_dir=tmp_path, store_url=url)).close()
    result = runner.invoke(
        app, ["doctor", "--json", "--data-dir", str(tmp_path), "--store-url", url]
    )
    assert result.exit_code == 0, result.output
    assert "s3cret-pw" not in result.output
    report = json.loads(result.stdout)
    backend = report["backend"]
    assert (backend["engine"], backend["reachable"]) == ("postgresql", True)
    assert backend["latencyMs"] >= 0
    assert backend["location"].startswith(f"postgresql://postgres@127.0.0.1:{pg_cluster.port}/")
    assert report["store"]["engine"] == "postgresql"
    assert report["store"]["records"][STRUCTURAL] == 0
    text = runner.invoke(
        app, ["doctor", "--data-dir", str(tmp_path)], env={"REPOCONTEXT_STORE_URL": url}
    )
    assert "postgresql at postgresql://postgres@127.0.0.1" in text.stdout
    assert "round trip" in text.stdout and "s3cret-pw" not in text.output


def test_doctor_reports_an_unreachable_postgresql_without_the_password(tmp_path: Path) -> None:
    from repocontext.testing import free_port

    url = f"postgresql://me:s3cret-pw@127.0.0.1:{free_port()}/db?retry_seconds=0"
    result = runner.invoke(app, ["doctor", "--json", "--store-url", url])
    assert result.exit_code == 0, result.output
    assert "s3cret-pw" not in result.output
    report = json.loads(result.stdout)
    assert report["backend"]["engine"] == "postgresql"
    assert report["backend"]["reachable"] is False
    assert report["store"] is None
    assert report["storeError"]["code"] == "store.unavailable"


def test_a_store_url_of_another_scheme_is_a_coded_error() -> None:
    result = runner.invoke(app, ["doctor", "--store-url", "mysql://u:pw@host/db"])
    assert result.exit_code == 1
    assert "error [input.invalid]" in result.output and "'mysql'" in result.output
    assert "pw@" not in result.output
