"""The reset-token fixtures: the baseline fails two of four tests, the mock script fixes both."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PLACEHOLDER = "@path:"
TIMEOUT = 120


def copy_fixture(name: str, tmp_path: Path) -> tuple[Path, dict]:
    repo = tmp_path / name
    shutil.copytree(FIXTURES / name / "repo", repo)
    task = json.loads((FIXTURES / name / "task.json").read_text(encoding="utf-8"))
    return repo, task


def changes(task: dict) -> list[dict]:
    return [
        change
        for turn in task["mock"]
        if turn["kind"] == "patch"
        for change in turn["patch"]["changes"]
    ]


def apply_mock_script(repo: Path, task: dict) -> set[str]:
    """Apply every replace_text of the script the way lowering would; return the paths touched."""
    touched = set()
    for change in changes(task):
        assert change["operation"] == "replace_text"
        assert change["editHandle"].startswith(PLACEHOLDER)
        relative = change["editHandle"].removeprefix(PLACEHOLDER)
        path = repo / relative
        with path.open(encoding="utf-8", newline="") as handle:
            text = handle.read()
        for replacement in change["replacements"]:
            assert text.count(replacement["oldContent"]) == 1, replacement["oldContent"]
            text = text.replace(replacement["oldContent"], replacement["newContent"])
        with path.open("w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        touched.add(relative)
    return touched


def run(argv: list[str], repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=TIMEOUT)


def pytest_counts(repo: Path) -> tuple[int, int]:
    done = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], repo)
    summary = done.stdout.strip().splitlines()[-1]
    passed = re.search(r"(\d+) passed", summary)
    failed = re.search(r"(\d+) failed", summary)
    return (int(passed[1]) if passed else 0, int(failed[1]) if failed else 0)


def node_counts(repo: Path) -> tuple[int, int]:
    node = shutil.which("node")
    assert node, "Node.js (20 or later) must be installed to check the JavaScript fixture"
    done = run([node, "--test", "--test-reporter=tap"], repo)
    passed = re.search(r"^# pass (\d+)$", done.stdout, re.MULTILINE)
    failed = re.search(r"^# fail (\d+)$", done.stdout, re.MULTILINE)
    assert passed and failed, done.stdout + done.stderr
    return int(passed[1]), int(failed[1])


@pytest.mark.parametrize("name", ["reset-token-py", "reset-token-js"])
def test_a_fixture_task_names_its_goal_and_a_small_source_only_fix(name):
    task = json.loads((FIXTURES / name / "task.json").read_text(encoding="utf-8"))

    assert set(task) == {"goal", "mock"}
    assert "reset token" in task["goal"]
    assert "Do not change login" in task["goal"]
    paths = {change["editHandle"].removeprefix(PLACEHOLDER) for change in changes(task)}
    assert 1 <= len(paths) <= 2
    assert all(not path.startswith(("test/", "tests/")) for path in paths)
    assert all((FIXTURES / name / "repo" / path).is_file() for path in paths)


def test_the_python_fixture_fails_two_tests_until_the_mock_fix_is_applied(tmp_path):
    repo, task = copy_fixture("reset-token-py", tmp_path)
    assert pytest_counts(repo) == (2, 2)

    assert apply_mock_script(repo, task) == {"src/resetkit/service.py"}

    assert pytest_counts(repo) == (4, 0)
    assert [turn["patch"]["verificationCommands"] for turn in task["mock"]] == [
        ["python -m pytest -q"]
    ]


def test_the_javascript_fixture_fails_two_tests_until_the_mock_fix_is_applied(tmp_path):
    repo, task = copy_fixture("reset-token-js", tmp_path)
    manifest = json.loads((repo / "package.json").read_text(encoding="utf-8"))
    assert manifest["scripts"] == {"test": "node --test"}
    assert "dependencies" not in manifest
    assert "devDependencies" not in manifest
    assert node_counts(repo) == (2, 2)

    assert apply_mock_script(repo, task) == {"src/service.js"}

    assert node_counts(repo) == (4, 0)
    npm = shutil.which("npm")
    assert npm, "npm must be installed to run the JavaScript fixture's verification command"
    assert run([npm, "test"], repo).returncode == 0
    assert [turn["patch"]["verificationCommands"] for turn in task["mock"]] == [["npm test"]]
