"""The manual handoff: a turn written to a file, answered by an operator or another tool.

``lattice run TASK --worker manual`` starts the run and writes the first turn to
``.lattice/handoffs/<task id>/request.json``: the protocol version, the task IR with its
criteria, the granted pages with their handles, the repository map, the response schema, an
example of each answer shape and the full text prompt. Whoever answers writes
``response.json`` next to it; ``lattice handoff validate <task id>`` checks that answer without
side effects and ``lattice continue <task id>`` takes the run on through the same state
machine. A further turn is ``request-2.json`` (answered in ``response-2.json``), and so on.
``handoff.json`` names the run and the turn that waits.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lattice_runtime._files import atomic_write, lattice_dir
from lattice_runtime.errors import SessionNotFoundError, WorkerError
from lattice_runtime.protocol import PROTOCOL_VERSION, response_schema
from lattice_runtime.workers.command import turn_request
from lattice_runtime.workers.turn import WorkerTurn

__all__ = ["TASK_ID_PATTERN", "Handoff", "read_answer", "waiting_handoff", "write_request"]

TASK_ID_PATTERN: Final = re.compile(r"^task-[0-9a-f]{12}$")
_MAX_ANSWER_BYTES: Final = 2_000_000

_EXAMPLES: Final = (
    {
        "kind": "context_request",
        "requests": [{"reason": "the caller of the function to change", "pathHint": "src/app.py"}],
    },
    {
        "kind": "patch",
        "patch": {
            "summary": "what the patch does",
            "changes": [
                {
                    "editHandle": "E1",
                    "operation": "replace_text",
                    "replacements": [{"oldContent": "old line\n", "newContent": "new line\n"}],
                }
            ],
            "verificationCommands": ["python -m pytest -q"],
        },
    },
)


@dataclass(frozen=True, slots=True)
class Handoff:
    """A turn that waits for its answer in a file.

    Attributes:
        run_id: The run that waits.
        task_id: The task (names the handoff directory).
        number: The turn's number in the handoff (1, 2, ...).
        request: The request file.
        response: Where the answer goes.
    """

    run_id: str
    task_id: str
    number: int
    request: Path
    response: Path


def _directory(repo_root: Path, task_id: str) -> Path:
    if not TASK_ID_PATTERN.match(task_id):
        raise SessionNotFoundError(
            f"{task_id[:40]!r} is not a task id", hint="Task ids look like task-0123456789ab."
        )
    return lattice_dir(repo_root) / "handoffs" / task_id


def _names(number: int) -> tuple[str, str]:
    suffix = "" if number == 1 else f"-{number}"
    return f"request{suffix}.json", f"response{suffix}.json"


def write_request(repo_root: Path, run_id: str, turn: WorkerTurn) -> Handoff:
    """Write ``turn`` as the next request of its task's handoff; return where to answer.

    Raises:
        UnsafePathError: A handoff path is a symlink.
    """
    directory = _directory(repo_root, turn.task.id)
    number = 1
    pointer = directory / "handoff.json"
    if pointer.is_file() and not pointer.is_symlink():
        previous = json.loads(pointer.read_text(encoding="utf-8"))
        if previous.get("runId") == run_id:
            number = int(previous["number"]) + 1
    request_name, response_name = _names(number)
    payload = {
        **turn_request(turn),
        "runId": run_id,
        "taskId": turn.task.id,
        "handoffTurn": number,
        "respondIn": response_name,
        "responseSchema": response_schema(),
        "examples": list(_EXAMPLES),
    }
    root = repo_root.resolve()
    text = json.dumps(payload, indent=2, ensure_ascii=False)
    atomic_write(directory / request_name, text.encode(), root=root)
    (directory / response_name).unlink(missing_ok=True)  # an old answer never counts
    record = {"runId": run_id, "number": number, "protocolVersion": PROTOCOL_VERSION}
    atomic_write(pointer, json.dumps(record).encode(), root=root)
    return Handoff(
        run_id, turn.task.id, number, directory / request_name, directory / response_name
    )


def waiting_handoff(repo_root: Path, task_id: str) -> Handoff:
    """The handoff of ``task_id`` that waits for an answer.

    Raises:
        SessionNotFoundError: The task has no handoff (or a damaged one).
    """
    directory = _directory(repo_root, task_id)
    pointer = directory / "handoff.json"
    try:
        if pointer.is_symlink():
            raise ValueError("handoff.json is a symlink")
        record = json.loads(pointer.read_text(encoding="utf-8"))
        run_id, number = str(record["runId"]), int(record["number"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SessionNotFoundError(
            f"task {task_id} has no handoff waiting ({exc})",
            hint="Start one with `lattice run TASK --worker manual`.",
        ) from None
    request_name, response_name = _names(number)
    return Handoff(run_id, task_id, number, directory / request_name, directory / response_name)


def read_answer(handoff: Handoff) -> str:
    """The raw answer written for ``handoff``.

    Raises:
        WorkerError: There is none yet, it is a symlink, too large or not UTF-8.
    """
    path = handoff.response
    if path.is_symlink() or not path.is_file():
        raise WorkerError(
            f"no answer yet: {path} does not exist",
            hint=f"Write the answer to {path.name} (see {handoff.request.name}).",
        )
    data = path.read_bytes()
    if len(data) > _MAX_ANSWER_BYTES:
        raise WorkerError(f"{path.name} is over {_MAX_ANSWER_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise WorkerError(f"{path.name} is not UTF-8") from None
