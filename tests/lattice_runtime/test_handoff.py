"""The manual worker: a run that waits in files, validated and continued from the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from lattice_runtime.cli import app
from lattice_runtime.machine import RunState, load_run
from tests.lattice_runtime.fixture_repos import PY_GOAL, fixture_script, make_repo, pytest_exit


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def start(repo: Path) -> dict[str, str]:
    code, out, err = invoke("run", PY_GOAL, "--worker", "manual", "--repo", str(repo), "--json")
    assert code == 0, out + err
    started = json.loads(out)
    assert started["status"] == "waiting"
    return started


def answer_with_handles(request: dict[str, object], script_item: object) -> str:
    handles = {}
    for page in request["pages"]:  # type: ignore[attr-defined]
        if page.get("editHandle") and page["permissions"]:
            handles.setdefault(page["path"], page["editHandle"])
    text = json.dumps(script_item)
    for path, handle in handles.items():
        text = text.replace(f"@path:{path}", handle)
    return text


def test_a_manual_run_writes_a_request_and_waits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    started = start(repo)
    request = json.loads(Path(started["request"]).read_text())
    assert request["protocolVersion"] == 5 and request["kind"] == "initial"
    assert request["task"]["goal"] == PY_GOAL and request["task"]["acceptanceCriteria"]
    assert any(page.get("editHandle") for page in request["pages"])
    assert request["responseSchema"] and len(request["examples"]) == 2
    assert request["respondIn"] == "response.json"
    assert load_run(repo, started["runId"]).state is RunState.WORKER_RUNNING


def test_validate_without_an_answer_says_where_to_write_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    started = start(repo)
    code, _, err = invoke("handoff", "validate", started["taskId"], "--repo", str(repo))
    assert code == 2
    assert "error [lattice.worker]" in err and "response.json" in err


def test_a_refused_answer_is_reported_and_changes_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    started = start(repo)
    request = json.loads(Path(started["request"]).read_text())
    test_handle = next(p["editHandle"] for p in request["pages"] if p["path"].startswith("tests/"))
    edit = {
        "kind": "patch",
        "patch": {
            "summary": "weaken the test",
            "changes": [
                {
                    "editHandle": test_handle,
                    "operation": "replace_text",
                    "replacements": [{"oldContent": "import pytest\n", "newContent": "\n"}],
                }
            ],
            "verificationCommands": [],
        },
    }
    Path(started["respondIn"]).write_text(json.dumps(edit))
    registry = next((repo / ".lattice" / "grants").iterdir())
    before = registry.read_bytes()
    code, out, _ = invoke("handoff", "validate", started["taskId"], "--repo", str(repo), "--json")
    assert code == 1
    assert json.loads(out)["reason"] == "permission_denied"
    assert registry.read_bytes() == before
    assert load_run(repo, started["runId"]).state is RunState.WORKER_RUNNING


def test_a_valid_answer_validates_then_continues_to_a_passed_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    started = start(repo)
    request = json.loads(Path(started["request"]).read_text())
    Path(started["respondIn"]).write_text(answer_with_handles(request, fixture_script()[0]))
    code, out, _ = invoke("handoff", "validate", started["taskId"], "--repo", str(repo))
    assert code == 0 and out.startswith("valid patch: lowers cleanly: modify src/resetkit/")
    code, out, err = invoke("continue", started["taskId"], "--repo", str(repo))
    assert code == 0, out + err
    assert out.rstrip().endswith("Status: passed")
    assert pytest_exit(repo) == 0
    assert load_run(repo, started["runId"]).state is RunState.PASSED


def test_a_context_request_answer_leads_to_a_numbered_second_request(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    started = start(repo)
    ask = {"kind": "context_request", "requests": [{"reason": "audit", "symbol": "AuditLog"}]}
    Path(started["respondIn"]).write_text(json.dumps(ask))
    code, out, _ = invoke("continue", started["taskId"], "--repo", str(repo), "--json")
    assert code == 0, out
    second = json.loads(out)
    assert second["request"].endswith("request-2.json")
    assert second["respondIn"].endswith("response-2.json")
    request = json.loads(Path(second["request"]).read_text())
    assert request["kind"] == "context_fault"
    Path(second["respondIn"]).write_text(answer_with_handles(request, fixture_script()[0]))
    code, out, _ = invoke("continue", started["taskId"], "--repo", str(repo))
    assert code == 0, out
    record = load_run(repo, started["runId"])
    assert record.state is RunState.PASSED
    assert record.telemetry.context_faults == 1


def test_an_unknown_or_malformed_task_id_is_a_clear_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    code, _, err = invoke("continue", "task-000000000000", "--repo", str(repo))
    assert code == 2 and "lattice.session_not_found" in err
    code, _, err = invoke("handoff", "validate", "../../etc", "--repo", str(repo))
    assert code == 2 and "not a task id" in err
