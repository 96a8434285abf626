"""A run killed in the middle of its transaction leaves no worktree after the next start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from lattice_runtime.machine import RunOptions, RunState, run_task
from lattice_runtime.workers import MockWorker
from tests.lattice_runtime.fixture_repos import PY_GOAL, fixture_script, git, make_repo


def test_a_crash_mid_transaction_leaves_no_worktree_after_the_next_start(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    # A verification test that tells the test its pid through the FIFO, then blocks: the
    # run is then inside its transaction, with a worktree on disk.
    (repo / "tests/test_gate.py").write_text(
        "import os\nimport threading\n\n\ndef test_gate():\n"
        f"    with open({str(gate)!r}, 'w') as gate:\n"
        "        gate.write(str(os.getpid()))\n"
        "    threading.Event().wait()\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a gate")
    script = tmp_path / "task.json"
    script.write_text(json.dumps({"goal": PY_GOAL, "mock": fixture_script()}))
    lattice = Path(sys.executable).with_name("lattice")
    child = subprocess.Popen(
        [
            str(lattice),
            "run",
            PY_GOAL,
            "--worker",
            "mock",
            "--script",
            str(script),
            "--repo",
            str(repo),
            "--json",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with open(gate) as reader:  # blocks until the verification command is running
        test_pid = int(reader.read())
    worktrees = repo / ".lattice" / "worktrees"
    assert [p for p in worktrees.iterdir() if p.is_dir()]
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    os.killpg(os.getpgid(test_pid), signal.SIGKILL)  # the orphaned command
    (repo / "tests/test_gate.py").unlink()
    git(repo, "rm", "-q", "--cached", "tests/test_gate.py")
    git(repo, "commit", "-q", "-m", "no gate")

    outcome = run_task(repo, RunOptions(goal=PY_GOAL), MockWorker(fixture_script()))

    assert outcome.state is RunState.PASSED, outcome.reason
    assert git(repo, "worktree", "list").count("\n") == 1
    assert [p for p in worktrees.iterdir() if p.is_dir()] == []
