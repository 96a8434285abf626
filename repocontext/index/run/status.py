"""A run's status: the counters a job records in the repository record, and reading them back.

An :class:`~repocontext.index.run.job.IndexJob` keeps an :class:`IndexProgress` and writes it
with its status into the repository record as it goes (:func:`run_record`); any process reads
that back as an :class:`IndexStatus` (:func:`recorded_status`), where a ``running`` run whose
process is gone is ``failed``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from repocontext.store import Clock, Value
from repocontext.store.clock import iso_utc

__all__ = [
    "IndexProgress",
    "IndexStatus",
    "ProgressFn",
    "pid_alive",
    "recorded_status",
    "run_record",
]


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
        phase: ``walking``, ``parsing``, ``applying`` (or ``None`` before any run).
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
    """The ``index`` value of a repository record: a run's status, phase and counters now."""
    now = clock.now()
    done = status in ("completed", "failed")
    value: dict[str, Value] = {
        "status": status,
        "phase": progress.phase,
        "attempt": attempt,
        "pid": os.getpid(),
        "startedAt": iso_utc(started),
        "finishedAt": iso_utc(now) if done else None,
        "elapsedMs": int((now - started) * 1000),
        "counters": progress.counters(),
        "issues": list(progress.issues[:50]),
        "error": error,
    }
    return value


def recorded_status(
    repo_id: str,
    index: object,
    embedding: Mapping[str, Any],
    *,
    alive: Callable[[object], bool],
) -> IndexStatus:
    """The status a repository record holds, as ``repocontext_index_status`` reports it.

    Args:
        repo_id: The repository.
        index: The record's ``index`` value (what :func:`run_record` wrote), if any.
        embedding: The embedding pass's status record (empty: none).
        alive: Whether the process of a recorded pid still runs the run (a ``running`` run
            whose process is gone reads as ``failed``).

    Returns:
        The status, with the embedding pass's counters and phase folded in.
    """
    if not isinstance(index, dict):
        return IndexStatus(repo_id, "none")
    status = str(index.get("status"))
    error = index.get("error") if isinstance(index.get("error"), dict) else None
    if status == "running" and not alive(index.get("pid")):
        status = "failed"
        error = {"code": "index.interrupted", "message": "the run stopped before finishing"}
    phase, counters = index.get("phase"), dict(index.get("counters") or {})
    if embedding:
        counters["chunks"] = embedding.get("chunksDone", 0)
        counters["chunksTotal"] = embedding.get("chunksTotal", 0)
        counters["vectors"] = embedding.get("vectors", 0)
        if status == "completed" and embedding.get("status") == "running":
            status, phase = "running", "embedding"
            pid = embedding.get("pid")
            if isinstance(pid, int) and pid != os.getpid() and not pid_alive(pid):
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
        attempt=int(index.get("attempt") or 0),
        started_at=index.get("startedAt"),
        finished_at=index.get("finishedAt"),
        elapsed_ms=int(index.get("elapsedMs") or 0),
        error=error,
        issues=list(index.get("issues") or []),
    )


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (signal 0 reaches it)."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True
