"""Sessions: the run history an agent works in, kept under ``.lattice/sessions/``.

A session groups the runs of one agent's work on a repository. It holds the *epoch* every
edit grant is bound to (a reset starts a new epoch, so no handle of an earlier one lowers any
more) and a risk floor (a session that once ran a high-risk task never drops below it). The
durable journal and continuity projection of issue 26 build on this record.

Files: ``<repo>/.lattice/sessions/<id>.json`` (one per session, written atomically) and
``<repo>/.lattice/sessions/current`` (the id ``lattice run`` uses when none is given).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from lattice_runtime._files import atomic_write, lattice_dir
from lattice_runtime.compile.task import Risk
from lattice_runtime.errors import SessionError, SessionNotFoundError

__all__ = ["SESSION_ID_PATTERN", "Session", "SessionStore"]

SESSION_ID_PATTERN: Final = re.compile(r"^s-[0-9a-f]{12}$")
_RISK_ORDER: Final[dict[str, int]] = {"low": 0, "medium": 1, "high": 2}


@dataclass(frozen=True, slots=True)
class Session:
    """One session.

    Attributes:
        id: ``s-`` + 12 hex digits.
        created_at: ISO 8601 UTC.
        epoch: The grant epoch (1, bumped by every reset).
        risk_floor: The lowest risk a task of this session compiles to.
        runs: The session's run ids, oldest first.
        resets: How many times it was reset.
    """

    id: str
    created_at: str
    epoch: int = 1
    risk_floor: Risk = "low"
    runs: tuple[str, ...] = ()
    resets: int = 0

    def to_wire(self) -> dict[str, object]:
        """The camelCase JSON form."""
        return {
            "id": self.id,
            "createdAt": self.created_at,
            "epoch": self.epoch,
            "riskFloor": self.risk_floor,
            "runs": list(self.runs),
            "resets": self.resets,
        }


class SessionStore:
    """Reads and writes the sessions of one repository."""

    def __init__(
        self,
        repo_root: Path,
        *,
        now: Callable[[], datetime] | None = None,
        token: Callable[[int], str] = secrets.token_hex,
    ) -> None:
        """Use ``<repo_root>/.lattice/sessions`` (made when first written)."""
        self._root = repo_root.resolve()
        self._now = now or (lambda: datetime.now(UTC))
        self._token = token

    @property
    def directory(self) -> Path:
        """Where the session files live."""
        return lattice_dir(self._root) / "sessions"

    def new(self) -> Session:
        """Create a session and make it the current one."""
        session = Session(
            id=f"s-{self._token(6)}",
            created_at=self._now().isoformat(timespec="seconds").replace("+00:00", "Z"),
        )
        self._save(session)
        atomic_write(self.directory / "current", session.id.encode(), root=self._root)
        return session

    def current(self, *, create: bool = True) -> Session:
        """The current session (a new one when there is none and ``create``).

        Raises:
            SessionNotFoundError: There is none and ``create`` is false, or the current
                pointer names a missing session.
        """
        pointer = self.directory / "current"
        if not pointer.is_file():
            if create:
                return self.new()
            raise SessionNotFoundError(
                "this repository has no current session", hint="Run `lattice session new`."
            )
        return self.get(pointer.read_text(encoding="utf-8").strip())

    def get(self, session_id: str) -> Session:
        """Read session ``session_id``.

        Raises:
            SessionNotFoundError: No such session (or a malformed id).
            SessionError: The session file is damaged.
        """
        if not SESSION_ID_PATTERN.match(session_id):
            raise SessionNotFoundError(
                f"{session_id[:40]!r} is not a session id", hint="Ids look like s-0123456789ab."
            )
        path = self.directory / f"{session_id}.json"
        if not path.is_file():
            raise SessionNotFoundError(
                f"no session {session_id}", hint="List them with `lattice session show`."
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Session(
                id=str(data["id"]),
                created_at=str(data["createdAt"]),
                epoch=int(data["epoch"]),
                risk_floor=_risk(str(data["riskFloor"])),
                runs=tuple(str(run) for run in data["runs"]),
                resets=int(data["resets"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise SessionError(
                f"session {session_id} is damaged: {exc}", hint="Start a new session."
            ) from None

    def reset(self, session_id: str) -> Session:
        """Start a new grant epoch (every earlier handle stops lowering); keep the history.

        Raises:
            SessionNotFoundError: No such session.
        """
        session = self.get(session_id)
        reset = replace(session, epoch=session.epoch + 1, resets=session.resets + 1)
        self._save(reset)
        return reset

    def record_run(self, session: Session, run_id: str, risk: Risk) -> Session:
        """Append ``run_id`` and raise the risk floor to ``risk`` when higher."""
        floor = risk if _RISK_ORDER[risk] > _RISK_ORDER[session.risk_floor] else session.risk_floor
        updated = replace(session, runs=(*session.runs, run_id), risk_floor=floor)
        self._save(updated)
        return updated

    def _save(self, session: Session) -> None:
        data = json.dumps(session.to_wire(), sort_keys=True, indent=1).encode()
        atomic_write(self.directory / f"{session.id}.json", data, root=self._root)


def _risk(value: str) -> Risk:
    if value == "low":
        return "low"
    if value == "high":
        return "high"
    if value == "medium":
        return "medium"
    raise ValueError(f"unknown risk {value!r}")
