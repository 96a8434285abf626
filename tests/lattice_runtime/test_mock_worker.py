"""The mock worker: scripted answers, handle placeholders, asking for files it lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lattice_runtime.compile import TaskIR
from lattice_runtime.errors import WorkerError
from lattice_runtime.protocol import ContextRequest, PatchProposal, ReplaceText, parse_response
from lattice_runtime.workers import GrantedPage, MockWorker, WorkerTurn

PATCH = {
    "kind": "patch",
    "patch": {
        "summary": "s",
        "changes": [
            {
                "editHandle": "@path:src/a.py",
                "operation": "replace_text",
                "replacements": [{"oldContent": "x", "newContent": "y"}],
            }
        ],
        "verificationCommands": [],
    },
}


TASK = TaskIR(id="task-000000000000", goal="g")


def turn(number: int, *pages: GrantedPage) -> WorkerTurn:
    return WorkerTurn(number=number, kind="initial", prompt="p", task=TASK, pages=pages)


def page(path: str, handle: str, *, whole: bool, operations: tuple[str, ...]) -> GrantedPage:
    return GrantedPage(f"file:{path}:0", path, (1, 3), handle, operations, whole)


def test_a_placeholder_becomes_the_whole_file_handle_of_its_path() -> None:
    worker = MockWorker([PATCH])
    pages = (
        page("src/a.py", "E1", whole=False, operations=("replace_text",)),
        page("src/a.py", "E2", whole=True, operations=("replace_text", "replace_file")),
        page("src/b.py", "E3", whole=True, operations=("replace_text",)),
    )
    response = parse_response(worker.respond(turn(1, *pages))).response
    assert isinstance(response, PatchProposal)
    change = response.changes[0]
    assert isinstance(change, ReplaceText) and change.edit_handle == "E2"


def test_a_file_without_a_handle_is_asked_for_and_the_answer_waits() -> None:
    worker = MockWorker([PATCH])
    first = parse_response(worker.respond(turn(1))).response
    assert isinstance(first, ContextRequest)
    assert [item.path_hint for item in first.requests] == ["src/a.py"]
    granted = page("src/a.py", "E4", whole=True, operations=("replace_text",))
    second = parse_response(worker.respond(turn(2, granted))).response
    assert isinstance(second, PatchProposal)


def test_a_raw_string_is_sent_as_is_and_a_spent_script_is_a_worker_error() -> None:
    worker = MockWorker(["{not json"])
    assert worker.respond(turn(1)) == "{not json"
    with pytest.raises(WorkerError, match="no response for turn 2"):
        worker.respond(turn(2))


def test_an_empty_script_or_a_task_file_without_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WorkerError):
        MockWorker([])
    missing = tmp_path / "task.json"
    with pytest.raises(WorkerError, match="cannot read"):
        MockWorker.from_task_file(missing)
    missing.write_text(json.dumps({"goal": "g"}))
    with pytest.raises(WorkerError, match="no 'mock' list"):
        MockWorker.from_task_file(missing)
    missing.write_text(json.dumps({"goal": "g", "mock": [PATCH]}))
    assert MockWorker.from_task_file(missing).name == "mock"
