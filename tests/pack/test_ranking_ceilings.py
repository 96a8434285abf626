"""``bench/packing.py``'s ranking ceilings: which file each moves first, and what it packs."""

import subprocess
import sys
from pathlib import Path

import pytest

from repocontext.pack.bundle import ContextRequest, pack_result
from repocontext.search.request import SearchRequest
from repocontext.settings import Settings
from repocontext.store import SystemClock
from repocontext.workspace import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from packing import glob_escape, promoted_file, with_first

NEEDED = {"src/b.py": 3, "src/c.py": 9}


def rankings(hybrid, keyword=(), semantic=(), bm25=()):
    return {
        "hybrid": list(hybrid),
        "keyword": list(keyword),
        "semantic": list(semantic),
        "bm25": list(bm25),
    }


def test_a_needed_file_already_first_is_never_moved():
    ranked = rankings(["src/b.py", "src/a.py"], keyword=["src/c.py"])
    for ceiling in ("replay", "first-needed", "best-first", "best-top2"):
        assert promoted_file(ceiling, ranked, NEEDED) is None


def test_first_needed_takes_the_best_ranked_needed_file_else_the_one_with_most_lines():
    assert promoted_file("first-needed", rankings(["src/a.py", "src/b.py"]), NEEDED) == "src/b.py"
    assert promoted_file("first-needed", rankings(["src/a.py"]), NEEDED) == "src/c.py"


def test_best_first_and_best_top2_only_take_what_some_ranker_put_that_high():
    ranked = rankings(["src/a.py", "src/x.py"], keyword=["src/y.py", "src/c.py"], bm25=["src/b.py"])
    assert promoted_file("best-first", ranked, NEEDED) == "src/b.py"
    assert promoted_file("replay", ranked, NEEDED) is None
    second = rankings(["src/a.py", "src/x.py"], semantic=["src/y.py", "src/c.py"])
    assert promoted_file("best-first", second, NEEDED) is None
    assert promoted_file("best-top2", second, NEEDED) == "src/c.py"
    hybrid_second = rankings(["src/a.py", "src/b.py"], keyword=["src/y.py", "src/c.py"])
    assert promoted_file("best-top2", hybrid_second, NEEDED) == "src/b.py"


def test_a_path_escaped_as_a_glob_matches_itself_alone():
    assert glob_escape("src/a[1]*.py") == "src/a\\[1\\]\\*.py"
    assert glob_escape("src/plain.py") == "src/plain.py"


@pytest.fixture
def workspace(tmp_path: Path):
    root = tmp_path / "ws" / "demo"
    (root / "app").mkdir(parents=True)
    (root / "app" / "loader.py").write_text(
        "class ConfigLoader:\n    def load_config(self, path):\n        return path\n"
    )
    (root / "app" / "server.py").write_text("def serve(config):\n    return config\n")
    (root / "app" / "cache.py").write_text("def cached_config(key):\n    return key\n")
    (root / "app" / "clock.py").write_text("def now():\n    return 0\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=root.parent, reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as opened:
        opened.bootstrap(root, background=False)
        yield opened


def test_the_promoted_file_leads_with_the_first_score_and_the_result_keeps_its_length(workspace):
    task = "config loader"
    full = workspace.search(SearchRequest.of("demo", task, 50))
    paths = [h.path for h in full.hits]
    assert paths[0] == "app/loader.py" and "app/server.py" in paths
    moved = with_first(workspace, "demo", task, full, "app/server.py", 2)
    assert [h.path for h in moved.hits] == ["app/server.py", "app/loader.py"]
    assert moved.hits[0].score == full.hits[0].score
    assert with_first(workspace, "demo", task, full, None, 2).hits == full.hits[:2]
    # A file the cut result lacks is searched for alone; one no search can find changes nothing.
    cut = with_first(workspace, "demo", task, full, None, 1)
    assert [h.path for h in with_first(workspace, "demo", task, cut, "app/cache.py", 2).hits] == [
        "app/cache.py",
        "app/loader.py",
    ]
    assert with_first(workspace, "demo", task, cut, "app/clock.py", 2).hits == cut.hits
    request = ContextRequest.of("demo", task, budget=2000)
    bundle = pack_result(workspace.store, SystemClock(), request, moved)
    assert bundle.entries[0].path == "app/server.py"
