"""Dropping a repository's records from the store: all of them, or only its code index.

Two plans over the key grammar (:mod:`repocontext.store.keys`):

* **remove** — every record under ``repo/{id}/`` in every tree (file and package nodes,
  symbols, content, cross references, memory, sessions, vector records), then the
  registration ``repo/{id}`` itself. The registration goes last, so an interrupted removal
  leaves the repository listed and a second call finishes the job.
* **reset** — the code index only: every record under ``repo/{id}/`` in every tree except
  memory and sessions. The registration is kept but rewritten first without its index fields
  (``files``, ``indexedAt``, ``vectors``, ``lastIngestedAt``, ``indexedCommit``, the run
  status, the projection epoch) and marked ``projectionsDirty``, so nothing treats the
  repository as indexed while the sweep runs and the next run rebuilds every projection.
  File nodes are swept before their content, so an interrupted reset never leaves a node
  whose content is gone (a later run would take such a file for unchanged).

Deletes are CRDT tombstones written in batches of :data:`PAGE`; a tombstone wins a merge
over the state it replaced, so a replica or an archive holding the old records does not bring
them back. Records already expired but not yet swept are tombstoned too. Files on disk are
never touched. Projections kept outside the store (the keyword index, the vector plane) and
in-memory state belong to the services that hold them; :class:`repocontext.workspace.Workspace`
drops those around these functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from repocontext.errors import NotFoundError
from repocontext.store import MEMORY, SESSION, STRUCTURAL, TREES, Store, Value
from repocontext.store.keys import repo_key, repo_prefix

__all__ = [
    "CODE_INDEX_TREES",
    "PAGE",
    "IndexReset",
    "RepoRemoval",
    "remove_repo_records",
    "reset_index_records",
    "short_tree_name",
]

PAGE: Final = 1000
"""Records read, and tombstones committed, per transaction."""
CODE_INDEX_TREES: Final[tuple[str, ...]] = tuple(t for t in TREES if t not in (MEMORY, SESSION))
"""The trees a reset sweeps, in sweep order (the structural tree, with the file nodes, first)."""
_INDEX_FIELDS: Final = ("index", "projectionsEpoch")
_TREE_PREFIX: Final = "repo-context-"


@dataclass(frozen=True, slots=True)
class RepoRemoval:
    """What removing a repository deleted.

    Attributes:
        repo_id: The repository.
        existed: True when it was registered.
        removed: Tombstones written per tree (short tree names, every tree listed).
        elapsed_ms: How long the sweep took.
    """

    repo_id: str
    existed: bool
    removed: dict[str, int]
    elapsed_ms: int

    @property
    def total(self) -> int:
        """Tombstones written over all trees."""
        return sum(self.removed.values())


@dataclass(frozen=True, slots=True)
class IndexReset:
    """What resetting a repository's code index deleted.

    Attributes:
        repo_id: The repository.
        entries_deleted: Tombstones written over all swept trees.
        trees_swept: The trees swept (short names), in sweep order.
        removed: Tombstones written per swept tree.
        memory_preserved: Always True: memory entries and sessions are not touched.
        elapsed_ms: How long the reset took.
    """

    repo_id: str
    entries_deleted: int
    trees_swept: tuple[str, ...]
    removed: dict[str, int]
    memory_preserved: bool
    elapsed_ms: int


def short_tree_name(tree: str) -> str:
    """``repo-context-structural`` -> ``structural`` (the names results use)."""
    return tree.removeprefix(_TREE_PREFIX)


def remove_repo_records(store: Store, repo_id: str) -> RepoRemoval:
    """Tombstone every record of ``repo_id`` in every tree, the registration last.

    An unknown repository is not an error: nothing is deleted and every count is zero
    (unless stray records were left under its prefix, which are deleted and counted).

    Raises:
        InvalidKeyError: ``repo_id`` cannot be a key component.
        StoreError: The store could not be written.
    """
    started = store.clock.now()
    key = repo_key(repo_id)
    existed = store.get(STRUCTURAL, key) is not None
    removed = {short_tree_name(tree): _sweep(store, tree, repo_prefix(repo_id)) for tree in TREES}
    removed[short_tree_name(STRUCTURAL)] += _tombstone(store, STRUCTURAL, [key])
    return RepoRemoval(repo_id, existed, removed, _elapsed_ms(store, started))


def reset_index_records(store: Store, repo_id: str) -> IndexReset:
    """Drop the code index of ``repo_id`` and keep its memory, sessions and registration.

    Raises:
        NotFoundError: ``repo_id`` is not registered.
        InvalidKeyError: ``repo_id`` cannot be a key component.
        StoreError: The store could not be written.
    """
    started = store.clock.now()
    key = repo_key(repo_id)
    record = store.get(STRUCTURAL, key)
    if record is None:
        raise NotFoundError(f"no repository {repo_id!r} is registered")
    store.put(STRUCTURAL, key, _unindexed(record.value))
    removed = {short_tree_name(t): _sweep(store, t, repo_prefix(repo_id)) for t in CODE_INDEX_TREES}
    return IndexReset(
        repo_id=repo_id,
        entries_deleted=sum(removed.values()),
        trees_swept=tuple(removed),
        removed=removed,
        memory_preserved=True,
        elapsed_ms=_elapsed_ms(store, started),
    )


def _unindexed(value: Value) -> dict[str, Value]:
    """The registration without anything its index runs recorded."""
    kept = (
        {k: v for k, v in value.items() if k not in _INDEX_FIELDS}
        if isinstance(value, dict)
        else {}
    )
    kept.update(
        files=0,
        indexedAt=None,
        vectors=0,
        lastIngestedAt=None,
        indexedCommit=None,
        projectionsDirty=True,
    )
    return kept


def _sweep(store: Store, tree: str, prefix: str) -> int:
    """Tombstone every record under ``prefix`` (expired ones included); return how many."""
    deleted = 0
    token: str | None = None
    while True:
        page = store.scan(tree, prefix, limit=PAGE, token=token, include_deleted=True)
        deleted += _tombstone(store, tree, [r.key for r in page.records if not r.deleted])
        if page.next_token is None:
            return deleted
        token = page.next_token


def _tombstone(store: Store, tree: str, keys: list[str]) -> int:
    if not keys:
        return 0
    with store.batch(commit_every=PAGE) as batch:
        for key in keys:
            batch.delete(tree, key)
    return batch.changed


def _elapsed_ms(store: Store, started: float) -> int:
    return max(0, int((store.clock.now() - started) * 1000))
