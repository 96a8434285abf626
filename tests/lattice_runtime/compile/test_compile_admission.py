import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lattice_runtime.compile import TaskIR, VerificationCommand, admit, compile_task
from lattice_runtime.errors import CommandNotAllowedError


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text("def test_b():\n    pass\n", encoding="utf-8")
    (root / "Makefile").write_text("test:\n\tpytest\n", encoding="utf-8")
    (root / "package.json").write_text(
        json.dumps({"scripts": {"test": "node --test", "lint": "eslint ."}}), encoding="utf-8"
    )
    return root


@pytest.fixture
def task(repo: Path) -> TaskIR:
    return compile_task("Fix the parser", repo)


@pytest.mark.parametrize(
    ("command", "argv", "origin"),
    [
        ("pytest", ("pytest",), "builtin"),
        ("python -m pytest", ("python", "-m", "pytest"), "builtin"),
        ("  make   test ", ("make", "test"), "Makefile"),
        ("npm test", ("npm", "test"), "package.json"),
        ("npm run lint", ("npm", "run", "lint"), "package.json"),
        ("'npm' \"run\" lint", ("npm", "run", "lint"), "package.json"),
    ],
)
def test_an_allowlisted_command_is_admitted_as_its_entry(
    task: TaskIR, repo: Path, command: str, argv: tuple[str, ...], origin: str
) -> None:
    assert admit(command, task, repo) == VerificationCommand(argv, origin)


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q -x",
        "python -m pytest -vv --tb=short",
        "pytest tests/test_a.py::test_b",
        "pytest tests/test_a.py::test_b[case-1]",
        "pytest tests",
        "pytest ./tests/test_a.py --tb=no",
        "pytest -k parser",
        "pytest -k 'parser and not slow or fast'",
        "python -m pytest -q -k 'not slow' tests/test_a.py",
    ],
)
def test_pytest_with_safe_flags_and_paths_in_the_repository_is_admitted(
    task: TaskIR, repo: Path, command: str
) -> None:
    admitted = admit(command, task, repo)
    assert admitted.origin == "builtin"
    assert admitted.argv[0] in {"pytest", "python"}


@pytest.mark.parametrize(
    "command",
    [
        "pytest; rm -rf /",
        "pytest && rm -rf /",
        "pytest | tee out",
        "pytest > out.txt",
        "pytest $(whoami)",
        "pytest `whoami`",
        "pytest &",
        "pytest\nrm -rf /",
        "bash -c pytest",
        "sh -c 'make test'",
        "rm -rf /",
        "make lint",
        "make test extra",
        "npm run dev",
        "npm test -- --watch",
        "pytest ../outside",
        "pytest /etc/passwd",
        "pytest tests/missing_test.py",
        "pytest --pdb",
        "pytest -p evil_plugin",
        "pytest --tb=long",
        "pytest -k",
        "pytest -k 'a and'",
        "pytest -k 'a b'",
        "pytest -k 'os.system(1)'",
        "pytest -k 'and a'",
        "pytest tests/test_a.py::test_b(1)",
        "python -c 'import os'",
        "python -m pip install evil",
        "pytest 'unterminated",
        "",
        "   ",
        "pytest -q" + " -q" * 1000,
    ],
)
def test_anything_else_is_refused_with_the_allowlist_in_the_hint(
    task: TaskIR, repo: Path, command: str
) -> None:
    with pytest.raises(CommandNotAllowedError) as raised:
        admit(command, task, repo)
    assert raised.value.code == "lattice.command_not_allowed"
    assert "python -m pytest" in raised.value.hint
    assert "npm run lint" in raised.value.hint


def test_a_symlink_leading_out_of_the_repository_is_not_a_test_path(
    task: TaskIR, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside_test.py"
    outside.write_text("def test_x():\n    pass\n", encoding="utf-8")
    os.symlink(outside, repo / "tests" / "test_link.py")
    with pytest.raises(CommandNotAllowedError):
        admit("pytest tests/test_link.py", task, repo)


def test_pytest_extensions_need_the_pytest_family_on_the_allowlist(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("test:\n\ttrue\n", encoding="utf-8")
    task = compile_task("Fix the parser", tmp_path)
    with pytest.raises(CommandNotAllowedError):
        admit("pytest -q", task, tmp_path)
    with pytest.raises(CommandNotAllowedError):
        admit("pytest", task, tmp_path)


def test_the_allowlist_comes_from_the_task_not_the_repository_now(task: TaskIR, repo: Path) -> None:
    (repo / "Makefile").write_text("test:\n\ttrue\nlint:\n\ttrue\n", encoding="utf-8")
    with pytest.raises(CommandNotAllowedError):
        admit("make lint", task, repo)


def test_an_empty_allowlist_refuses_everything_and_says_so(tmp_path: Path) -> None:
    task = compile_task("Fix the parser", tmp_path)
    with pytest.raises(CommandNotAllowedError) as raised:
        admit("pytest", task, tmp_path)
    assert "(none)" in raised.value.hint


def test_an_existing_pytest_argument_file_is_not_a_test_path(task: TaskIR, repo: Path) -> None:
    (repo / "@args.txt").write_text("-p evil_plugin\n", encoding="utf-8")
    with pytest.raises(CommandNotAllowedError):
        admit("pytest @args.txt", task, repo)


def test_a_nul_byte_in_a_test_path_is_refused(task: TaskIR, repo: Path) -> None:
    with pytest.raises(CommandNotAllowedError):
        admit("pytest 'tests/test_a.py\x00'", task, repo)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=300)
@given(
    st.lists(
        st.sampled_from(["pytest", "python", "-m", "-q", "-k", "tests", "..", "'", "a\x00"])
        | st.text(max_size=12),
        max_size=6,
    )
)
def test_admission_either_admits_an_allowlisted_run_or_refuses(
    task: TaskIR, repo: Path, words: list[str]
) -> None:
    command = " ".join(words)
    try:
        admitted = admit(command, task, repo)
    except CommandNotAllowedError:
        return
    allowed = {entry.argv for entry in task.allowed_verification_commands}
    assert (
        admitted.argv in allowed
        or admitted.argv[:1] == ("pytest",)
        or (admitted.argv[:3] == ("python", "-m", "pytest"))
    )
