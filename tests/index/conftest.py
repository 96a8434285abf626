from pathlib import Path

import pytest

from repocontext.settings import Settings
from repocontext.testing import FakeClock, make_repo
from repocontext.workspace import Workspace

FILES = {
    "pkg/__init__.py": "",
    "pkg/util.py": (
        "import os\n\n\nDEFAULT = 3\n\n\ndef parse(text):\n    return text.split()\n\n\n"
        "class Helper:\n    def run(self, value):\n        return parse(value)\n"
    ),
    "pkg/app.py": (
        "from pkg.util import Helper, parse\nfrom . import util\n\n\n"
        "def main():\n    return Helper().run(parse('a b'))\n"
    ),
    "tests/test_util.py": (
        "from pkg.util import parse\n\n\ndef test_parse():\n    assert parse('a b') == ['a', 'b']\n"
    ),
    "web/index.js": (
        "import { helper } from './lib';\nexport function start() { return helper(); }\n"
    ),
    "web/lib/index.js": "export function helper() { return 1; }\n",
    "README.md": "# demo\n",
    "ignored.log": "noise\n",
    ".gitignore": "*.log\n",
}


def committed_repo(root: Path, files: dict[str, str | bytes] | None = None) -> Path:
    return make_repo(root, FILES if files is None else files, commit=True)


@pytest.fixture
def repo_factory():
    return committed_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed_repo(tmp_path / "ws" / "demo")


@pytest.fixture
def workspace(tmp_path: Path, repo: Path):
    # Indexing alone: no embedding pass writing vector records in the background.
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent, embedder="off")
    with Workspace.open(settings, clock=FakeClock()) as opened:
        yield opened
