"""The Makefile's torch install: pip's configured index by default, TORCH_INDEX_URL when set."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _torch_install(*variables: str) -> str:
    # -n prints the recipe without running it; -B prints it even when .venv exists.
    done = subprocess.run(
        ["make", "-n", "-B", ".venv/.installed", *variables],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    [line] = [row for row in done.stdout.splitlines() if '"torch==2.13.0"' in row]
    return line


def test_torch_comes_from_the_configured_index_by_default() -> None:
    assert "--index-url" not in _torch_install()


def test_torch_index_url_points_the_torch_install_at_another_index() -> None:
    line = _torch_install("TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu")
    assert '--index-url "https://download.pytorch.org/whl/cpu" "torch==2.13.0"' in line


def _postgres_check(path: str, *variables: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "postgres-check", *variables],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"PATH": path},
    )


def test_make_test_fails_and_says_how_to_install_postgresql_when_initdb_is_missing(
    tmp_path: Path,
) -> None:
    done = _postgres_check("/usr/bin:/bin", f"PG_BIN={tmp_path}")
    assert done.returncode != 0
    assert "apt-get install postgresql" in done.stderr
    assert "/usr/lib/postgresql/15/bin" in done.stderr


def test_make_test_finds_initdb_in_the_debian_directory_when_it_is_not_on_path() -> None:
    assert _postgres_check("/usr/bin:/bin").returncode == 0


def test_make_test_checks_for_postgresql_first() -> None:
    done = subprocess.run(
        ["make", "-n", "-B", "test"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "apt-get install postgresql" in done.stdout
