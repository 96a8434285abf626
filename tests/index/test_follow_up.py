"""A start() that joins a run with other filters waits for the pass that uses them."""

import threading
from pathlib import Path

from repocontext.index import IndexService, WalkOptions
from repocontext.settings import Settings
from repocontext.store import SystemClock
from repocontext.testing import make_repo
from repocontext.workspace import Workspace

FILES = {"pkg/__init__.py": "", "pkg/core.py": "def core():\n    pass\n", "tests/t.py": "x = 1\n"}


def test_a_start_joining_a_finished_run_with_new_filters_reports_the_new_pass(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "ws" / "proj", FILES)
    settings = Settings(data_dir=tmp_path / "data", workspace_root=tmp_path / "ws", embedder="off")
    done, release = threading.Event(), threading.Event()

    def after_run(repo_id: str) -> None:  # the run's thread is still alive while this waits
        done.set()
        release.wait(30)

    with Workspace.open(settings) as workspace:
        workspace.register_repo(repo, "proj")
        index = IndexService(workspace.store, SystemClock(), on_changed=after_run)
        index.start("proj", repo, WalkOptions(include_globs=("pkg/**",)))
        assert done.wait(30)
        assert index.status("proj").counters["filesSeen"] == 2  # completed; thread alive
        answers = []
        joiner = threading.Thread(
            target=lambda: answers.append(index.start("proj", repo, WalkOptions()))
        )
        joiner.start()
        release.set()  # the first pass ends; the follow-up pass with the new filters runs
        joiner.join(30)
        [answer] = answers
        assert answer.status == "running" or answer.counters["filesSeen"] == 3
        final = index.wait("proj", 30)
        assert (final.status, final.counters["filesSeen"]) == ("completed", 3)
