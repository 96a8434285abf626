"""The command worker: real agent programs (small Python scripts), honest and hostile."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lattice_runtime.cli import app
from lattice_runtime.compile import compile_task
from lattice_runtime.errors import WorkerError
from lattice_runtime.machine import RunOptions, RunState, run_task
from lattice_runtime.workers import (
    CommandWorker,
    GrantedPage,
    MapEntry,
    WorkerTurn,
    turn_request,
    worker_environment,
)
from tests.lattice_runtime.fixture_repos import FIXTURES, PY_GOAL, SERVICE, make_repo, pytest_exit
from tests.lattice_runtime.verify_support import exits_within

TASK_FILE = FIXTURES / "reset-token-py" / "task.json"
EXAMPLE_AGENT = FIXTURES.parent / "bench" / "agents" / "fixture_agent.py"

# An honest agent: answers the fixture's scripted patch, resolving "@path:" to the handle the
# runtime granted for that file, or asks for the file when no page covers it yet.
HONEST = """
import json, sys
turn = json.load(sys.stdin)
answer = json.load(open(sys.argv[1]))["mock"][0]
pages = sorted(turn["pages"], key=lambda p: not p["permissions"])
missing = []
def resolve(value):
    if isinstance(value, str) and value.startswith("@path:"):
        path = value[len("@path:"):]
        for page in pages:
            if page["path"] == path and "editHandle" in page:
                return page["editHandle"]
        missing.append(path)
        return value
    if isinstance(value, list):
        return [resolve(v) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v) for k, v in value.items()}
    return value
resolved = resolve(answer)
if missing:
    requests = [{"reason": "the file to change", "pathHint": p} for p in missing]
    resolved = {"kind": "context_request", "requests": requests}
print(json.dumps(resolved))
"""

HANGS = "import sys, time\nsys.stdin.read()\ntime.sleep(3600)\n"
FLOODS = "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n"
PRINTS_ENV = "import json, os, sys\nsys.stdin.read()\nprint(json.dumps(dict(os.environ)))\n"
EXITS_3 = "import sys\nsys.stdin.read()\nsys.stderr.write('model quota exceeded')\nsys.exit(3)\n"
NOT_UTF8 = "import sys\nsys.stdin.read()\nsys.stdout.buffer.write(b'{\\xff\\xfe}')\n"
ECHOES = "import sys\nopen(sys.argv[1], 'w').write(sys.stdin.read())\nsys.exit(3)\n"
# Writes to the file it is about to patch, then answers honestly (exec'd after the write).
WRITES_REPO = (
    "import pathlib\n"
    "path = pathlib.Path('src/resetkit/service.py')\n"
    "path.write_text(path.read_text() + '\\n# written by the agent\\n')\n"
)


def agent(tmp_path: Path, name: str, source: str, *args: str) -> list[str]:
    script = tmp_path / f"{name}.py"
    script.write_text(source)
    return [sys.executable, str(script), *args]


def worker(argv: list[str], repo: Path, **kwargs: object) -> CommandWorker:
    return CommandWorker(argv, cwd=repo, **kwargs)  # type: ignore[arg-type]  # test limits


def a_turn(root: Path, **fields: object) -> WorkerTurn:
    turn = WorkerTurn(1, "initial", "the prompt", compile_task("Fix the typo", root), pages=())
    return replace(turn, **fields)  # type: ignore[arg-type]  # test fields


def test_an_honest_agent_program_passes_the_python_fixture_end_to_end(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    honest = worker(agent(tmp_path, "honest", HONEST, str(TASK_FILE)), repo)
    outcome = run_task(repo, RunOptions(goal=PY_GOAL), honest)
    assert outcome.state is RunState.PASSED, outcome.reason
    assert outcome.applied
    assert pytest_exit(repo) == 0
    assert honest.name == "command"


def test_the_turn_reaches_the_agent_as_one_json_object_of_the_documented_shape(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    seen = tmp_path / "stdin.json"
    echo = worker(agent(tmp_path, "echo", ECHOES, str(seen)), repo)
    outcome = run_task(repo, RunOptions(goal=PY_GOAL, apply=False), echo)
    assert outcome.state is RunState.FAILED
    request = json.loads(seen.read_text())
    assert list(request) == ["protocolVersion", "kind", "task", "pages", "repositoryMap", "prompt"]
    assert request["protocolVersion"] == 5
    assert request["kind"] == "initial"
    assert request["task"] == outcome.task.to_wire()
    assert request["pages"], "the initial grant has pages"
    for page in request["pages"]:
        assert set(page) - {"symbol"} == {
            "editHandle",
            "path",
            "startLine",
            "endLine",
            "permissions",
            "content",
        }
        assert page["editHandle"].startswith("E")
        assert isinstance(page["startLine"], int) and page["startLine"] <= page["endLine"]
        assert page["content"] in request["prompt"]
    for entry in request["repositoryMap"]:
        assert isinstance(entry[0], str) and isinstance(entry[1], list)
    assert "protocol version 5" in request["prompt"].lower() or "E1" in request["prompt"]


def test_an_agent_that_hangs_is_killed_at_the_turn_deadline_and_the_run_fails(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    hangs = worker(agent(tmp_path, "hangs", HANGS), repo, turn_timeout_seconds=1.0)
    outcome = run_task(repo, RunOptions(goal=PY_GOAL), hangs)
    assert outcome.state is RunState.FAILED
    assert "lattice.worker" in outcome.reason
    assert "turn deadline" in outcome.reason


def test_an_agent_that_floods_stdout_is_killed_at_the_output_limit(tmp_path: Path) -> None:
    floods = worker(agent(tmp_path, "floods", FLOODS), tmp_path, max_output_bytes=200_000)
    with pytest.raises(WorkerError, match="more than 200000 bytes"):
        floods.respond(a_turn(tmp_path))


def test_secrets_in_the_environment_never_reach_the_agent_unless_allowlisted(
    tmp_path: Path,
) -> None:
    base = {"PATH": "/usr/bin:/bin", "FAKE_API_KEY": "sk-secret", "GITHUB_TOKEN": "ghp_x"}
    argv = agent(tmp_path, "env", PRINTS_ENV)
    seen = json.loads(worker(argv, tmp_path, base_env=base).respond(a_turn(tmp_path)))
    assert "FAKE_API_KEY" not in seen and "GITHUB_TOKEN" not in seen
    assert seen["PATH"] == "/usr/bin:/bin"
    assert seen["LATTICE_TURN"] == "1" and seen["LATTICE_PROTOCOL_VERSION"] == "5"
    allowed = worker(argv, tmp_path, base_env=base, env_allowlist={"PATH", "FAKE_API_KEY"})
    assert json.loads(allowed.respond(a_turn(tmp_path)))["FAKE_API_KEY"] == "sk-secret"


def test_the_turn_markers_cannot_be_overridden_from_the_environment() -> None:
    base = {"LATTICE_TURN": "99", "LATTICE_PROTOCOL_VERSION": "1"}
    env = worker_environment(base, {"LATTICE_TURN", "LATTICE_PROTOCOL_VERSION"}, 2)
    assert env == {"LATTICE_TURN": "2", "LATTICE_PROTOCOL_VERSION": "5"}


def test_an_agent_that_exits_non_zero_fails_the_turn_with_its_code_and_stderr(
    tmp_path: Path,
) -> None:
    exits = worker(agent(tmp_path, "exits", EXITS_3), tmp_path)
    with pytest.raises(WorkerError, match=r"exited with code 3.*model quota exceeded"):
        exits.respond(a_turn(tmp_path))


def test_an_answer_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    bad = worker(agent(tmp_path, "bad", NOT_UTF8), tmp_path)
    with pytest.raises(WorkerError, match="not UTF-8"):
        bad.respond(a_turn(tmp_path))


def test_a_program_that_cannot_start_is_a_worker_error(tmp_path: Path) -> None:
    missing = worker([str(tmp_path / "no-such-agent")], tmp_path)
    with pytest.raises(WorkerError, match="cannot start"):
        missing.respond(a_turn(tmp_path))


def test_an_empty_or_unbalanced_command_line_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WorkerError, match="needs a program"):
        CommandWorker.from_command_line("   ", cwd=tmp_path)
    with pytest.raises(WorkerError, match="cannot split"):
        CommandWorker.from_command_line("agent 'unclosed", cwd=tmp_path)
    split = CommandWorker.from_command_line("my-agent --model 'a b'", cwd=tmp_path)
    assert split.argv == ("my-agent", "--model", "a b")


def test_an_agent_that_writes_the_repository_during_its_turn_fails_and_nothing_is_applied(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    source = WRITES_REPO + HONEST
    writes = worker(agent(tmp_path, "writes", source, str(TASK_FILE)), repo)
    outcome = run_task(repo, RunOptions(goal=PY_GOAL), writes)
    assert outcome.state is RunState.FAILED, outcome.reason
    assert "lattice.worker" in outcome.reason
    assert "working tree changed" in outcome.reason
    assert not outcome.applied
    text = (repo / SERVICE).read_text()
    assert text.endswith("# written by the agent\n")
    assert "mark_consumed(token.value)" not in text
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    )
    assert status.stdout.split() == ["M", SERVICE]


def test_a_write_to_a_file_no_page_covers_is_caught_too(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "notes.txt").write_text("the user's own uncommitted note\n")
    sneaky = "import pathlib\npathlib.Path('notes.txt').write_text('changed by the agent\\n')\n"
    argv = agent(tmp_path, "sneaky", sneaky + HONEST, str(TASK_FILE))
    with pytest.raises(WorkerError, match="working tree changed"):
        worker(argv, repo).respond(a_turn(repo))
    honest = worker(agent(tmp_path, "honest", HONEST, str(TASK_FILE)), repo)
    assert json.loads(honest.respond(a_turn(repo)))["kind"] == "context_request"


def test_a_revision_turn_carries_its_feedback_and_pages_carry_symbols_when_known(
    tmp_path: Path,
) -> None:
    page = GrantedPage("p1", "src/a.py", (3, 9), "E2", ("replace_text",), False, "run", "x = 1\n")
    read_only = GrantedPage("p2", "README.md", (1, 2), "E3", (), True, None, "hi\n")
    turn = a_turn(
        tmp_path,
        number=3,
        kind="patch_revision",
        pages=(page, read_only),
        repo_map=(MapEntry("src/b.py", ("main", "helper")),),
        feedback="replacement_outside_grant: E2",
    )
    request = turn_request(turn)
    assert request["pages"] == [
        {
            "editHandle": "E2",
            "path": "src/a.py",
            "symbol": "run",
            "startLine": 3,
            "endLine": 9,
            "permissions": ["replace_text"],
            "content": "x = 1\n",
        },
        {
            "editHandle": "E3",
            "path": "README.md",
            "startLine": 1,
            "endLine": 2,
            "permissions": [],
            "content": "hi\n",
        },
    ]
    assert request["repositoryMap"] == [["src/b.py", ["main", "helper"]]]
    assert request["feedback"] == {
        "kind": "patch_revision",
        "message": "replacement_outside_grant: E2",
    }
    assert request["prompt"] == "the prompt"
    assert json.loads(json.dumps(request)) == request


def test_lattice_run_drives_an_agent_command_and_passes_only_allowlisted_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path)
    monkeypatch.setenv("AGENT_MODEL", "m1")
    monkeypatch.setenv("FAKE_API_KEY", "sk-secret")
    guard = "import os\nassert os.environ['AGENT_MODEL'] == 'm1'\n"
    guard += "assert 'FAKE_API_KEY' not in os.environ\n"
    argv = agent(tmp_path, "cli-agent", guard + HONEST, str(TASK_FILE))
    args = ["run", PY_GOAL, "--worker", "command", "--worker-command", shlex.join(argv)]
    args += ["--worker-env", "AGENT_MODEL", "--turn-timeout", "60", "--repo", str(repo), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["state"] == "PASSED"
    assert pytest_exit(repo) == 0


def test_lattice_run_with_the_command_worker_and_no_command_is_an_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    result = CliRunner().invoke(app, ["run", PY_GOAL, "--worker", "command", "--repo", str(repo)])
    assert result.exit_code == 2
    assert "--worker-command" in result.stderr


def test_a_patch_revision_turn_reaches_the_program_and_lets_it_recover(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    sloppy = [sys.executable, str(EXAMPLE_AGENT), "--sloppy"]
    outcome = run_task(repo, RunOptions(goal=PY_GOAL), worker(sloppy, repo))
    assert outcome.state is RunState.PASSED, outcome.reason
    kinds = [t.reason for t in outcome.record.transitions if t.to_state.value == "WORKER_RUNNING"]
    assert kinds == ["turn 1 (initial)", "turn 2 (patch_revision)"]
    assert pytest_exit(repo) == 0


def test_a_large_turn_to_an_agent_that_never_reads_stdin_does_not_block(tmp_path: Path) -> None:
    answers = worker(agent(tmp_path, "ignores", "print('{}')\n"), tmp_path)
    assert answers.respond(a_turn(tmp_path, prompt="x" * 2_000_000)).strip() == "{}"


def test_a_process_the_agent_leaves_behind_is_killed_with_its_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    source = (
        "import subprocess, sys\nsys.stdin.read()\n"
        "child = subprocess.Popen(['sleep', '3600'], stdout=subprocess.DEVNULL,"
        " stderr=subprocess.DEVNULL)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\nprint('{{}}')\n"
    )
    assert worker(agent(tmp_path, "leaves", source), tmp_path).respond(a_turn(tmp_path))
    assert exits_within(int(pid_file.read_text()), seconds=10)
