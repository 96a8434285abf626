import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from lattice_runtime.compile import (
    MAX_GOAL_CHARS,
    TASK_SCHEMA_VERSION,
    AcceptanceCriterion,
    Budget,
    Scope,
    TaskIR,
    compile_task,
    task_id,
)
from lattice_runtime.errors import TaskInvalidError

GOAL = """Fix password reset tokens:
- a valid reset token is consumed only once
- an expired token stays rejected
- and record an audit event on success; do not change the login flow
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "pyproject.toml").write_text("[tool.ruff]\n", encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_reset.py").write_text("def test_x():\n    pass\n", encoding="utf-8")
    return root


def test_a_goal_compiles_to_a_complete_task(repo: Path) -> None:
    task = compile_task(GOAL, repo, constraints=[" keep it small "])
    assert task.goal == GOAL
    assert task.constraints == ("keep it small",)
    assert task.risk == "high"
    assert task.invariants == ("do not change the login flow",)
    assert task.acceptance_criteria == (
        AcceptanceCriterion("ac-1", "Fix password reset tokens"),
        AcceptanceCriterion("ac-2", "a valid reset token is consumed only once"),
        AcceptanceCriterion("ac-3", "an expired token stays rejected"),
        AcceptanceCriterion("ac-4", "record an audit event on success"),
        AcceptanceCriterion("ac-5", "do not change the login flow"),
    )
    assert task.budget == Budget(context_tokens=12_000, pages=20, context_faults=3, model_turns=4)
    assert task.scope == Scope()
    assert [c.display for c in task.allowed_verification_commands] == [
        "pytest",
        "python -m pytest",
        "ruff check",
    ]
    assert task.schema_version == TASK_SCHEMA_VERSION == 2


def test_the_task_id_is_twelve_hex_of_goal_and_resolved_root(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = hashlib.sha256(GOAL.encode() + b"\0" + str(repo.resolve()).encode()).hexdigest()
    task = compile_task(GOAL, repo)
    assert task.id == f"task-{expected[:12]}" == task_id(GOAL, repo)
    monkeypatch.chdir(repo)
    assert compile_task(GOAL, Path(".")).id == task.id
    assert compile_task(GOAL + " ", repo).id != task.id


def test_the_same_goal_on_another_repository_gets_another_id(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    assert compile_task(GOAL, repo).id != compile_task(GOAL, other).id


def test_a_symlinked_root_gets_the_id_of_its_target(repo: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    os.symlink(repo, link)
    assert compile_task(GOAL, link).id == compile_task(GOAL, repo).id


@pytest.mark.parametrize("goal", ["", "   ", "\n\t\n"])
def test_a_blank_goal_is_invalid(repo: Path, goal: str) -> None:
    with pytest.raises(TaskInvalidError) as raised:
        compile_task(goal, repo)
    assert raised.value.code == "lattice.task_invalid"


def test_a_goal_over_twenty_thousand_characters_is_invalid(repo: Path) -> None:
    assert len(compile_task("x" * MAX_GOAL_CHARS, repo).goal) == 20_000
    with pytest.raises(TaskInvalidError, match="20000"):
        compile_task("x" * (MAX_GOAL_CHARS + 1), repo)


@pytest.mark.parametrize("constraints", [[""], ["ok", "  "], "a single string"])
def test_blank_constraints_or_a_bare_string_are_invalid(repo: Path, constraints: list[str]) -> None:
    with pytest.raises(TaskInvalidError):
        compile_task(GOAL, repo, constraints=constraints)


@pytest.mark.parametrize(
    "scope",
    [
        Scope(include=("/etc/*",)),
        Scope(include=("../sibling/**",)),
        Scope(exclude=("src/../../x",)),
        Scope(include=("",)),
        Scope(include=("src\\win",)),
    ],
)
def test_a_scope_leaving_the_repository_is_invalid(repo: Path, scope: Scope) -> None:
    with pytest.raises(TaskInvalidError):
        compile_task(GOAL, repo, scope=scope)


def test_a_relative_scope_is_kept(repo: Path) -> None:
    scope = Scope(include=("src/**", "*.py"), exclude=("src/vendor/**",))
    assert compile_task(GOAL, repo, scope=scope).scope == scope


def test_a_missing_root_or_a_file_root_is_invalid(repo: Path) -> None:
    with pytest.raises(TaskInvalidError):
        compile_task(GOAL, repo / "missing")
    with pytest.raises(TaskInvalidError):
        compile_task(GOAL, repo / "pyproject.toml")
    with pytest.raises(TaskInvalidError):
        compile_task(GOAL, repo / "nul\x00byte")


def test_a_risk_floor_raises_the_risk_and_never_lowers_it(repo: Path) -> None:
    assert compile_task("Fix a typo in the banner", repo).risk == "low"
    assert compile_task("Fix a typo in the banner", repo, risk_floor="medium").risk == "medium"
    assert compile_task("Fix a typo in the banner", repo, risk_floor="high").risk == "high"
    assert compile_task(GOAL, repo, risk_floor="low").risk == "high"
    with pytest.raises(TaskInvalidError):
        compile_task(GOAL, repo, risk_floor="urgent")  # type: ignore[arg-type]  # bad on purpose


def test_the_wire_form_is_camel_case_json_that_round_trips(repo: Path) -> None:
    task = compile_task(GOAL, repo, constraints=["stay small"], scope=Scope(include=("src/**",)))
    wire = json.loads(json.dumps(task.to_wire()))
    assert list(wire) == [
        "schemaVersion",
        "id",
        "goal",
        "constraints",
        "invariants",
        "acceptanceCriteria",
        "risk",
        "scope",
        "budget",
        "allowedVerificationCommands",
    ]
    assert wire["schemaVersion"] == 2
    assert wire["budget"] == {
        "contextTokens": 12_000,
        "pages": 20,
        "contextFaults": 3,
        "modelTurns": 4,
    }
    assert wire["allowedVerificationCommands"] == ["pytest", "python -m pytest", "ruff check"]
    rebuilt = TaskIR(
        id=wire["id"],
        goal=wire["goal"],
        constraints=tuple(wire["constraints"]),
        invariants=tuple(wire["invariants"]),
        acceptance_criteria=tuple(
            AcceptanceCriterion(id=c["id"], text=c["text"]) for c in wire["acceptanceCriteria"]
        ),
        risk=wire["risk"],
        scope=Scope(tuple(wire["scope"]["include"]), tuple(wire["scope"]["exclude"])),
        budget=Budget(),
        allowed_verification_commands=task.allowed_verification_commands,
    )
    assert rebuilt == task
    assert rebuilt.to_wire() == wire


def test_compiling_is_deterministic(repo: Path) -> None:
    assert compile_task(GOAL, repo) == compile_task(GOAL, repo)


def test_too_many_or_too_long_constraints_and_globs_are_invalid(repo: Path) -> None:
    with pytest.raises(TaskInvalidError):
        compile_task(GOAL, repo, constraints=["keep it"] * 101)
    with pytest.raises(TaskInvalidError):
        compile_task(GOAL, repo, constraints=["x" * (MAX_GOAL_CHARS + 1)])
    with pytest.raises(TaskInvalidError):
        compile_task(GOAL, repo, scope=Scope(include=("src/**",) * 1001))
