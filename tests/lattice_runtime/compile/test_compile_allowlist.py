import json
import os
from pathlib import Path

import pytest

from lattice_runtime.compile import (
    VerificationCommand,
    compile_task,
    default_commands,
    discover_allowlist,
    is_verification_name,
)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def displays(root: Path) -> list[str]:
    return [command.display for command in discover_allowlist(root)]


def test_an_empty_directory_allows_nothing(tmp_path: Path) -> None:
    assert discover_allowlist(tmp_path) == ()


def test_a_test_file_anywhere_makes_the_pytest_family_allowed(tmp_path: Path) -> None:
    write(tmp_path, {"pkg/deep/test_thing.py": "def test_x():\n    pass\n"})
    assert discover_allowlist(tmp_path) == (
        VerificationCommand(("pytest",), "builtin"),
        VerificationCommand(("python", "-m", "pytest"), "builtin"),
    )


@pytest.mark.parametrize(
    "marker", ["pyproject.toml", "setup.cfg", "setup.py", "pytest.ini", "conftest.py", "tox.ini"]
)
def test_a_python_project_file_makes_the_pytest_family_allowed(tmp_path: Path, marker: str) -> None:
    write(tmp_path, {marker: ""})
    assert displays(tmp_path)[:2] == ["pytest", "python -m pytest"]


def test_test_files_in_hidden_and_dependency_directories_are_ignored(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".venv/lib/test_site.py": "",
            "node_modules/pkg/test_x.py": "",
            "dist/test_built.py": "",
        },
    )
    assert discover_allowlist(tmp_path) == ()


def test_ruff_and_mypy_are_allowed_when_pyproject_configures_them(tmp_path: Path) -> None:
    write(
        tmp_path, {"pyproject.toml": "[tool.ruff]\nline-length = 100\n[tool.mypy]\nstrict = true\n"}
    )
    assert displays(tmp_path) == ["pytest", "python -m pytest", "ruff check", "mypy"]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"pyproject.toml": "[tool.mypy]\n"}, ["pytest", "python -m pytest", "mypy"]),
        ({"pyproject.toml": "[tool.black]\n"}, ["pytest", "python -m pytest"]),
        ({"ruff.toml": "line-length = 90\n"}, ["ruff check"]),
        ({".ruff.toml": ""}, ["ruff check"]),
        ({"mypy.ini": "[mypy]\n"}, ["mypy"]),
        ({"setup.cfg": "[mypy]\nstrict = True\n"}, ["pytest", "python -m pytest", "mypy"]),
        ({"setup.cfg": "[metadata]\nname = x\n"}, ["pytest", "python -m pytest"]),
    ],
)
def test_ruff_and_mypy_config_files_are_recognised(
    tmp_path: Path, files: dict[str, str], expected: list[str]
) -> None:
    write(tmp_path, files)
    assert displays(tmp_path) == expected


def test_makefile_targets_are_allowed_only_when_defined(tmp_path: Path) -> None:
    makefile = (
        ".PHONY: test lint build serve\n"
        "PYTHON := python3\n"
        "CHECK ::= nothing\n"
        "test lint: deps\n"
        "\tpytest\n"
        "serve:\n"
        "\tbuild: not a target, a recipe line\n"
        "typecheck::\n"
        "\tmypy .\n"
    )
    write(tmp_path, {"Makefile": makefile})
    assert discover_allowlist(tmp_path) == (
        VerificationCommand(("make", "lint"), "Makefile"),
        VerificationCommand(("make", "test"), "Makefile"),
        VerificationCommand(("make", "typecheck"), "Makefile"),
    )


def test_a_makefile_without_verification_targets_allows_nothing(tmp_path: Path) -> None:
    write(tmp_path, {"Makefile": "all:\n\techo hi\nrun:\n\t./app\n"})
    assert discover_allowlist(tmp_path) == ()


def test_package_json_scripts_and_the_npm_family_are_allowed(tmp_path: Path) -> None:
    package = {
        "scripts": {
            "test": "vitest run",
            "test:watch": "vitest",
            "test:unit": "vitest run unit",
            "test-ui": "vitest --ui",
            "dev": "vite",
            "start": "node server.js",
            "lint": "eslint .",
            "lint:fix": "eslint . --fix",
            "build": "tsc -b",
            "typecheck": "tsc --noEmit --watch",
            "check": 42,
        },
        "devDependencies": {"vitest": "^1.0.0"},
    }
    write(tmp_path, {"package.json": json.dumps(package), "tsconfig.json": "{}"})
    assert displays(tmp_path) == [
        "npx tsc --noEmit",
        "npx vitest run",
        "npm run build",
        "npm run lint",
        "npm run test",
        "npm run test:unit",
        "npm test",
    ]


def test_npx_commands_need_a_package_json(tmp_path: Path) -> None:
    write(tmp_path, {"tsconfig.json": "{}"})
    assert discover_allowlist(tmp_path) == ()


def test_a_broken_package_json_contributes_nothing(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": "{not json", "Makefile": "test:\n\ttrue\n"})
    assert displays(tmp_path) == ["make test"]


def test_pyproject_task_runners_contribute_their_verification_tasks(tmp_path: Path) -> None:
    pyproject = """
[tool.poe.tasks]
test = "pytest"
lint = "ruff check ."
serve = "uvicorn app:app"
"test:debug" = "pytest --pdb"

[tool.pdm.scripts]
_ = {env_file = ".env"}
typecheck = "mypy ."
start = "flask run"

[tool.hatch.envs.default.scripts]
test = "pytest {args}"
[tool.hatch.envs.lint.scripts]
check = "ruff check ."
dev-check = "ruff check --watch"

[tool.taskipy.tasks]
build = "python -m build"
"""
    write(tmp_path, {"pyproject.toml": pyproject})
    assert displays(tmp_path) == [
        "pytest",
        "python -m pytest",
        "hatch run lint:check",
        "hatch run test",
        "pdm run typecheck",
        "poe lint",
        "poe test",
        "task build",
    ]


def test_a_broken_pyproject_still_marks_a_python_repository(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[tool.ruff\n"})
    assert displays(tmp_path) == ["pytest", "python -m pytest"]


def test_tox_envs_come_from_envlist_and_testenv_sections(tmp_path: Path) -> None:
    tox = (
        "[tox]\n"
        "envlist = py3{11,12}, lint,\n"
        "    docs, dev\n"
        "[testenv]\ncommands = pytest\n"
        "[testenv:typecheck]\ncommands = mypy\n"
        "[testenv:docs-serve]\ncommands = sphinx-autobuild\n"
        "[testenv:pypy3-py312]\ncommands = pytest\n"
    )
    write(tmp_path, {"tox.ini": tox})
    assert displays(tmp_path)[2:] == [
        "tox -e lint",
        "tox -e py311",
        "tox -e py312",
        "tox -e pypy3-py312",
        "tox -e typecheck",
    ]


def test_nox_sessions_are_read_from_the_syntax_tree_without_importing(tmp_path: Path) -> None:
    noxfile = (
        "import nox\n"
        "from nox import session\n"
        "raise SystemExit('a noxfile must never be imported')\n"
        "@nox.session(python=['3.11', '3.12'])\n"
        "def tests(session):\n    session.run('pytest')\n"
        "@nox.session\n"
        "def lint(session):\n    pass\n"
        "@session(name='typecheck')\n"
        "def mypy_session(session):\n    pass\n"
        "@nox.session\n"
        "def docs_serve(session):\n    pass\n"
        "def test_helper():\n    pass\n"
    )
    write(tmp_path, {"noxfile.py": noxfile})
    assert displays(tmp_path) == [
        "nox -s lint",
        "nox -s tests",
        "nox -s typecheck",
    ]


def test_a_noxfile_with_a_syntax_error_contributes_nothing(tmp_path: Path) -> None:
    write(tmp_path, {"noxfile.py": "@nox.session\ndef tests(:\n"})
    assert discover_allowlist(tmp_path) == ()


def test_builtins_come_first_then_entries_by_origin_and_name(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tests/test_a.py": "",
            "Makefile": "test:\n\tpytest\nbuild:\n\ttrue\n",
            "tox.ini": "[tox]\nenvlist = lint\n",
            "noxfile.py": "import nox\n@nox.session\ndef tests(s):\n    pass\n",
            "package.json": json.dumps({"scripts": {"test": "node --test"}}),
        },
    )
    commands = discover_allowlist(tmp_path)
    assert [c.origin for c in commands] == [
        "builtin",
        "builtin",
        "Makefile",
        "Makefile",
        "noxfile.py",
        "package.json",
        "package.json",
        "tox.ini",
    ]
    assert [c.display for c in commands][2:4] == ["make build", "make test"]
    assert discover_allowlist(tmp_path) == commands


def test_a_config_symlink_leading_out_of_the_repository_is_not_read(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", {"Makefile": "test:\n\ttrue\n"})
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink(outside / "Makefile", repo / "Makefile")
    assert discover_allowlist(repo) == ()


@pytest.mark.parametrize(
    ("name", "allowed"),
    [
        ("test", True),
        ("tests", True),
        ("test:unit", True),
        ("test-e2e", True),
        ("check", True),
        ("lint", True),
        ("typecheck", True),
        ("build", True),
        ("test:watch", False),
        ("test-ui", False),
        ("test_debug", False),
        ("dev", False),
        ("serve", False),
        ("start", False),
        ("open", False),
        ("build:dev", False),
        ("lint:fix", False),
        ("format", False),
        ("Test", False),
        ("test;rm", False),
        ("test devtools", False),
        ("test:devtools", True),
    ],
)
def test_verification_names_follow_the_name_rule(name: str, allowed: bool) -> None:
    assert is_verification_name(name) is allowed


def test_default_commands_prefer_quiet_python_pytest(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"tests/test_a.py": "", "package.json": json.dumps({"scripts": {"test": "jest"}})},
    )
    task = compile_task("Fix the parser", tmp_path)
    assert default_commands(task) == (VerificationCommand(("python", "-m", "pytest", "-q")),)


def test_default_commands_use_npm_test_for_a_javascript_repository(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": json.dumps({"scripts": {"lint": "x", "test": "node --test"}})})
    task = compile_task("Fix the parser", tmp_path)
    assert default_commands(task) == (VerificationCommand(("npm", "test"), "package.json"),)


def test_default_commands_fall_back_to_the_first_entry_or_nothing(tmp_path: Path) -> None:
    write(tmp_path / "make", {"Makefile": "check:\n\ttrue\nbuild:\n\ttrue\n"})
    task = compile_task("Fix the parser", tmp_path / "make")
    assert default_commands(task) == (VerificationCommand(("make", "build"), "Makefile"),)
    (tmp_path / "empty").mkdir()
    assert default_commands(compile_task("Fix the parser", tmp_path / "empty")) == ()


def test_an_oversized_config_file_is_not_read(tmp_path: Path) -> None:
    write(tmp_path, {"Makefile": "test:\n\ttrue\n" + "# padding\n" * 120_000})
    assert discover_allowlist(tmp_path) == ()


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"tox.ini": "[tox]\nenvlist = lint\n[tox]\n  = broken"}, ["pytest", "python -m pytest"]),
        ({"package.json": "[1, 2]"}, []),
        (
            {"pyproject.toml": '[tool.hatch.envs."a b".scripts]\ntest = "pytest"\n'},
            ["pytest", "python -m pytest"],
        ),
    ],
)
def test_malformed_sources_only_ever_remove_commands(
    tmp_path: Path, files: dict[str, str], expected: list[str]
) -> None:
    write(tmp_path, files)
    assert displays(tmp_path) == expected


def test_a_generative_tox_envlist_is_expanded_up_to_a_cap(tmp_path: Path) -> None:
    versions = ",".join(str(n) for n in range(300))
    write(tmp_path, {"tox.ini": f"[tox]\nenvlist = py3{{{versions}}}\n"})
    tox = [d for d in displays(tmp_path) if d.startswith("tox")]
    assert len(tox) == 256


def test_a_config_file_that_is_not_utf8_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_bytes(b"test:\n\t\xff\xfe\n")
    assert discover_allowlist(tmp_path) == ()
