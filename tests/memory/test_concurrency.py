"""Eight processes remember and update the same entries at once: nothing is lost."""

import subprocess
import sys
from pathlib import Path

import pytest

from repocontext.settings import Settings
from repocontext.store.keys import mem_key
from repocontext.workspace import Workspace

WORKERS = 8
ROUNDS = 6
ENTRIES = 4


@pytest.mark.timeout(180)
def test_eight_writers_lose_no_field_tag_or_link(tmp_path: Path):
    repo = tmp_path / "ws" / "demo"
    repo.mkdir(parents=True)
    (repo / "a.py").write_text("x = 1\n")
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent, embedder="off")
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, "demo", background=False)
        for e in range(ENTRIES):  # every entry exists before the updates start
            workspace.remember("demo", "shared", entry_id=f"e{e}", title="shared")
    worker = Path(__file__).with_name("memory_worker.py")
    procs = [
        subprocess.Popen([sys.executable, str(worker), str(settings.data_dir), str(i), str(ROUNDS)])
        for i in range(WORKERS)
    ]
    assert [p.wait(timeout=170) for p in procs] == [0] * WORKERS
    with Workspace.open(settings) as workspace:
        for e in range(ENTRIES):
            view = workspace.recall_note(mem_key("demo", "shared", f"e{e}"))
            want_tags = {f"w{w}-r{r}" for w in range(WORKERS) for r in range(ROUNDS)}
            assert set(view.tags) == want_tags
            want_links = {mem_key("demo", "targets", tag) for tag in want_tags}
            assert set(view.links["related"]) == want_links
            fields = view.fields
            assert fields["title"] == "shared"  # written once, before, never lost
            assert fields["author"] in {f"w{w}" for w in range(WORKERS)}
            assert fields["body"] in {f"w{w} r{r}" for w in range(WORKERS) for r in range(ROUNDS)}
            assert fields["kind"] == "note"
