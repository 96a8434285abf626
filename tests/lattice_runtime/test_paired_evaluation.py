"""``bench/paired.py``: one agent with and without Lattice on byte-identical clones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.lattice_runtime.fixture_repos import FIXTURES, PY_GOAL, git, make_repo

ROOT = FIXTURES.parent
PAIRED = ROOT / "bench" / "paired.py"
AGENT = ROOT / "bench" / "agents" / "fixture_agent.py"


def paired(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(PAIRED), *args], capture_output=True, text=True, check=False
    )


def test_the_sloppy_agent_passes_only_with_lattice_and_the_table_says_so(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    check = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    task = {"fixture": "reset-token-py", "goal": PY_GOAL, "check": check, "restore": ["tests"]}
    tasks.write_text(json.dumps(task) + "\n")
    agent = f"{sys.executable} {AGENT} --sloppy"
    done = paired("--agent-with", agent, "--agent-without", agent, "--tasks", str(tasks))
    assert done.returncode == 0, done.stderr
    assert "| reset-token-py#1 | pass |" in done.stdout
    assert "| only with Lattice | 1 |" in done.stdout
    assert "| both pass | 0 |" in done.stdout
    assert "Pass rate, with minus without: +1.00" in done.stdout


def test_a_repository_with_uncommitted_changes_is_refused_as_a_snapshot(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "README.md").write_text("uncommitted\n")
    git(repo, "add", "README.md")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"repo": str(repo), "goal": PY_GOAL, "check": ["true"]}) + "\n")
    agent = f"{sys.executable} {AGENT}"
    done = paired("--agent-with", agent, "--agent-without", agent, "--tasks", str(tasks))
    assert done.returncode != 0
    assert "uncommitted changes" in done.stderr


def test_an_agent_that_deletes_the_tests_fails_the_check_because_they_are_restored(
    tmp_path: Path,
) -> None:
    cheat = tmp_path / "cheat.py"
    cheat.write_text(
        "import pathlib, shutil, sys\nsys.stdin.read()\n"
        "shutil.rmtree('tests')\npathlib.Path('tests').mkdir()\n"
        "pathlib.Path('tests/test_ok.py').write_text('def test_ok():\\n    pass\\n')\n"
    )
    tasks = tmp_path / "tasks.jsonl"
    check = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    task = {"fixture": "reset-token-py", "goal": PY_GOAL, "check": check, "restore": ["tests"]}
    tasks.write_text(json.dumps(task) + "\n")
    agent = f"{sys.executable} {cheat}"
    done = paired("--agent-with", agent, "--agent-without", agent, "--tasks", str(tasks))
    assert done.returncode == 0, done.stderr
    assert "| neither | 1 |" in done.stdout
