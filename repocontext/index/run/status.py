"""A run's status: the counters a job records in the repository record, and reading them back.

An :class:`~repocontext.index.run.job.IndexJob` keeps an :class:`IndexProgress` and writes it
with its status into the repository record as it goes (:func:`run_record`); any process reads
that back as an :class:`IndexStatus` (:func:`recorded_status`), where a ``running`` run whose
process is gone is ``failed``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from repocontext.store import Clock, EmbedStatus, Value
from repocontext.store.clock import iso_utc

__all__ = [
    "HOST",
    "IndexProgress",
    "IndexStatus",
    "ProgressFn",
    "RunRecord",
    "pid_alive",
    "recorded_status",
    "run_record",
]

HOST: Final = socket.gethostname()
"""The host a run records beside its pid: a pid means something only on its own host (several
servers on other machines may share one store)."""


@dataclass
class IndexProgress:
    """Live counters of a run (also what ``index_status`` reports)."""

    phase: str = "walking"
    files_seen: int = 0
    files_unchanged: int = 0
    files_read: int = 0
    files_added: int = 0
    files_updated: int = 0
    files_touched: int = 0
    files_removed: int = 0
    files_skipped: int = 0
    symbols: int = 0
    projection_writes: int = 0
    projection_deletes: int = 0
    issues: list[Value] = field(default_factory=list)

    def counters(self) -> dict[str, Value]:
        """Return the counters as the wire dict."""
        return {
            "filesSeen": self.files_seen,
            "filesUnchanged": self.files_unchanged,
            "filesRead": self.files_read,
            "filesAdded": self.files_added,
            "filesUpdated": self.files_updated,
            "filesTouched": self.files_touched,
            "filesRemoved": self.files_removed,
            "filesSkipped": self.files_skipped,
            "symbols": self.symbols,
            "projectionWrites": self.projection_writes,
            "projectionDeletes": self.projection_deletes,
            "chunks": 0,
        }


ProgressFn = Callable[[IndexProgress, int, int], None]
"""Called with the progress, items done and items total of the current phase."""


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """What ``repocontext_index_status`` reports.

    Attributes:
        repo_id: The repository.
        status: ``none``, ``running``, ``completed`` or ``failed``.
        phase: ``walking``, ``parsing``, ``applying``, ``reconciling`` or ``embedding`` while
            running; ``None`` before any run and once the run completed.
        counters: File and chunk counters of the last or current run.
        attempt: How many runs were started for this repository.
        started_at: When the run started (ISO 8601 UTC).
        finished_at: When it ended.
        elapsed_ms: Its duration so far.
        error: ``{code, message}`` of a failed run.
        issues: Up to 50 skipped paths with their reason.
    """

    repo_id: str
    status: str
    phase: str | None = None
    counters: dict[str, Value] = field(default_factory=dict)
    attempt: int = 0
    started_at: str | None = None
    finished_at: str | None = None
    elapsed_ms: int = 0
    error: dict[str, Value] | None = None
    issues: list[Value] = field(default_factory=list)


def run_record(
    status: str,
    progress: IndexProgress,
    attempt: int,
    started: float,
    clock: Clock,
    error: dict[str, Value] | None,
) -> dict[str, Value]:
    """The ``index`` value of a repository record: a run's status, phase and counters now.

    A completed run is in no phase (``None``): the phase it ended in (``applying``, say) is
    history, and ``completed`` beside a live phase name reads as a run still working. A
    failed run keeps the phase it failed in.
    """
    now = clock.now()
    done = status in ("completed", "failed")
    value: dict[str, Value] = {
        "status": status,
        "phase": None if status == "completed" else progress.phase,
        "attempt": attempt,
        "pid": os.getpid(),
        "host": HOST,
        "startedAt": iso_utc(started),
        "finishedAt": iso_utc(now) if done else None,
        "elapsedMs": int((now - started) * 1000),
        "counters": progress.counters(),
        "issues": list(progress.issues[:50]),
        "error": error,
    }
    return value


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A run as :func:`run_record` stored it in the repository record (its ``index`` field).

    Attributes:
        status: ``running``, ``completed`` or ``failed``.
        phase: The phase it was in.
        attempt: How many runs were started for the repository.
        pid: The process running it.
        host: The host of that process (``None``: recorded before hosts were).
        started_at: When it started (ISO 8601 UTC).
        finished_at: When it ended.
        elapsed_ms: Its duration when recorded.
        counters: Its counters (the wire form of :meth:`IndexProgress.counters`).
        issues: Up to 50 skipped paths with their reason.
        error: ``{code, message}`` of a failed run.
    """

    status: str
    phase: str | None = None
    attempt: int = 0
    pid: int | None = None
    host: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    elapsed_ms: int = 0
    counters: dict[str, Value] = field(default_factory=dict)
    issues: list[Value] = field(default_factory=list)
    error: dict[str, Value] | None = None

    @classmethod
    def of_value(cls, value: Mapping[str, Value]) -> RunRecord:
        """Parse a stored run (the inverse of :func:`run_record`)."""
        pid, counters, error = value.get("pid"), value.get("counters"), value.get("error")
        host = value.get("host")
        issues, attempt, elapsed = value.get("issues"), value.get("attempt"), value.get("elapsedMs")
        return cls(
            status=str(value.get("status")),
            phase=_opt_str(value.get("phase")),
            attempt=int(attempt) if isinstance(attempt, int | float) else 0,
            pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
            host=host if isinstance(host, str) else None,
            started_at=_opt_str(value.get("startedAt")),
            finished_at=_opt_str(value.get("finishedAt")),
            elapsed_ms=int(elapsed) if isinstance(elapsed, int | float) else 0,
            counters=dict(counters) if isinstance(counters, dict) else {},
            issues=list(issues) if isinstance(issues, list) else [],
            error=dict(error) if isinstance(error, dict) else None,
        )


def recorded_status(
    repo_id: str,
    run: Mapping[str, Value] | None,
    embedding: EmbedStatus,
    *,
    alive: Callable[[RunRecord], bool],
) -> IndexStatus:
    """The status a repository record holds, as ``repocontext_index_status`` reports it.

    Args:
        repo_id: The repository.
        run: The record's stored run (what :func:`run_record` wrote), if any.
        embedding: The embedding pass's status (not recorded: none).
        alive: Whether the process that recorded the run (its pid on its host) still runs
            it (a ``running`` run whose process is gone reads as ``failed``).

    Returns:
        The status, with the embedding pass's counters and phase folded in.
    """
    if run is None:
        return IndexStatus(repo_id, "none")
    index = RunRecord.of_value(run)
    status, error = index.status, index.error
    if status == "running" and not alive(index):
        status = "failed"
        error = {"code": "index.interrupted", "message": "the run stopped before finishing"}
    # (a record written before completed runs dropped their phase still names the last one)
    phase = None if status == "completed" else index.phase
    counters = dict(index.counters)
    if embedding.recorded:
        counters["chunks"] = embedding.chunks_done
        counters["chunksTotal"] = embedding.chunks_total
        counters["vectors"] = embedding.vectors
        if status == "completed" and embedding.status == "running":
            status, phase = "running", "embedding"
            pid = embedding.pid
            if pid is not None and pid != os.getpid() and not pid_alive(pid):
                status = "failed"
                error = {
                    "code": "index.interrupted",
                    "message": "the embedding pass stopped before finishing; the next run "
                    "(or a server start) embeds what is missing",
                }
    return IndexStatus(
        repo_id=repo_id,
        status=status,
        phase=phase,
        counters=counters,
        attempt=index.attempt,
        started_at=index.started_at,
        finished_at=index.finished_at,
        elapsed_ms=index.elapsed_ms,
        error=error,
        issues=index.issues,
    )


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (signal 0 reaches it)."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None
