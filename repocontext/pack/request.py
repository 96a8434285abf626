"""A context request, checked once: the limits every edge (MCP, HTTP, CLI) shares.

:meth:`ContextRequest.of` refuses a ``top`` or a budget out of range and an over-long task
with ``input.invalid`` naming the field and its range, and maps an unknown detail to
``auto`` (the documented fallback).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from repocontext.arguments import MAX_TEXT_CHARS, checked_range, quoted
from repocontext.arguments import repo_id as checked_repo_id
from repocontext.errors import InvalidInputError
from repocontext.search.modes import SearchMode, checked_mode
from repocontext.tokens import DEFAULT_ENCODING

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_TOP",
    "DETAILS",
    "MAX_BUDGET",
    "MAX_TOP",
    "MIN_BUDGET",
    "MIN_TOP",
    "ContextRequest",
    "Detail",
]

Detail = Literal["paths", "outline", "slices", "auto"]
DETAILS: Final[tuple[Detail, ...]] = ("paths", "outline", "slices", "auto")
MIN_TOP: Final = 1
MAX_TOP: Final = 50
DEFAULT_TOP: Final = 10
MIN_BUDGET: Final = 1
MAX_BUDGET: Final = 200_000
DEFAULT_BUDGET: Final = 8192


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """A ``repocontext_context`` call, already checked (build it with :meth:`of`).

    Attributes:
        repo_id: The repository the bundle is drawn from.
        task: The task, in words.
        top: How many ranked files to consider, ``MIN_TOP..MAX_TOP``.
        budget: Most tokens the response may cost, ``MIN_BUDGET..MAX_BUDGET``.
        detail: ``paths``, ``outline``, ``slices`` or ``auto``.
        seen: Receipts of units the caller holds (not sent again).
        known: ``path@contentHash`` of whole files the caller's session holds.
        session: Session id whose receipts are remembered, if any.
        encoding: The token encoding the budget is counted in.
        json_code: The structured result carries each entry's code (``content``) too.
        mode: The retrieval mode of the search behind the bundle (``None``: hybrid when
            vectors can answer, else keyword).
    """

    repo_id: str
    task: str
    top: int = DEFAULT_TOP
    budget: int = DEFAULT_BUDGET
    detail: Detail = "auto"
    seen: frozenset[str] = frozenset()
    known: tuple[str, ...] = ()
    session: str | None = None
    encoding: str = DEFAULT_ENCODING
    json_code: bool = False
    mode: SearchMode | None = None

    @classmethod
    def of(
        cls,
        repo_id: str,
        task: str,
        *,
        top: int = DEFAULT_TOP,
        budget: int = DEFAULT_BUDGET,
        detail: str | None = "auto",
        seen: Iterable[str] | None = None,
        known: Iterable[str] | None = None,
        session: str | None = None,
        json_code: bool = False,
        mode: str | None = None,
    ) -> ContextRequest:
        """Check a caller's context request and return it.

        An unknown or missing ``detail`` means ``auto``; an empty ``session`` means none.

        Raises:
            InvalidInputError: ``top`` or ``budget`` is out of range, the task is too long,
                the repository id is malformed or the mode is unknown.
        """
        if len(task) > MAX_TEXT_CHARS:
            raise InvalidInputError(
                f"the task {quoted(task)} is too long",
                hint=f"Describe it in at most {MAX_TEXT_CHARS} characters.",
            )
        return cls(
            repo_id=checked_repo_id(repo_id),
            task=task,
            top=int(checked_range("top", top, MIN_TOP, MAX_TOP)),
            budget=int(checked_range("budget", budget, MIN_BUDGET, MAX_BUDGET)),
            detail=next((d for d in DETAILS if d == detail), "auto"),
            seen=frozenset(seen or ()),
            known=tuple(known or ()),
            session=session or None,
            json_code=json_code,
            mode=checked_mode(mode),
        )
