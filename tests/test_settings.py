import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from repocontext.cli import build_settings
from repocontext.settings import Settings, default_data_dir
from repocontext.supervisor import worker_count

_VARS = (
    "DATA_DIR",
    "ENABLE_WRITES",
    "WORKSPACE_ROOT",
    "REPO",
    "TRANSPORT",
    "HOST",
    "PORT",
    "WORKERS",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _VARS:
        monkeypatch.delenv(f"REPOCONTEXT_{name}", raising=False)


def test_defaults_serve_stdio_on_loopback_without_writes() -> None:
    settings = Settings()
    assert settings.data_dir == default_data_dir()
    assert settings.enable_writes is False
    assert settings.workspace_root is None
    assert settings.repo is None
    assert settings.transport == "stdio"
    assert (settings.host, settings.port) == ("127.0.0.1", 8765)


def test_environment_variables_fill_every_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("REPOCONTEXT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("REPOCONTEXT_ENABLE_WRITES", "true")
    monkeypatch.setenv("REPOCONTEXT_WORKSPACE_ROOT", str(tmp_path))
    monkeypatch.setenv("REPOCONTEXT_REPO", str(tmp_path / "repo"))
    monkeypatch.setenv("REPOCONTEXT_TRANSPORT", "http")
    monkeypatch.setenv("REPOCONTEXT_HOST", "0.0.0.0")
    monkeypatch.setenv("REPOCONTEXT_PORT", "9000")
    settings = Settings()
    assert settings.data_dir == tmp_path / "data"
    assert settings.enable_writes is True
    assert settings.workspace_root == tmp_path
    assert settings.repo == tmp_path / "repo"
    assert settings.transport == "http"
    assert (settings.host, settings.port) == ("0.0.0.0", 9000)


def test_flags_win_over_environment_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("REPOCONTEXT_PORT", "9000")
    monkeypatch.setenv("REPOCONTEXT_ENABLE_WRITES", "true")
    monkeypatch.setenv("REPOCONTEXT_DATA_DIR", str(tmp_path / "env"))
    settings = build_settings(port=9100, enable_writes=False, data_dir=tmp_path / "flag")
    assert settings.port == 9100
    assert settings.enable_writes is False
    assert settings.data_dir == tmp_path / "flag"


def test_flags_left_unset_keep_the_environment_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOCONTEXT_TRANSPORT", "http")
    assert build_settings(port=None, transport=None).transport == "http"


def test_repo_doubles_as_workspace_root_when_none_is_set(tmp_path: Path) -> None:
    assert Settings(repo=tmp_path).workspace_root == tmp_path


def test_explicit_workspace_root_is_kept_beside_repo(tmp_path: Path) -> None:
    settings = Settings(repo=tmp_path / "repo", workspace_root=tmp_path)
    assert settings.workspace_root == tmp_path


def test_repo_from_environment_also_sets_the_workspace_root(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("REPOCONTEXT_REPO", str(tmp_path))
    assert Settings().workspace_root == tmp_path


def test_home_relative_paths_are_expanded() -> None:
    assert Settings(data_dir=Path("~/rc")).data_dir == Path.home() / "rc"


def test_settings_are_frozen() -> None:
    settings = Settings()
    with pytest.raises(ValidationError):
        settings.port = 1


def test_an_unknown_transport_is_rejected() -> None:
    with pytest.raises(ValidationError):
        Settings(transport="sse")  # type: ignore[arg-type]  # the point is the bad value


def test_a_port_out_of_range_is_rejected() -> None:
    with pytest.raises(ValidationError):
        Settings(port=70000)


def test_unknown_settings_are_rejected() -> None:
    with pytest.raises(ValidationError):
        Settings(colour="blue")  # type: ignore[call-arg]  # the point is the unknown name


def test_http_serves_with_one_worker_per_core_unless_workers_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cores = getattr(os, "process_cpu_count", os.cpu_count)() or 1
    assert Settings().workers is None and worker_count(Settings()) == cores
    monkeypatch.setenv("REPOCONTEXT_WORKERS", "3")
    assert worker_count(Settings()) == 3
    assert worker_count(build_settings(workers=1)) == 1  # the flag wins


def test_zero_workers_is_refused() -> None:
    with pytest.raises(ValidationError):
        Settings(workers=0)
