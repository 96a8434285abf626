"""Sessions under .lattice/sessions: current pointer, epochs, risk floor, damaged files."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lattice_runtime.errors import SessionError, SessionNotFoundError, UnsafePathError
from lattice_runtime.session import SessionStore


def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def store(root: Path) -> SessionStore:
    tokens = iter(["a1a1a1a1a1a1", "b2b2b2b2b2b2"])
    return SessionStore(
        root, now=lambda: datetime(2026, 1, 2, tzinfo=UTC), token=lambda n: next(tokens)
    )


def test_a_new_session_becomes_current_and_reads_back_equal(tmp_path: Path) -> None:
    sessions = store(repo(tmp_path))
    made = sessions.new()
    assert made.id == "s-a1a1a1a1a1a1" and made.created_at == "2026-01-02T00:00:00Z"
    assert sessions.current() == made
    assert sessions.get(made.id) == made
    assert "/.lattice/" in (tmp_path / ".git/info/exclude").read_text()


def test_current_makes_a_session_only_when_asked_to(tmp_path: Path) -> None:
    sessions = store(repo(tmp_path))
    with pytest.raises(SessionNotFoundError):
        sessions.current(create=False)
    assert sessions.current().epoch == 1


def test_reset_bumps_the_epoch_and_keeps_the_runs(tmp_path: Path) -> None:
    sessions = store(repo(tmp_path))
    session = sessions.record_run(sessions.new(), "run-1", "medium")
    reset = sessions.reset(session.id)
    assert (reset.epoch, reset.resets, reset.runs) == (2, 1, ("run-1",))


def test_the_risk_floor_only_rises(tmp_path: Path) -> None:
    sessions = store(repo(tmp_path))
    session = sessions.record_run(sessions.new(), "run-1", "high")
    session = sessions.record_run(session, "run-2", "low")
    assert session.risk_floor == "high"
    assert sessions.get(session.id).runs == ("run-1", "run-2")


def test_malformed_ids_missing_and_damaged_sessions_are_clear_errors(tmp_path: Path) -> None:
    sessions = store(repo(tmp_path))
    with pytest.raises(SessionNotFoundError, match="not a session id"):
        sessions.get("../../etc/passwd")
    with pytest.raises(SessionNotFoundError, match="no session"):
        sessions.get("s-000000000000")
    made = sessions.new()
    (sessions.directory / f"{made.id}.json").write_text('{"id": 1}')
    with pytest.raises(SessionError, match="damaged"):
        sessions.get(made.id)


def test_a_symlinked_sessions_directory_is_refused(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".lattice").mkdir()
    (root / ".lattice" / "sessions").symlink_to(elsewhere)
    with pytest.raises(UnsafePathError):
        store(root).new()
    assert list(elsewhere.iterdir()) == []
