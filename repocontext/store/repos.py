"""The stored records of a repository: its registration record and its embedding status.

The registration record (``repo/{id}`` in the structural tree) holds the root, when it was
registered, the kept walk filters, the counters and run status the index keeps there and the
memory default TTL. The embedding status (``repo/{id}/vec/status`` in the vector metadata tree)
is what the last or current embedding pass recorded. Both are parsed here, once, into frozen
values (:func:`read_repo`, :func:`read_embed_status`); the camelCase names stay in this module.
Writers keep writing the stored shape; :func:`stored_repo_value` gives them the value as stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from repocontext.errors import InvalidKeyError
from repocontext.store.keys import repo_key, vec_key
from repocontext.store.records import Value
from repocontext.store.store import Store
from repocontext.store.trees import STRUCTURAL, VECTOR_METADATA

__all__ = [
    "MEMORY_DEFAULT_TTL_FIELD",
    "EmbedStatus",
    "RepoRecord",
    "read_embed_status",
    "read_repo",
    "stored_repo_value",
]

MEMORY_DEFAULT_TTL_FIELD: Final = "memoryDefaultTtlSeconds"
"""The field of the registration record holding the TTL new memory entries get."""


@dataclass(frozen=True, slots=True)
class RepoRecord:
    """A repository's registration record, as stored.

    Attributes:
        repo_id: The repository id.
        root: Absolute, symlink-free path of the repository root (as registered).
        registered_at: When it was registered (ISO 8601, UTC).
        files: Files in its index.
        indexed_at: When its last index pass finished, or ``None`` (never, or reset).
        vectors: Vectors the index recorded (the embedding status holds the live count).
        last_ingested_at: When the last file change was ingested, or ``None``.
        indexed_commit: Git commit the index reflects, or ``None``.
        filters: The kept walk filters in their stored form (``None``: the defaults); the
            index parses them (``WalkOptions.from_wire``).
        run: The last or current index run as the index recorded it (``None``: no run); the
            index parses it (``repocontext.index.run.status``).
        memory_default_ttl_seconds: The TTL new memory entries get (``None``: durable).
        projections_epoch: The epoch of the run that last wrote the xref projections.
        projections_dirty: A run began changing nodes and has not rebuilt the projections.
        projections_format: The projection format the projections were written in.
        projections_go_module: The Go module the projections were resolved with.
        projections_stamped: The record holds a projection stamp (its Go module may be
            ``None``: stamped without one).
    """

    repo_id: str
    root: str
    registered_at: str | None = None
    files: int = 0
    indexed_at: str | None = None
    vectors: int = 0
    last_ingested_at: str | None = None
    indexed_commit: str | None = None
    filters: dict[str, Value] | None = None
    run: dict[str, Value] | None = None
    memory_default_ttl_seconds: float | None = None
    projections_epoch: str | None = None
    projections_dirty: bool = False
    projections_format: int | None = None
    projections_go_module: str | None = None
    projections_stamped: bool = False

    @property
    def indexing(self) -> bool:
        """Whether an index run is recorded as running (its process may be gone)."""
        return self.run is not None and self.run.get("status") == "running"

    @classmethod
    def of_value(cls, repo_id: str, value: Value) -> RepoRecord:
        """Parse a stored registration record (anything not a mapping reads as empty)."""
        fields = value if isinstance(value, dict) else {}
        filters, run = fields.get("filters"), fields.get("index")
        ttl = fields.get(MEMORY_DEFAULT_TTL_FIELD)
        return cls(
            repo_id=repo_id,
            root=str(fields.get("root") or ""),
            registered_at=_opt_str(fields.get("registeredAt")),
            files=_int(fields.get("files")),
            indexed_at=_opt_str(fields.get("indexedAt")),
            vectors=_int(fields.get("vectors")),
            last_ingested_at=_opt_str(fields.get("lastIngestedAt")),
            indexed_commit=_opt_str(fields.get("indexedCommit")),
            filters=dict(filters) if isinstance(filters, dict) else None,
            run=dict(run) if isinstance(run, dict) else None,
            memory_default_ttl_seconds=(
                float(ttl) if isinstance(ttl, int | float) and not isinstance(ttl, bool) else None
            ),
            projections_epoch=_opt_str(fields.get("projectionsEpoch")),
            projections_dirty=bool(fields.get("projectionsDirty")),
            projections_format=_opt_int(fields.get("projectionsFormat")),
            projections_go_module=_opt_str(fields.get("projectionsGoModule")),
            projections_stamped="projectionsGoModule" in fields,
        )


@dataclass(frozen=True, slots=True)
class EmbedStatus:
    """What the last or current embedding pass of a repository recorded.

    Attributes:
        status: ``running``, ``completed`` or ``failed`` (``None``: no pass yet).
        space: The vector space id of the pass (embedder and dimensions).
        chunks_done: Chunks embedded so far.
        chunks_total: Chunks the pass embeds.
        vectors: Vectors of the planes on disk.
        finished_at: When a completed pass ended (ISO 8601, UTC).
        servable: A running pass's planes on disk are those of a completed pass in its space.
        pid: The process running the pass (``None`` when not running).
    """

    status: str | None = None
    space: str | None = None
    chunks_done: int = 0
    chunks_total: int = 0
    vectors: int = 0
    finished_at: str | None = None
    servable: bool = False
    pid: int | None = None

    @property
    def recorded(self) -> bool:
        """Whether any pass recorded a status."""
        return self.status is not None

    @property
    def planes_complete(self) -> bool:
        """Whether the planes on disk are those of a completed pass."""
        return self.status == "completed" or (self.status == "running" and self.servable)

    @classmethod
    def of_value(cls, value: Value) -> EmbedStatus:
        """Parse a stored embedding status (anything not a mapping: no pass yet)."""
        if not isinstance(value, dict):
            return cls()
        pid = value.get("pid")
        return cls(
            status=_opt_str(value.get("status")),
            space=_opt_str(value.get("space")),
            chunks_done=_int(value.get("chunksDone")),
            chunks_total=_int(value.get("chunksTotal")),
            vectors=_int(value.get("vectors")),
            finished_at=_opt_str(value.get("finishedAt")),
            servable=bool(value.get("servable")),
            pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        )


def read_repo(store: Store, repo_id: str) -> RepoRecord | None:
    """``repo_id``'s registration record, or ``None`` when none is registered.

    An id no key can hold (empty, too long, control characters) is simply not registered.
    """
    value = stored_repo_value(store, repo_id)
    return RepoRecord.of_value(repo_id, value) if value is not None else None


def stored_repo_value(store: Store, repo_id: str) -> dict[str, Value] | None:
    """A copy of the stored registration record, for writers that put it back changed.

    ``None`` when no repository ``repo_id`` is registered (or no key can hold the id).
    """
    try:
        record = store.get(STRUCTURAL, repo_key(repo_id))
    except InvalidKeyError:
        return None
    return dict(record.value) if record is not None and isinstance(record.value, dict) else None


def read_embed_status(store: Store, repo_id: str) -> EmbedStatus:
    """The embedding status of ``repo_id`` (an empty one before any pass)."""
    record = store.get(VECTOR_METADATA, vec_key(repo_id, "status"))
    return EmbedStatus.of_value(record.value if record is not None else None)


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _opt_int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if float(value).is_integer() else None


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
