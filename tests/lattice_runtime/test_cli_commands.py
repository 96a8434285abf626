"""The ``lattice`` commands through typer's runner, on real fixture repositories."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from lattice_runtime.cli import app
from tests.lattice_runtime.fixture_repos import FIXTURES, PY_GOAL, make_repo, pytest_exit

TASK = str(FIXTURES / "reset-token-py" / "task.json")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_lattice_run_json_reports_a_passed_run_and_applies_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    code, out, _ = invoke(
        "run", PY_GOAL, "--worker", "mock", "--script", TASK, "--repo", str(repo), "--json"
    )
    assert code == 0, out
    report = json.loads(out)
    assert report["state"] == "PASSED" and report["applied"] is True
    assert report["task"]["schemaVersion"] == 2
    assert report["transitions"][0] == {**report["transitions"][0], "from": "CREATED"}
    assert pytest_exit(repo) == 0


def test_lattice_run_no_apply_prints_the_diff_and_status(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    code, out, err = invoke("run", PY_GOAL, "--script", TASK, "--repo", str(repo), "--no-apply")
    assert code == 0, out + err
    assert "+        self._tokens.mark_consumed(token.value)" in out
    assert out.rstrip().endswith("Status: passed")
    assert "VERIFYING" in err  # progress goes to stderr
    assert pytest_exit(repo) == 1  # nothing applied


def test_a_failed_run_exits_1(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    script = tmp_path / "task.json"
    script.write_text(json.dumps({"goal": PY_GOAL, "mock": ["{", "{"]}))
    code, out, _ = invoke("run", PY_GOAL, "--script", str(script), "--repo", str(repo))
    assert code == 1
    assert out.rstrip().endswith("Status: failed")


def test_the_mock_worker_without_a_script_is_a_clear_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    code, _, err = invoke("run", PY_GOAL, "--worker", "mock", "--repo", str(repo))
    assert code == 2
    assert "error [lattice.worker]" in err and "--script" in err


def test_lattice_benchmark_shows_the_baseline_failing_and_ends_passed() -> None:
    code, out, err = invoke("benchmark", "--worker", "mock")
    assert code == 0, out + err
    assert "Baseline: python -m pytest" in out and "exit 1" in out
    assert out.rstrip().splitlines()[-1] == "Status: passed"


def test_lattice_benchmark_json_has_phase_timings(tmp_path: Path) -> None:
    code, out, _ = invoke(
        "benchmark", "--fixture", "reset-token-js", "--workdir", str(tmp_path), "--json"
    )
    assert code == 0, out
    report = json.loads(out)
    assert report["status"] == "passed" and report["baselineFailed"] is True
    assert {"index", "grant", "transaction"} <= set(report["phases"])


def test_an_unknown_fixture_is_a_clear_error() -> None:
    code, _, err = invoke("benchmark", "--fixture", "no-such-fixture")
    assert code == 2
    assert "error [lattice.task_invalid]" in err


def test_sessions_are_made_shown_and_reset(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    code, out, _ = invoke("session", "new", "--repo", str(repo), "--json")
    assert code == 0
    session = json.loads(out)
    assert session["epoch"] == 1
    invoke("run", PY_GOAL, "--script", TASK, "--repo", str(repo), "--no-apply")
    code, out, _ = invoke("session", "show", "--repo", str(repo), "--json")
    shown = json.loads(out)
    assert shown["id"] == session["id"] and len(shown["runs"]) == 1
    assert list(shown["runStates"].values()) == ["PASSED"]
    assert shown["riskFloor"] == "high"  # the goal names a password
    code, out, _ = invoke("session", "reset", "--repo", str(repo), "--json")
    assert json.loads(out)["epoch"] == 2
    code, out, _ = invoke("session", "show", session["id"], "--repo", str(repo))
    assert "Epoch: 2" in out


def test_session_show_without_a_session_is_a_clear_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    code, _, err = invoke("session", "show", "--repo", str(repo))
    assert code == 2
    assert "lattice.session_not_found" in err


def test_doctor_passes_on_a_repository_and_fails_outside_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    code, out, _ = invoke("doctor", "--repo", str(repo), "--json")
    assert code == 0, out
    checks = {c["name"]: c for c in json.loads(out)}
    assert "python -m pytest" in checks["verification allowlist"]["detail"]
    outside = tmp_path / "plain"
    outside.mkdir()
    code, out, _ = invoke("doctor", "--repo", str(outside))
    assert code == 1
    assert "FAIL repository" in out


def test_an_invalid_setting_is_a_clear_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    result = CliRunner().invoke(
        app,
        ["run", PY_GOAL, "--script", TASK, "--repo", str(repo)],
        env={"LATTICE_COMMAND_TIMEOUT_SECONDS": "-1"},
    )
    assert result.exit_code == 2
    assert "error [lattice.config_invalid]" in result.stderr
    assert not (repo / ".lattice" / "runs").exists()


def test_the_keyword_only_kernel_runs_the_fixture_too(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    code, out, _ = invoke(
        "run", PY_GOAL, "--script", TASK, "--repo", str(repo), "--embedder", "off", "--json"
    )
    assert code == 0, out


def test_lattice_run_cache_reuses_a_verified_patch_only_when_asked(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    args = ["run", PY_GOAL, "--script", TASK, "--repo", str(repo), "--no-apply", "--json"]
    code, out, _ = invoke(*args, "--cache")
    assert code == 0, out
    code, out, _ = invoke(*args)
    assert [t["to"] for t in json.loads(out)["transitions"]][3] == "WORKER_RUNNING"
    code, out, _ = invoke(*args, "--cache")
    assert code == 0, out
    assert [t["to"] for t in json.loads(out)["transitions"]][2:4] == [
        "CONTEXT_GRANTED",
        "PATCH_LOWERED",
    ]


def test_lattice_run_records_its_steps_in_the_session_journal(tmp_path: Path) -> None:
    from lattice_runtime.session import Journal, SessionStore

    repo = make_repo(tmp_path)
    code, out, _ = invoke("run", PY_GOAL, "--script", TASK, "--repo", str(repo), "--json")
    assert code == 0, out
    session = SessionStore(repo).current(create=False).id
    kinds = [entry.payload.KIND for entry in Journal(repo).entries(session)]
    assert kinds[0] == "task_accepted"
    assert {"grant_issued", "patch_proposed", "verification_outcome"} <= set(kinds)


def test_lattice_run_with_control_off_writes_no_journal(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    result = CliRunner().invoke(
        app,
        ["run", PY_GOAL, "--script", TASK, "--repo", str(repo), "--json"],
        env={"LATTICE_CONTROL": "off"},
    )
    assert result.exit_code == 0, result.stdout
    assert not (repo / ".lattice" / "journal").exists()
