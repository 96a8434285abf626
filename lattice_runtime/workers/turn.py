"""What a worker is given and what it must return.

A worker is anything that turns one rendered prompt into one raw text answer: the mock worker
of the fixtures, later a human (manual handoff), a subprocess or a provider SDK. Workers never
write to the repository and never see the edit-grant registry: they see handles in the
prompt, and everything they answer is parsed, validated and lowered by the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from lattice_runtime.protocol import TurnKind

__all__ = ["GrantedPage", "TurnKind", "Worker", "WorkerTurn"]


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
    """

    page_id: str
    path: str
    lines: tuple[int, int]
    handle: str
    operations: tuple[str, ...]
    whole_file: bool


@dataclass(frozen=True, slots=True)
class WorkerTurn:
    """One turn of a run.

    Attributes:
        number: 1 for the first turn.
        kind: Why the worker is asked.
        prompt: The rendered prompt (protocol version 5), the whole of what a model sees.
        pages: The pages granted so far, with their handles (what the prompt shows).
        feedback: For repair and revision turns, the concrete reason.
    """

    number: int
    kind: TurnKind
    prompt: str
    pages: tuple[GrantedPage, ...]
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
