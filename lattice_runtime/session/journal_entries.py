"""What a session journal holds: one frozen dataclass per entry kind, and their record codec.

Every entry is an :class:`Entry`: the session's sequence number (1, 2, ... per session), the
time it was written and a typed *payload*. Payload fields are snake_case here; the stored
record and every wire form use camelCase (:func:`entry_record`, :func:`entry_from_record`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from typing import ClassVar, Final, Literal

from repocontext.store import Value

__all__ = [
    "BOUNDARY_KINDS",
    "BoundaryKind",
    "BoundaryReported",
    "ChildOf",
    "DelegatedResult",
    "Entry",
    "GrantIssued",
    "HumanMessage",
    "PatchProposed",
    "Payload",
    "PlanApproved",
    "TaskAccepted",
    "TodoList",
    "VerificationOutcome",
    "entry_from_record",
    "entry_record",
    "sha256_text",
]

BoundaryKind = Literal["compaction", "resume", "delegation"]
BOUNDARY_KINDS: Final[tuple[BoundaryKind, ...]] = ("compaction", "resume", "delegation")


def sha256_text(text: str) -> str:
    """The ``sha256:`` + hex digest of ``text``'s UTF-8 bytes."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class HumanMessage:
    """A human message; the text is kept so an anchor can be checked, never projected."""

    KIND: ClassVar[str] = "human_message"
    message_id: str
    digest: str
    text: str


@dataclass(frozen=True, slots=True)
class TaskAccepted:
    """The task a run accepted: its goal digest and acceptance criteria (from its TaskIR)."""

    KIND: ClassVar[str] = "task_accepted"
    task_id: str
    run_id: str
    goal_digest: str
    criteria: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PlanApproved:
    """A plan the human approved."""

    KIND: ClassVar[str] = "plan_approved"
    plan_id: str
    text: str
    digest: str


@dataclass(frozen=True, slots=True)
class TodoList:
    """The current to-do list; a later one replaces it whole."""

    KIND: ClassVar[str] = "todo_list"
    items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DelegatedResult:
    """What a delegated sub-agent answered, with the digest of the prompt it was given."""

    KIND: ClassVar[str] = "delegated_result"
    prompt_digest: str
    result: str
    result_digest: str
    child_session_id: str


@dataclass(frozen=True, slots=True)
class GrantIssued:
    """Edit handles a run issued."""

    KIND: ClassVar[str] = "grant_issued"
    run_id: str
    handles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PatchProposed:
    """A patch proposed for a run (its digest)."""

    KIND: ClassVar[str] = "patch_proposed"
    run_id: str
    digest: str


@dataclass(frozen=True, slots=True)
class VerificationOutcome:
    """How a run's verification ended."""

    KIND: ClassVar[str] = "verification_outcome"
    run_id: str
    state: str
    passed: bool


@dataclass(frozen=True, slots=True)
class BoundaryReported:
    """A boundary the client reported; a delegation names the child session it created."""

    KIND: ClassVar[str] = "boundary"
    boundary: BoundaryKind
    child_session_id: str = ""


@dataclass(frozen=True, slots=True)
class ChildOf:
    """The first entry of a child session: its parent and the anchor of its first message."""

    KIND: ClassVar[str] = "child_of"
    parent_session_id: str
    first_message_id: str
    first_message_digest: str


Payload = (
    HumanMessage
    | TaskAccepted
    | PlanApproved
    | TodoList
    | DelegatedResult
    | GrantIssued
    | PatchProposed
    | VerificationOutcome
    | BoundaryReported
    | ChildOf
)

_PAYLOADS: Final[dict[str, type[Payload]]] = {
    cls.KIND: cls
    for cls in (
        HumanMessage,
        TaskAccepted,
        PlanApproved,
        TodoList,
        DelegatedResult,
        GrantIssued,
        PatchProposed,
        VerificationOutcome,
        BoundaryReported,
        ChildOf,
    )
}


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal entry.

    Attributes:
        session_id: The session it belongs to.
        sequence: Its number in the session (1 first; strictly increasing).
        at: ISO 8601 UTC time it was written.
        payload: What happened.
    """

    session_id: str
    sequence: int
    at: str
    payload: Payload


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def entry_record(entry: Entry) -> dict[str, Value]:
    """The camelCase record of ``entry`` (what the store keeps and the wire shows)."""
    body: dict[str, Value] = {
        "sessionId": entry.session_id,
        "sequence": entry.sequence,
        "at": entry.at,
        "kind": entry.payload.KIND,
    }
    for item in fields(entry.payload):
        value = getattr(entry.payload, item.name)
        if isinstance(value, tuple):
            items: list[Value] = [str(part) for part in value]
            value = items
        body[_camel(item.name)] = value
    return body


def entry_from_record(record: object) -> Entry:
    """Decode a stored record.

    Raises:
        ValueError: The record is not an entry this version writes.
    """
    if not isinstance(record, dict):
        raise ValueError("a journal record is a map")
    cls = _PAYLOADS.get(str(record.get("kind")))
    if cls is None:
        raise ValueError(f"unknown journal entry kind {record.get('kind')!r}")
    values: dict[str, object] = {}
    for item in fields(cls):
        value = record[_camel(item.name)]
        values[item.name] = tuple(str(v) for v in value) if isinstance(value, list) else value
    payload = cls(**values)  # type: ignore[arg-type]  # the record codec: fields checked above
    return Entry(
        session_id=str(record["sessionId"]),
        sequence=int(record["sequence"]),
        at=str(record["at"]),
        payload=payload,
    )
