"""Sessions: the run history and grant epoch an agent works in (``docs/lattice.md``).

:class:`SessionStore` keeps :class:`Session` records under ``.lattice/sessions/``;
:class:`Journal` keeps each session's durable journal under ``.lattice/journal/`` and
:func:`continuity_projection` projects it at its latest boundary (``docs/continuity.md``).
"""

from lattice_runtime.session.continuity import (
    MAX_PROJECTION_BYTES,
    SECTIONS,
    Projection,
    canonical_json,
    continuity_projection,
)
from lattice_runtime.session.journal import JOURNAL_DIR, Journal, check_enabled
from lattice_runtime.session.journal_entries import (
    BOUNDARY_KINDS,
    BoundaryKind,
    BoundaryReported,
    ChildOf,
    DelegatedResult,
    Entry,
    GrantIssued,
    HumanMessage,
    PatchProposed,
    Payload,
    PlanApproved,
    TaskAccepted,
    TodoList,
    VerificationOutcome,
    entry_record,
    sha256_text,
)
from lattice_runtime.session.sessions import SESSION_ID_PATTERN, Session, SessionStore

__all__ = [
    "BOUNDARY_KINDS",
    "JOURNAL_DIR",
    "MAX_PROJECTION_BYTES",
    "SECTIONS",
    "SESSION_ID_PATTERN",
    "BoundaryKind",
    "BoundaryReported",
    "ChildOf",
    "DelegatedResult",
    "Entry",
    "GrantIssued",
    "HumanMessage",
    "Journal",
    "PatchProposed",
    "Payload",
    "PlanApproved",
    "Projection",
    "Session",
    "SessionStore",
    "TaskAccepted",
    "TodoList",
    "VerificationOutcome",
    "canonical_json",
    "check_enabled",
    "continuity_projection",
    "entry_record",
    "sha256_text",
]
