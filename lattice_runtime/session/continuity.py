"""Automatic continuity: the bounded projection of a session frozen at its latest boundary.

:func:`continuity_projection` recomputes the projection from the journal entries numbered up to
the session's latest boundary, so it is the same bytes every time until the next boundary.
Before any boundary it is empty (``boundary`` is ``None``): the runtime adds nothing.

Visibility: a ``compaction`` or ``resume`` boundary hides every human message recorded before
it (the client's history was summarised, or is gone); a ``delegation`` boundary hides nothing
in the parent. The projection anchors (id + SHA-256, never text) the messages hidden by the
latest ``compaction``/``resume`` at or before the boundary.

Sections, in their fixed order: ``hiddenMessages``, ``firstMessage`` (a child session's first
message, as an anchor), ``plan`` (the latest approved plan), ``todos`` (the current list) and
``delegatedResults`` (the last three). A section with no data is empty, never guessed. When the
canonical JSON (sorted keys, no spaces, UTF-8) is over :data:`MAX_PROJECTION_BYTES`, the largest
section (the earlier one on a tie) is replaced by its SHA-256 and a note, and again, until it
fits.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from typing import Final

from pydantic import JsonValue

from lattice_runtime.session.journal import Journal, check_enabled
from lattice_runtime.session.journal_entries import (
    BoundaryReported,
    ChildOf,
    DelegatedResult,
    Entry,
    HumanMessage,
    PlanApproved,
    TodoList,
)
from lattice_runtime.settings import ControlMode

__all__ = [
    "MAX_PROJECTION_BYTES",
    "SECTIONS",
    "Projection",
    "canonical_json",
    "continuity_projection",
]

MAX_PROJECTION_BYTES: Final = 262_144
SECTIONS: Final = ("hiddenMessages", "firstMessage", "plan", "todos", "delegatedResults")
DELEGATED_KEPT: Final = 3
_HIDING: Final = ("compaction", "resume")


def canonical_json(value: JsonValue) -> bytes:
    """Sorted keys, no spaces, UTF-8: the bytes a projection is measured and digested by."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True, slots=True)
class Projection:
    """A session's continuity projection.

    Attributes:
        session_id: The session.
        boundary_kind: The latest boundary's kind, or ``None`` before any.
        boundary_sequence: Its sequence number (0 before any).
        parent_session_id: The parent of a child session (``""`` otherwise).
        sections: ``(name, canonical JSON)`` in :data:`SECTIONS` order.
        omitted: Names of the sections replaced by their SHA-256 to fit the cap.
    """

    session_id: str
    boundary_kind: str | None
    boundary_sequence: int
    parent_session_id: str
    sections: tuple[tuple[str, str], ...]
    omitted: tuple[str, ...] = ()

    def to_wire(self) -> dict[str, JsonValue]:
        """The camelCase JSON form."""
        return {
            "sessionId": self.session_id,
            "boundary": None
            if self.boundary_kind is None
            else {"kind": self.boundary_kind, "sequence": self.boundary_sequence},
            "parentSessionId": self.parent_session_id or None,
            "sections": {name: json.loads(body) for name, body in self.sections},
            "omitted": list(self.omitted),
        }

    def canonical(self) -> bytes:
        """The projection's canonical JSON bytes (at most :data:`MAX_PROJECTION_BYTES`)."""
        return canonical_json(self.to_wire())


def continuity_projection(
    journal: Journal, session_id: str, *, mode: ControlMode = "auto"
) -> Projection:
    """Return the projection of ``session_id`` frozen at its latest boundary.

    Raises:
        SessionError: ``mode`` (or the journal's mode) is ``off``, or the journal is damaged.
        SessionNotFoundError: No such session.
    """
    check_enabled(mode)
    entries = journal.entries(session_id)  # a journal made with mode off refuses too
    boundaries = [e for e in entries if isinstance(e.payload, BoundaryReported | ChildOf)]
    parent = next((e.payload for e in entries if isinstance(e.payload, ChildOf)), None)
    parent_id = parent.parent_session_id if parent else ""
    if not boundaries:
        return Projection(session_id, None, 0, parent_id, _sections([], None, None))
    last = boundaries[-1]
    frozen = [e for e in entries if e.sequence <= last.sequence]
    bodies = _sections(frozen, parent, _hiding_sequence(frozen))
    head = Projection(session_id, _kind(last), last.sequence, parent_id, bodies)
    return _fit(head)


def _kind(boundary: Entry) -> str:
    # a child session begins at its delegation: that is its first boundary
    payload = boundary.payload
    return payload.boundary if isinstance(payload, BoundaryReported) else "delegation"


def _hiding_sequence(entries: list[Entry]) -> int:
    hiding = [
        e.sequence
        for e in entries
        if isinstance(e.payload, BoundaryReported) and e.payload.boundary in _HIDING
    ]
    return hiding[-1] if hiding else 0


def _sections(
    entries: list[Entry], parent: ChildOf | None, hidden_before: int | None
) -> tuple[tuple[str, str], ...]:
    hidden: list[JsonValue] = [
        {"id": e.payload.message_id, "digest": e.payload.digest, "sequence": e.sequence}
        for e in entries
        if isinstance(e.payload, HumanMessage) and e.sequence < (hidden_before or 0)
    ]
    first: JsonValue = (
        {"id": parent.first_message_id, "digest": parent.first_message_digest} if parent else None
    )
    plans = [e.payload for e in entries if isinstance(e.payload, PlanApproved)]
    plan: JsonValue = (
        {"id": plans[-1].plan_id, "text": plans[-1].text, "digest": plans[-1].digest}
        if plans
        else None
    )
    todos_seen = [e.payload for e in entries if isinstance(e.payload, TodoList)]
    todos: list[JsonValue] = list(todos_seen[-1].items) if todos_seen else []
    results: list[JsonValue] = [
        {
            "promptDigest": r.prompt_digest,
            "result": r.result,
            "resultDigest": r.result_digest,
            "childSessionId": r.child_session_id or None,
        }
        for r in [e.payload for e in entries if isinstance(e.payload, DelegatedResult)][
            -DELEGATED_KEPT:
        ]
    ]
    values: tuple[JsonValue, ...] = (hidden, first, plan, todos, results)
    return tuple(
        (name, canonical_json(value).decode()) for name, value in zip(SECTIONS, values, strict=True)
    )


def _fit(projection: Projection) -> Projection:
    sections = dict(projection.sections)
    omitted: list[str] = []

    def trial() -> Projection:
        return replace(projection, sections=tuple(sections.items()), omitted=tuple(omitted))

    while len(trial().canonical()) > MAX_PROJECTION_BYTES:
        kept = [name for name in SECTIONS if name not in omitted]
        largest = max(kept, key=lambda name: (len(sections[name].encode()), -SECTIONS.index(name)))
        body = sections[largest].encode()
        sections[largest] = canonical_json(
            {
                "sha256": "sha256:" + hashlib.sha256(body).hexdigest(),
                "bytes": len(body),
                "note": f"{largest} did not fit the {MAX_PROJECTION_BYTES}-byte projection; "
                "the digest is of its canonical JSON. Read the journal for it.",
            }
        ).decode()
        omitted.append(largest)
    return trial()
