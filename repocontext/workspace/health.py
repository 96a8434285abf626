"""Service and retrieval health: what ``repocontext_health`` and ``/health/ready`` report.

Retrieval phases (``HealthReport.retrieval_phase``):

* ``nothing_registered`` — no repository is registered; nothing to search yet (ready).
* ``building`` — some registered repository has no finished index yet (not ready).
* ``keyword_only`` — every repository is indexed, some without vectors (ready).
* ``serving`` — every repository is indexed with vectors (ready).

:func:`store_health` probes the store's engine itself (LMDB, or the PostgreSQL server of a
shared store): reachable or not, and how long one minimal read took.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from repocontext.errors import StoreError
from repocontext.store import Store
from repocontext.workspace.registry import RepoInfo

__all__ = [
    "GROUP",
    "HealthReport",
    "RepositoryHealth",
    "RetrievalPhase",
    "StoreHealth",
    "Verdict",
    "health_report",
    "store_health",
]

RetrievalPhase = Literal["serving", "keyword_only", "nothing_registered", "building"]
Verdict = Literal["serving", "keyword_only", "building", "unknown"]
GROUP: Final = "repocontext"


@dataclass(frozen=True, slots=True)
class RepositoryHealth:
    """Retrieval health of one repository.

    Attributes:
        verdict: ``serving``, ``keyword_only``, ``building`` or ``unknown``.
        reason: One sentence explaining the verdict.
        files: Files in its index.
        vectors_indexed: Vectors in its semantic index.
        indexed_at: When its last index pass finished, or ``None``.
    """

    verdict: Verdict
    reason: str
    files: int
    vectors_indexed: int
    indexed_at: str | None


@dataclass(frozen=True, slots=True)
class StoreHealth:
    """Whether the store's engine answers, and how fast.

    Attributes:
        engine: ``lmdb`` or ``postgresql``.
        location: The store's directory, or its database URL without the password.
        reachable: One minimal read succeeded.
        latency_ms: How long that read took (``None`` when it failed).
        error: Why it failed (``None`` when reachable).
    """

    engine: str
    location: str
    reachable: bool
    latency_ms: float | None
    error: str | None = None


def store_health(store: Store) -> StoreHealth:
    """Probe the store's engine once (no retry: a probe must answer fast)."""
    try:
        seconds = store.ping()
    except StoreError as exc:
        return StoreHealth(store.engine, store.location, False, None, exc.message)
    return StoreHealth(store.engine, store.location, True, round(seconds * 1000, 3))


@dataclass(frozen=True, slots=True)
class HealthReport:
    """Health of the service and its retrieval plane.

    Attributes:
        available: The service answered (reachability only).
        group: Always ``repocontext``.
        status: ``ok`` when the store answered a read.
        retrieval_ready: False only while the phase is ``building``.
        retrieval_phase: See the module docstring.
        repositories: Registered repositories.
        repository: Health of the repository asked about, when one was.
    """

    available: bool
    group: str
    status: str
    retrieval_ready: bool
    retrieval_phase: RetrievalPhase
    repositories: int
    repository: RepositoryHealth | None = None


def health_report(repos: Sequence[RepoInfo], repo_id: str | None = None) -> HealthReport:
    """The health of a store holding ``repos`` (and of ``repo_id``, when one is asked about)."""
    phase = _phase(repos)
    repository = None
    if repo_id is not None:
        known = next((r for r in repos if r.repo_id == repo_id), None)
        repository = _repository_health(repo_id, known)
    return HealthReport(
        available=True,
        group=GROUP,
        status="ok",
        retrieval_ready=phase != "building",
        retrieval_phase=phase,
        repositories=len(repos),
        repository=repository,
    )


def _phase(repos: Sequence[RepoInfo]) -> RetrievalPhase:
    if not repos:
        return "nothing_registered"
    if any(r.indexed_at is None for r in repos):
        return "building"
    if all(r.vectors > 0 for r in repos):
        return "serving"
    return "keyword_only"


def _repository_health(repo_id: str, info: RepoInfo | None) -> RepositoryHealth:
    if info is None:
        return RepositoryHealth(
            verdict="unknown",
            reason=f"no repository {repo_id!r} is registered; call repocontext_list_repos",
            files=0,
            vectors_indexed=0,
            indexed_at=None,
        )
    verdict: Verdict
    if info.indexed_at is None:
        verdict, reason = "building", "registered; its first index pass has not finished"
    elif info.vectors > 0:
        verdict, reason = "serving", "indexed with vectors; keyword and semantic search work"
    else:
        verdict, reason = "keyword_only", "indexed without vectors; search is keyword-only"
    return RepositoryHealth(
        verdict=verdict,
        reason=reason,
        files=info.files,
        vectors_indexed=info.vectors,
        indexed_at=info.indexed_at,
    )
