from typer.testing import CliRunner

from lattice_runtime.cli import app


def test_lattice_version_prints_the_installed_version() -> None:
    result = CliRunner().invoke(app, ["version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == "0.1.0"
