"""``--store-url``: every command that opens a store can open one PostgreSQL store, from any
data directory (the data directory then holds only that process's derived indexes)."""

import json
from pathlib import Path

from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.testing import make_repo

runner = CliRunner()
OFF = {"REPOCONTEXT_EMBEDDER": "off"}


def test_an_index_made_through_one_data_dir_is_read_through_another(tmp_path: Path, pg_url):
    repo = make_repo(tmp_path / "calc", {"calc.py": "def add(a, b):\n    return a + b\n"})
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    done = runner.invoke(
        app, ["index", str(repo), "--data-dir", a, "--store-url", pg_url, "--json"], env=OFF
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["status"] == "completed"
    status = runner.invoke(
        app, ["status", "--data-dir", b, "--json"], env={**OFF, "REPOCONTEXT_STORE_URL": pg_url}
    )
    assert status.exit_code == 0, status.output
    assert json.loads(status.stdout)["counters"]["filesAdded"] == 1
    found = runner.invoke(
        app, ["search", "add", "--data-dir", b, "--store-url", pg_url, "--json"], env=OFF
    )
    assert found.exit_code == 0, found.output
    assert "calc.py" in found.stdout
    assert not (tmp_path / "a" / "store").exists()  # the store is the database's


def test_a_reading_command_on_a_database_without_a_store_is_store_not_found(tmp_path: Path, pg_url):
    result = runner.invoke(
        app, ["repos", "list", "--data-dir", str(tmp_path), "--store-url", pg_url]
    )
    assert result.exit_code == 1
    assert "error [store.not_found]" in result.output
    assert "--store-url" in result.output
    doctor = json.loads(runner.invoke(app, ["doctor", "--json", "--store-url", pg_url]).stdout)
    assert doctor["storeError"]["code"] == "store.not_found"  # and nothing was created
