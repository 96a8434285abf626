"""Fixture repositories for the Lattice end-to-end tests: real git repositories per test."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PY_GOAL = json.loads((FIXTURES / "reset-token-py" / "task.json").read_text())["goal"]
SERVICE = "src/resetkit/service.py"


def make_repo(tmp_path: Path, fixture: str = "reset-token-py") -> Path:
    repo = tmp_path / "work"
    shutil.copytree(FIXTURES / fixture / "repo", repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    return repo


def git(repo: Path, *args: str) -> str:
    identity = ["-c", "user.name=t", "-c", "user.email=t@localhost"]
    done = subprocess.run(
        ["git", *identity, *args], cwd=repo, check=True, capture_output=True, text=True
    )
    return done.stdout


def fixture_script(fixture: str = "reset-token-py") -> list[object]:
    return list(json.loads((FIXTURES / fixture / "task.json").read_text())["mock"])


def pytest_exit(repo: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=repo,
        capture_output=True,
        check=False,
    )
    return done.returncode
