"""The run loop end to end: real git repositories, the real kernel, worktrees and commands."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from lattice_runtime.errors import TaskInvalidError
from lattice_runtime.machine import RunOptions, RunState, load_run, run_task
from lattice_runtime.workers import MockWorker
from tests.lattice_runtime.fixture_repos import (
    FIXTURES,
    PY_GOAL,
    SERVICE,
    fixture_script,
    git,
    make_repo,
    pytest_exit,
)


def states(outcome_record_transitions: object) -> list[str]:
    return [t.to_state.value for t in outcome_record_transitions]  # type: ignore[attr-defined]


def test_the_python_fixture_task_passes_and_the_workspace_tests_then_pass(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    assert pytest_exit(repo) == 1  # the baseline fails two tests
    outcome = run_task(repo, RunOptions(goal=PY_GOAL), MockWorker(fixture_script()))
    assert outcome.state is RunState.PASSED, outcome.reason
    assert outcome.applied
    assert pytest_exit(repo) == 0
    path = states(outcome.record.transitions)
    assert path[:3] == ["COMPILED", "INDEXED", "CONTEXT_GRANTED"]
    assert path[-3:] == ["TRANSACTION_RUNNING", "VERIFYING", "PASSED"]
    assert load_run(repo, outcome.record.run_id).state is RunState.PASSED
    assert git(repo, "worktree", "list").count("\n") == 1
    assert ".lattice" not in git(repo, "status", "--porcelain")


def test_the_javascript_fixture_task_passes_with_node_test(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "reset-token-js")
    goal = json.loads((FIXTURES / "reset-token-js" / "task.json").read_text())["goal"]
    outcome = run_task(repo, RunOptions(goal=goal), MockWorker(fixture_script("reset-token-js")))
    assert outcome.state is RunState.PASSED, outcome.reason
    assert [r.command.display for r in outcome.verification] == ["npm test"]
    done = subprocess.run(["node", "--test"], cwd=repo, capture_output=True, check=False)
    assert done.returncode == 0


def test_no_apply_verifies_and_leaves_the_tree_untouched(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    before = (repo / SERVICE).read_bytes()
    outcome = run_task(repo, RunOptions(goal=PY_GOAL, apply=False), MockWorker(fixture_script()))
    assert outcome.passed and not outcome.applied
    assert (repo / SERVICE).read_bytes() == before
    assert "mark_consumed" in outcome.diff
    check = subprocess.run(
        ["git", "apply", "--check"], cwd=repo, input=outcome.diff.encode(), check=False
    )
    assert check.returncode == 0


def test_a_patch_editing_a_test_file_is_refused_with_permission_denied(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    edit = {
        "kind": "patch",
        "patch": {
            "summary": "weaken the test",
            "changes": [
                {
                    "editHandle": "@path:tests/test_reset.py",
                    "operation": "replace_text",
                    "replacements": [{"oldContent": "import pytest\n", "newContent": "\n"}],
                }
            ],
            "verificationCommands": [],
        },
    }
    before = (repo / "tests/test_reset.py").read_bytes()
    outcome = run_task(repo, RunOptions(goal=PY_GOAL), MockWorker([edit, edit, edit]))
    assert outcome.state is RunState.FAILED
    assert "permission_denied" in outcome.reason
    assert states(outcome.record.transitions).count("PATCH_REVISION") == 2
    assert "TRANSACTION_RUNNING" not in states(outcome.record.transitions)
    assert (repo / "tests/test_reset.py").read_bytes() == before


def test_a_file_changed_between_grant_and_apply_is_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    users_version = (repo / SERVICE).read_text() + "\n# the user's own edit\n"

    def user_edits_during_verification(state: RunState, reason: str) -> None:
        if state is RunState.VERIFYING:
            (repo / SERVICE).write_text(users_version)

    outcome = run_task(
        repo,
        RunOptions(goal=PY_GOAL),
        MockWorker(fixture_script()),
        observer=user_edits_during_verification,
    )
    assert outcome.state is RunState.FAILED
    assert outcome.reason.startswith("stale_file")
    assert (repo / SERVICE).read_text() == users_version
    assert not outcome.applied


def test_a_verification_command_not_on_the_allowlist_never_runs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    script = fixture_script()
    patch = script[0]["patch"]  # type: ignore[index]
    patch["verificationCommands"] = ["touch pwned", "python -m pytest -q"]
    outcome = run_task(repo, RunOptions(goal=PY_GOAL), MockWorker(script))
    assert outcome.passed, outcome.reason
    assert not list(repo.rglob("pwned"))
    assert [r.split(":")[0] for r in outcome.refused_commands] == ["touch pwned"]


def test_a_hanging_verification_command_ends_as_exit_124(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "tests/test_hang.py").write_text(
        "import threading\n\n\ndef test_hangs():\n    threading.Event().wait()\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a test that never ends")
    outcome = run_task(
        repo, RunOptions(goal=PY_GOAL, timeout_seconds=3), MockWorker(fixture_script())
    )
    assert outcome.state is RunState.FAILED
    assert [(r.exit_code, r.timed_out) for r in outcome.verification] == [(124, True)]
    assert "PATCH_REVISION" in states(outcome.record.transitions)


def test_a_malformed_answer_gets_one_repair_turn(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    outcome = run_task(repo, RunOptions(goal=PY_GOAL), MockWorker(["{not json", *fixture_script()]))
    assert outcome.passed, outcome.reason
    path = states(outcome.record.transitions)
    assert path[3:5] == ["WORKER_RUNNING", "PROTOCOL_REPAIR"]
    turns = outcome.record.telemetry.turns
    assert [t.kind for t in turns] == ["initial", "protocol_repair"]


def test_a_second_malformed_answer_fails_the_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    outcome = run_task(repo, RunOptions(goal=PY_GOAL), MockWorker(["{", "{"]))
    assert outcome.state is RunState.FAILED
    assert outcome.reason.startswith("protocol_")


def test_a_context_request_is_served_and_counted(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    ask = {"kind": "context_request", "requests": [{"reason": "audit", "symbol": "AuditLog"}]}
    outcome = run_task(repo, RunOptions(goal=PY_GOAL), MockWorker([ask, *fixture_script()]))
    assert outcome.passed, outcome.reason
    assert outcome.record.telemetry.context_faults == 1
    assert "CONTEXT_FAULT" in states(outcome.record.transitions)


def test_a_rerun_of_a_passed_task_reuses_the_verified_patch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    options = RunOptions(goal=PY_GOAL, apply=False, use_cache=True)
    first = run_task(repo, options, MockWorker(fixture_script()))
    assert first.passed
    again = run_task(repo, options, MockWorker(["never asked"]))
    assert again.passed, again.reason
    path = states(again.record.transitions)
    assert path[2:4] == ["CONTEXT_GRANTED", "PATCH_LOWERED"]
    assert again.record.telemetry.turns == ()


def test_a_directory_that_is_not_a_repository_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TaskInvalidError):
        run_task(tmp_path, RunOptions(goal=PY_GOAL), MockWorker(fixture_script()))


def test_a_worker_setting_a_transaction_field_fails_the_run_with_that_reason(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    script = fixture_script()
    change = script[0]["patch"]["changes"][0]  # type: ignore[index]
    change["baseCommit"] = "0" * 40
    outcome = run_task(repo, RunOptions(goal=PY_GOAL), MockWorker(script))
    assert outcome.state is RunState.FAILED
    assert outcome.reason.startswith("provider_transaction_field:")
    assert "PROTOCOL_REPAIR" not in states(outcome.record.transitions)


def test_grants_changed_behind_the_runs_back_fail_it_as_registry_integrity(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    before = (repo / SERVICE).read_bytes()

    def widen_the_grants(state: RunState, reason: str) -> None:
        if state is RunState.RESPONSE_VALIDATED:
            (registry,) = (repo / ".lattice" / "grants").iterdir()
            text = registry.read_text()
            registry.write_text(text.replace('"operations":[]', '"operations":["replace_file"]'))

    outcome = run_task(
        repo, RunOptions(goal=PY_GOAL), MockWorker(fixture_script()), observer=widen_the_grants
    )
    assert outcome.state is RunState.FAILED
    assert outcome.reason.startswith("registry_integrity")
    assert "PATCH_REVISION" not in states(outcome.record.transitions)
    assert (repo / SERVICE).read_bytes() == before


def test_a_goal_that_does_not_compile_writes_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    with pytest.raises(TaskInvalidError):
        run_task(repo, RunOptions(goal="   "), MockWorker(fixture_script()))
    assert not (repo / ".lattice").exists()
