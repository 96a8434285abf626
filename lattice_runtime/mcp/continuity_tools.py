"""The continuity tools: feed a session's journal, report boundaries, read the projection.

``lattice_record`` and ``lattice_boundary`` write the session journal (``.lattice/journal/``);
``lattice_resume`` answers the continuity projection frozen at the latest boundary. The server
offers them unless the control mode is ``off`` (``docs/continuity.md``).
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from mcp.types import ToolAnnotations
from pydantic import Field, JsonValue

from lattice_runtime.control import ControlEvents
from lattice_runtime.errors import SessionError
from lattice_runtime.mcp._gate import READ_ONLY, ToolSpec, map_errors
from lattice_runtime.session import (
    SESSION_ID_PATTERN,
    Entry,
    HumanMessage,
    Journal,
    continuity_projection,
)
from lattice_runtime.settings import ControlMode
from repocontext.wire import WireModel

__all__ = ["RecordResult", "ResumeResult", "continuity_tools"]

MAX_TEXT_CHARS: Final = 1_000_000
"""The longest message, plan, prompt or result one call records."""
MAX_TODOS: Final = 500

_WRITE: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
"""Writes the session journal under .lattice/, never the repository's files."""

SessionId = Annotated[
    str,
    Field(
        pattern=SESSION_ID_PATTERN.pattern,
        description="The session (s- + 12 hex digits; `lattice session new` makes one).",
    ),
]
Text = Annotated[str | None, Field(default=None, max_length=MAX_TEXT_CHARS)]
Label = Annotated[str | None, Field(default=None, min_length=1, max_length=200)]

RecordKind = Literal["human_message", "plan_approved", "todo_list", "delegated_result"]
BoundaryName = Literal["compaction", "resume", "delegation"]


class RecordResult(WireModel):
    """What ``lattice_record`` and ``lattice_boundary`` answer."""

    session_id: str = Field(description="The session written to.")
    sequence: int = Field(description="The entry's sequence number in that session.")
    kind: str = Field(description="The entry kind recorded.")
    child_session_id: str | None = Field(
        default=None, description="The child session a delegation created."
    )


class ResumeResult(WireModel):
    """The continuity projection ``lattice_resume`` answers."""

    session_id: str
    boundary: dict[str, JsonValue] | None = Field(
        description="The latest boundary {kind, sequence}; null before any (nothing to add)."
    )
    parent_session_id: str | None = Field(description="A child session's parent.")
    sections: dict[str, JsonValue] = Field(
        description="hiddenMessages, firstMessage, plan, todos, delegatedResults."
    )
    omitted: list[str] = Field(description="Sections replaced by their SHA-256 to fit the cap.")
    bytes: int = Field(description="Size of the projection's canonical JSON (<= 262144).")


def continuity_tools(
    journal: Journal, mode: ControlMode, events: ControlEvents | None = None
) -> list[ToolSpec]:
    """Return the continuity tools over ``journal`` (none when ``mode`` is ``off``).

    With ``events`` (explicit control), a recorded human message and a reported boundary are
    passed on too: each makes the current authorization stale.
    """
    if mode == "off":
        return []
    return [_record(journal, events), _boundary(journal, events), _resume(journal, mode)]


def _entry_result(entry: Entry, child: str | None = None) -> RecordResult:
    return RecordResult(
        session_id=entry.session_id,
        sequence=entry.sequence,
        kind=entry.payload.KIND,
        child_session_id=child,
    )


def _need(value: str | None, name: str, kind: str) -> str:
    if value is None:
        raise SessionError(f"{kind} needs {name}", hint=f"Call again with {name}.")
    return value


def _record(journal: Journal, events: ControlEvents | None) -> ToolSpec:
    @map_errors
    def lattice_record(
        sessionId: SessionId,
        kind: Annotated[RecordKind, Field(description="What to record.")],
        messageId: Label = None,
        text: Text = None,
        planId: Label = None,
        items: Annotated[
            list[Annotated[str, Field(max_length=2000)]] | None,
            Field(default=None, max_length=MAX_TODOS),
        ] = None,
        prompt: Text = None,
        result: Text = None,
        childSessionId: Annotated[str | None, Field(default=None, max_length=20)] = None,
    ) -> RecordResult:
        """Record what the session's continuity rests on, in its durable journal.

        kinds: `human_message` {messageId, text} (kept with its SHA-256; projections carry
        only id + digest), `plan_approved` {planId, text}, `todo_list` {items} (replaces the
        list), `delegated_result` {prompt, result, childSessionId?} (the prompt is kept as its
        digest). Answers the entry's `sequence`. Next: lattice_boundary when your history is
        compacted, resumed or delegated.
        """
        if kind == "human_message":
            message = _need(messageId, "messageId", kind)
            entry = journal.record_message(sessionId, message, _need(text, "text", kind))
            if events is not None and isinstance(entry.payload, HumanMessage):
                events.human_message(entry.sequence, entry.payload.digest)
        elif kind == "plan_approved":
            plan = _need(planId, "planId", kind)
            entry = journal.approve_plan(sessionId, plan, _need(text, "text", kind))
        elif kind == "todo_list":
            entry = journal.set_todos(sessionId, tuple(items or ()))
        else:
            asked = _need(prompt, "prompt", kind)
            entry = journal.record_delegated(
                sessionId, asked, _need(result, "result", kind), childSessionId or ""
            )
        return _entry_result(entry)

    return ToolSpec("lattice_record", lattice_record, "Record in the session journal", _WRITE)


def _boundary(journal: Journal, events: ControlEvents | None) -> ToolSpec:
    @map_errors
    def lattice_boundary(
        sessionId: SessionId,
        kind: Annotated[BoundaryName, Field(description="compaction, resume or delegation.")],
        messageId: Label = None,
        text: Text = None,
    ) -> RecordResult:
        """Report a boundary: your history was compacted, you resumed cold, or you delegate.

        `compaction` and `resume` hide every earlier human message from the projection's view;
        `delegation` {messageId, text: the sub-agent's first message} creates a child session
        (`childSessionId`) whose parent and first message are recorded. Next: lattice_resume
        with the session (or the child) to read the projection frozen at this boundary.
        """
        if kind != "delegation":
            entry = journal.boundary(sessionId, kind)
            if events is not None:
                events.boundary(kind)
            return _entry_result(entry)
        message = _need(messageId, "messageId", kind)
        entry, child = journal.delegate(sessionId, message, _need(text, "text", kind))
        if events is not None:
            events.boundary("delegation")
        return _entry_result(entry, child)

    return ToolSpec("lattice_boundary", lattice_boundary, "Report a boundary", _WRITE)


def _resume(journal: Journal, mode: ControlMode) -> ToolSpec:
    @map_errors
    def lattice_resume(sessionId: SessionId) -> ResumeResult:
        """The session's continuity projection, frozen at its latest boundary (changes nothing).

        Anchors (id + SHA-256, never text) of the human messages no longer visible, the latest
        approved plan, the current to-do items, the last three delegated results and, for a
        child session, the anchor of its first message. At most 262,144 bytes of canonical
        JSON; a section that does not fit is replaced by its SHA-256 and a note (`omitted`).
        Before any boundary every section is empty. It adds state; it never rewrites a prompt.
        """
        projection = continuity_projection(journal, sessionId, mode=mode)
        wire = projection.to_wire()
        boundary = wire["boundary"]
        sections = wire["sections"]
        assert isinstance(sections, dict)  # to_wire builds a map
        return ResumeResult(
            session_id=projection.session_id,
            boundary=boundary if isinstance(boundary, dict) else None,
            parent_session_id=projection.parent_session_id or None,
            sections=sections,
            omitted=list(projection.omitted),
            bytes=len(projection.canonical()),
        )

    return ToolSpec("lattice_resume", lattice_resume, "Continuity projection", READ_ONLY)
