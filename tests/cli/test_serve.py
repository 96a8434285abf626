from pathlib import Path

from typer.testing import CliRunner

from repocontext.cli import app

runner = CliRunner()


def test_serve_refuses_a_dangerous_repo_with_its_code_and_exit_1(tmp_path: Path) -> None:
    result = runner.invoke(app, ["serve", "--repo", "/", "--data-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert "error [path.dangerous_root]" in result.stderr
    assert "hint:" in result.stderr


def test_serve_refuses_a_repo_outside_the_workspace_root(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "other").mkdir()
    args = ["serve", "--data-dir", str(tmp_path / "data"), "--workspace-root"]
    result = runner.invoke(app, [*args, str(tmp_path / "ws"), "--repo", str(tmp_path / "other")])
    assert result.exit_code == 1
    assert "error [path.outside_workspace]" in result.stderr


def test_serve_rejects_an_unknown_transport(tmp_path: Path) -> None:
    result = runner.invoke(app, ["serve", "--transport", "sse", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2


def test_an_invalid_setting_from_the_environment_exits_2(tmp_path: Path) -> None:
    env = {"REPOCONTEXT_PORT": "not-a-port"}
    result = runner.invoke(app, ["serve", "--data-dir", str(tmp_path)], env=env)
    assert result.exit_code == 2
    assert "error [input.invalid]" in result.stderr


def test_a_port_in_use_fails_before_the_banner_with_exit_1(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = runner.invoke(
            app, ["serve", "--transport", "http", "--port", port, "--data-dir", str(tmp_path)]
        )
    assert result.exit_code == 1
    assert "error [server.port_in_use]" in result.output and "hint:" in result.output
    assert "MCP endpoint" not in result.output


def test_several_workers_over_stdio_are_refused_with_a_hint_to_serve_http(tmp_path: Path) -> None:
    args = ["serve", "--transport", "stdio", "--workers", "2", "--data-dir", str(tmp_path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert "error [input.invalid]" in result.stderr and "--workers 2" in result.stderr
    assert "--transport http" in result.stderr  # the hint
    assert not (tmp_path / "store").exists()  # refused before the store opened


def test_a_port_in_use_fails_before_the_banner_also_with_several_workers(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        args = ["serve", "--transport", "http", "--port", port, "--workers", "2"]
        result = runner.invoke(app, [*args, "--data-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert "error [server.port_in_use]" in result.output and "MCP endpoint" not in result.output
