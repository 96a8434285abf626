"""Reuse sessions: what a named session of ``repocontext_context`` has received.

A session document (``SESSION`` tree, kept :data:`SESSION_TTL_S` after its last use) holds
the receipts of the units sent under it and the ``path@hash`` of the whole files sent. It is
written only when a caller names a session; an expired id used again starts empty.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from repocontext.errors import InvalidInputError, InvalidKeyError
from repocontext.store import SESSION, Clock, DocPatch, DocState, Store
from repocontext.store.keys import session_key

__all__ = [
    "SESSION_TTL_S",
    "Session",
    "check_session",
    "known_held",
    "load_session",
    "record_session",
]

SESSION_TTL_S: Final = 6 * 3600


@dataclass(frozen=True, slots=True)
class Session:
    """What a session holds.

    Attributes:
        receipts: Receipts of the units sent under it.
        held: ``path@hash`` of the whole files sent under it.
    """

    receipts: frozenset[str] = frozenset()
    held: frozenset[str] = frozenset()


def check_session(repo_id: str, session: str) -> None:
    """Refuse a session id no store key can hold.

    Raises:
        InvalidInputError: The id is not usable.
    """
    try:
        session_key(repo_id, session)
    except InvalidKeyError as exc:
        raise InvalidInputError(
            f"session id {session[:60]!r} is not usable: {exc.message}",
            hint="Use a short printable id (a few words, a UUID).",
        ) from exc


def load_session(store: Store, repo_id: str, session: str) -> Session:
    """What session ``session`` of ``repo_id`` holds (empty when new or expired)."""
    record = store.get(SESSION, session_key(repo_id, session))
    if record is None or record.doc is None:
        return Session()
    sets = record.doc.sets
    return Session(sets.get("receipts", frozenset()), sets.get("held", frozenset()))


def known_held(known: Sequence[str], held: Collection[str]) -> dict[str, str]:
    """The ``path -> hash`` of the ``known`` claims the session really holds."""
    out: dict[str, str] = {}
    for claim in known:
        path, sep, digest = claim.rpartition("@")
        if sep and path and claim in held:
            out[path] = digest
    return out


def record_session(
    store: Store,
    clock: Clock,
    repo_id: str,
    session: str,
    task: str,
    sent: tuple[Iterable[str], Iterable[str]],
) -> None:
    """Add what was ``sent`` (receipts, held files) to a session and extend its life."""
    receipts, held = sent
    expires = int((clock.now() + SESSION_TTL_S) * 1000)
    patch = DocPatch(
        set_fields={"repoId": repo_id, "lastTask": task[:200]},
        add={"receipts": list(receipts), "held": list(held)},
        expires_at_ms=expires,
    )

    def decide(live: DocState | None, stored: DocState | None) -> DocPatch:
        if live is not None or stored is None:
            return patch
        # The id of an expired session, used again: a new session, not the old one revived
        # (its receipts would suppress what this caller never received).
        remove = {
            name: sorted(members - set(patch.add.get(name, ())))
            for name, members in stored.sets.items()
        }
        return dataclasses.replace(patch, remove=remove, drop_expiry=True)

    store.update_doc(SESSION, session_key(repo_id, session), decide)
