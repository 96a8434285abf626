"""The fixtures of the lowering tests: a real git repository, a run's binding and registry."""

from pathlib import Path

import pytest

from lattice_runtime.grants import (
    Binding,
    GrantRegistry,
)
from tests.lattice_runtime.lowering.support import APP, WIN, git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.name", "t")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "core.autocrlf", "false")
    files = {
        "src/app.py": APP.encode(),
        "src/util.py": b"X = 1\n",
        "tests/test_app.py": b"def test_greet():\n    assert True\n",
        "pyproject.toml": b"[project]\nname = 'x'\n",
        ".gitignore": b"build/\n*.log\n",
    }
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    (root / "src/win.py").write_bytes(WIN)
    git(root, "add", "-A", "--", ".", ":!src/win.py")
    git(root, "-c", "core.autocrlf=true", "add", "src/win.py")  # stored with LF
    git(root, "commit", "-qm", "base")
    return root


@pytest.fixture
def binding(repo: Path) -> Binding:
    return Binding("task-1", "session-1", "repo-1", git(repo, "rev-parse", "HEAD"))


@pytest.fixture
def registry(binding: Binding) -> GrantRegistry:
    return GrantRegistry(binding)
