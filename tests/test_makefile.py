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
