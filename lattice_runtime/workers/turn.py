"""What a worker is given and what it must return.

A worker is anything that turns one rendered prompt into one raw text answer: the mock worker
of the fixtures, later a human (manual handoff), a subprocess or a provider SDK. Workers never
write to the repository and never see the edit-grant registry: they see handles in the
prompt, and everything they answer is parsed, validated and lowered by the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from lattice_runtime.compile import TaskIR
from lattice_runtime.kernel import MapEntry
from lattice_runtime.protocol import TurnKind

__all__ = ["GrantedPage", "MapEntry", "TurnKind", "Worker", "WorkerTurn"]


@dataclass(frozen=True, slots=True)
class GrantedPage:
    """A page as a worker sees it: content with its edit handle.

    Attributes:
        page_id: The kernel's page id.
        path: Repository-relative path.
        lines: The lines shown, 1-based inclusive.
        handle: The page's edit handle (``E<n>``).
        operations: What the handle may do (empty: read-only).
        whole_file: The page is the whole file.
        symbol: The symbol the page is about, if any.
        content: The page's text, exactly as the prompt shows it.
    """

    page_id: str
    path: str
    lines: tuple[int, int]
    handle: str
    operations: tuple[str, ...]
    whole_file: bool
    symbol: str | None = None
    content: str = ""


@dataclass(frozen=True, slots=True)
class WorkerTurn:
    """One turn of a run.

    Attributes:
        number: 1 for the first turn.
        kind: Why the worker is asked.
        prompt: The rendered prompt (protocol version 5), the whole of what a model sees.
        task: The compiled task.
        pages: The pages granted so far, with their handles (what the prompt shows).
        repo_map: The repository map of the files no page covers, as entries.
        feedback: For context-fault, repair and revision turns, what happened.
    """

    number: int
    kind: TurnKind
    prompt: str
    task: TaskIR
    pages: tuple[GrantedPage, ...]
    repo_map: tuple[MapEntry, ...] = ()
    feedback: str | None = None


class Worker(Protocol):
    """Proposes; never writes."""

    @property
    def name(self) -> str:
        """A short name for records (``mock``, ``command``, ...)."""
        ...

    def respond(self, turn: WorkerTurn) -> str:
        """Return the raw answer to ``turn`` (one JSON object, per the protocol).

        Raises:
            WorkerError: The worker cannot answer.
        """
        ...
