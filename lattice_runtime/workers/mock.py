"""A deterministic worker that replays a script: the fixtures' stand-in for a model.

A script is a list of responses in the wire format (``docs/lattice.md``, "Worker protocol").
Where a response needs an edit handle it names the file instead, as ``"@path:<repo path>"``;
the mock resolves that to the handle granted for the file (a whole-file grant first). When the
file has no handle yet, the mock asks for it (a ``context_request`` with that path hint)
instead of answering, and answers on the next turn. Repair and revision turns replay the next
scripted response, so a script can exercise every path of the run machine.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from lattice_runtime.errors import WorkerError
from lattice_runtime.workers.turn import GrantedPage, WorkerTurn

__all__ = ["PATH_PLACEHOLDER", "MockWorker"]

PATH_PLACEHOLDER: Final = "@path:"

JsonValue = object


class MockWorker:
    """Replays scripted responses, resolving ``@path:`` placeholders to granted handles."""

    def __init__(self, script: Sequence[JsonValue]) -> None:
        """Keep the script (each item one wire response: a JSON value, or a raw string).

        Raises:
            WorkerError: The script is empty.
        """
        if not script:
            raise WorkerError("the mock worker's script is empty", hint="Give it one response.")
        self._script = list(script)
        self._next = 0

    @classmethod
    def from_task_file(cls, path: Path) -> MockWorker:
        """Load the ``mock`` list of a fixture's ``task.json``.

        Raises:
            WorkerError: The file cannot be read or has no ``mock`` list.
        """
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise WorkerError(f"cannot read {path}: {exc}") from None
        script = data.get("mock") if isinstance(data, dict) else None
        if not isinstance(script, list):
            raise WorkerError(f"{path} has no 'mock' list", hint="See fixtures/README.md.")
        return cls(script)

    @property
    def name(self) -> str:
        """``mock``."""
        return "mock"

    def respond(self, turn: WorkerTurn) -> str:
        """Answer with the next scripted response (or ask for a file it must edit).

        Raises:
            WorkerError: The script has no response left.
        """
        if self._next >= len(self._script):
            raise WorkerError(
                f"the mock worker's script has no response for turn {turn.number}",
                hint="Add a response to the script, or fix the run so it needs fewer turns.",
            )
        item = self._script[self._next]
        if isinstance(item, str):  # a raw answer, sent as is (malformed JSON on purpose)
            self._next += 1
            return item
        missing: list[str] = []
        resolved = _resolve(item, turn.pages, missing)
        if missing:
            requests = [
                {"reason": "the file the change goes into", "pathHint": path}
                for path in dict.fromkeys(missing)
            ]
            return json.dumps({"kind": "context_request", "requests": requests})
        self._next += 1
        return json.dumps(resolved)


def _resolve(value: JsonValue, pages: Sequence[GrantedPage], missing: list[str]) -> JsonValue:
    if isinstance(value, str) and value.startswith(PATH_PLACEHOLDER):
        path = value[len(PATH_PLACEHOLDER) :]
        handle = _handle_for(path, pages)
        if handle is None:
            missing.append(path)
            return value
        return handle
    if isinstance(value, list):
        return [_resolve(item, pages, missing) for item in value]
    if isinstance(value, dict):
        return {key: _resolve(item, pages, missing) for key, item in value.items()}
    return value


def _handle_for(path: str, pages: Sequence[GrantedPage]) -> str | None:
    candidates = [page for page in pages if page.path == path]
    candidates.sort(key=lambda page: (not page.whole_file, not page.operations))
    return candidates[0].handle if candidates else None
