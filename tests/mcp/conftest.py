from pathlib import Path

import pytest

from repocontext.settings import Settings
from repocontext.workspace import Workspace


@pytest.fixture
def workspace(tmp_path: Path):
    """A workspace (writes on, no embedder) with one indexed repository `proj` (core.py)."""
    repo = tmp_path / "ws" / "proj"
    repo.mkdir(parents=True)
    (repo / "core.py").write_text("def compute(x):\n    return x * 2\n")
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_root=tmp_path / "ws",
        enable_writes=True,
        embedder="off",
    )
    with Workspace.open(settings) as opened:
        opened.bootstrap(repo, "proj", background=False)
        yield opened
