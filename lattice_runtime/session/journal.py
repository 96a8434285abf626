"""The durable session journal, kept in its own repocontext store under ``.lattice/journal/``.

The journal is a separate :class:`repocontext.store.Store` (not the context kernel's
``.lattice/index`` store: one LMDB environment must not be opened twice in a process). It is
opened for each operation and closed after it, under one process-wide lock, so a server, a CLI
command and a test in the same process never hold it twice.

Layout (keys follow the store's grammar under the repository id ``lattice-journal``):

- ``repo/lattice-journal/session/<sessionId>`` in the session tree: the session's head, a
  document whose max-register ``seq`` is the last sequence number handed out. It is raised in
  a write transaction (a compare-and-set across processes), so two writers never get the same
  number; an entry that crashes between the two writes leaves a gap, never a duplicate.
- ``repo/lattice-journal/mem/<sessionId>/<sequence:010d>`` in the structural tree: one entry.

A session is known to the journal when :class:`~lattice_runtime.session.SessionStore` has it,
or when the journal created it as the child of a delegation.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from lattice_runtime._files import LATTICE_DIR, lattice_dir
from lattice_runtime.compile.task import TaskIR
from lattice_runtime.errors import SessionError, SessionNotFoundError
from lattice_runtime.session.journal_entries import (
    BoundaryKind,
    BoundaryReported,
    ChildOf,
    DelegatedResult,
    Entry,
    HumanMessage,
    Payload,
    PlanApproved,
    TaskAccepted,
    TodoList,
    entry_from_record,
    entry_record,
    sha256_text,
)
from lattice_runtime.session.sessions import SESSION_ID_PATTERN, SessionStore
from lattice_runtime.settings import ControlMode
from repocontext.errors import RepoContextError
from repocontext.store import SESSION, STRUCTURAL, DocPatch, DocState, Store

__all__ = ["JOURNAL_DIR", "Journal", "check_enabled"]

JOURNAL_DIR: Final = "journal"
_REPO: Final = "lattice-journal"
_SEQ: Final = "seq"
_PARENT: Final = "parent"
_LOCK: Final = threading.Lock()  # one open of the journal environment per process at a time


class Journal:
    """Appends to and reads the session journal of one repository."""

    def __init__(
        self,
        repo_root: Path,
        *,
        now: Callable[[], datetime] | None = None,
        token: Callable[[int], str] = secrets.token_hex,
        mode: ControlMode = "auto",
    ) -> None:
        """Use ``<repo_root>/.lattice/journal`` (made when first written).

        With ``mode`` ``off`` every call refuses (:func:`check_enabled`) and nothing is written.
        """
        self._root = repo_root.resolve()
        self.mode: ControlMode = mode
        self._now = now or (lambda: datetime.now(UTC))
        self._token = token

    @property
    def directory(self) -> Path:
        """Where the journal's store lives."""
        return lattice_dir(self._root) / JOURNAL_DIR

    def append(self, session_id: str, payload: Payload) -> Entry:
        """Append ``payload`` to the session's journal and return the entry written.

        Raises:
            SessionNotFoundError: No such session.
            SessionError: The journal cannot be written.
        """
        self.check_session(session_id)
        with self._store() as store:
            return self._append(store, session_id, payload)

    def record_message(self, session_id: str, message_id: str, text: str) -> Entry:
        """Record a human message (its text, and the SHA-256 every anchor carries).

        Raises:
            SessionNotFoundError: No such session.
        """
        return self.append(session_id, HumanMessage(message_id, sha256_text(text), text))

    def approve_plan(self, session_id: str, plan_id: str, text: str) -> Entry:
        """Record an approved plan (the latest one is the session's plan).

        Raises:
            SessionNotFoundError: No such session.
        """
        return self.append(session_id, PlanApproved(plan_id, text, sha256_text(text)))

    def set_todos(self, session_id: str, items: tuple[str, ...]) -> Entry:
        """Record the current to-do list (it replaces the previous one whole).

        Raises:
            SessionNotFoundError: No such session.
        """
        return self.append(session_id, TodoList(items))

    def record_delegated(
        self, session_id: str, prompt: str, result: str, child_session_id: str = ""
    ) -> Entry:
        """Record what a delegated sub-agent answered (the prompt is kept as its digest only).

        Raises:
            SessionNotFoundError: No such session.
        """
        payload = DelegatedResult(
            sha256_text(prompt), result, sha256_text(result), child_session_id
        )
        return self.append(session_id, payload)

    def accept_task(self, session_id: str, run_id: str, task: TaskIR) -> Entry:
        """Record the task a run accepted: its goal's digest and its acceptance criteria.

        Raises:
            SessionNotFoundError: No such session.
        """
        criteria = tuple(criterion.text for criterion in task.acceptance_criteria)
        return self.append(
            session_id, TaskAccepted(task.id, run_id, sha256_text(task.goal), criteria)
        )

    def boundary(self, session_id: str, kind: BoundaryKind) -> Entry:
        """Record a ``compaction`` or ``resume`` boundary (use :meth:`delegate` to delegate).

        Raises:
            SessionNotFoundError: No such session.
            SessionError: ``kind`` is ``delegation``.
        """
        if kind == "delegation":
            raise SessionError(
                "a delegation boundary needs the child's first message",
                hint="Report it with the first message the sub-agent gets.",
            )
        return self.append(session_id, BoundaryReported(kind))

    def delegate(self, parent_id: str, message_id: str, text: str) -> tuple[Entry, str]:
        """Record a delegation: create a child session whose first entries name its parent.

        The child's journal starts with :class:`ChildOf` (the parent and the anchor of its first
        message) and that message; the parent records the boundary with the child's id.

        Raises:
            SessionNotFoundError: No parent session ``parent_id``.
        """
        self.check_session(parent_id)
        child = f"s-{self._token(6)}"
        anchor = sha256_text(text)
        with self._store() as store:
            self._append(store, child, ChildOf(parent_id, message_id, anchor), parent=parent_id)
            self._append(store, child, HumanMessage(message_id, anchor, text))
            entry = self._append(store, parent_id, BoundaryReported("delegation", child))
        return entry, child

    def entries(self, session_id: str, *, upto: int | None = None) -> tuple[Entry, ...]:
        """The session's entries in sequence order (those numbered ``upto`` or less).

        Raises:
            SessionNotFoundError: No such session.
            SessionError: An entry is damaged.
        """
        self.check_session(session_id)
        prefix = f"repo/{_REPO}/mem/{session_id}/"
        with self._store() as store:
            records = [record.value for record in store.iter_records(STRUCTURAL, prefix)]
        try:
            found = tuple(entry_from_record(record) for record in records)
        except (ValueError, KeyError, TypeError) as exc:
            raise SessionError(
                f"the journal of {session_id} is damaged: {exc}", hint="Start a new session."
            ) from None
        return tuple(entry for entry in found if upto is None or entry.sequence <= upto)

    def check_session(self, session_id: str) -> None:
        """Refuse an id that is neither a session nor a child session of the journal.

        Raises:
            SessionNotFoundError: No such session (or a malformed id).
        """
        check_enabled(self.mode)
        if SESSION_ID_PATTERN.match(session_id) and self._known_child(session_id):
            return
        SessionStore(self._root).get(session_id)

    def _known_child(self, session_id: str) -> bool:
        if not (self._root / LATTICE_DIR / JOURNAL_DIR / "store").is_dir():
            return False  # checked without making .lattice/: a refused id writes nothing
        with self._store() as store:
            head = store.get(SESSION, _head_key(session_id))
        return head is not None and head.doc is not None and _PARENT in head.doc.fields

    @contextmanager
    def _store(self) -> Iterator[Store]:
        check_enabled(self.mode)
        with _LOCK:
            try:
                store = Store.open(self.directory)
            except RepoContextError as exc:
                raise SessionError(
                    f"the session journal cannot be opened: {exc}",
                    hint=f"Check that {self.directory} is writable.",
                ) from None
            try:
                yield store
            finally:
                store.close()

    def _append(
        self, store: Store, session_id: str, payload: Payload, *, parent: str | None = None
    ) -> Entry:
        def bump(live: DocState | None, _stored: DocState | None) -> DocPatch:
            last = live.maxima.get(_SEQ, 0) if live is not None else 0
            fields = {_PARENT: parent} if parent is not None else {}
            return DocPatch(set_fields=fields, raise_max={_SEQ: last + 1})

        head = store.update_doc(SESSION, _head_key(session_id), bump)
        if head is None or head.doc is None:  # bump always writes
            raise SessionNotFoundError(f"no journal head for {session_id}")
        at = self._now().isoformat(timespec="seconds").replace("+00:00", "Z")
        entry = Entry(session_id, head.doc.maxima[_SEQ], at, payload)
        key = f"repo/{_REPO}/mem/{session_id}/{entry.sequence:010d}"
        try:
            store.put(STRUCTURAL, key, entry_record(entry))
        except RepoContextError as exc:
            raise SessionError(
                f"the journal entry could not be written: {exc}",
                hint="Record a smaller entry (the store keeps at most 4 MiB per entry).",
            ) from None
        return entry


def check_enabled(mode: ControlMode) -> None:
    """Refuse journal and projection calls when the control mode is ``off``.

    Raises:
        SessionError: ``mode`` is ``off``.
    """
    if mode == "off":
        raise SessionError(
            "continuity is off: no journal is kept and no projection is made",
            hint="Start with --control auto (or LATTICE_CONTROL=auto) to keep a session journal.",
        )


def _head_key(session_id: str) -> str:
    return f"repo/{_REPO}/session/{session_id}"
