"""Writing projections to the store: a state's records as a diff, or an update's delta.

:class:`ProjectionWriter` receives the records a :class:`~repocontext.index.projection.
ProjectionState` emits and makes the stored projections of one repository equal to them:
a record whose stored value has the same digest is skipped, any other is written, and when
the writer finishes, every stored record no emission named is deleted. Only the digests of
the stored records are held, and records are streamed to a batch as they come, so a full
build of a large repository never holds the record values. Records may arrive in several
rounds (the indexer emits symbol and package records while it still parses) before the
commit that emits the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from repocontext.index.projection import Delta, ProjectionState, record_digest
from repocontext.store import STRUCTURAL, SYMBOL, XREF, Store
from repocontext.store.keys import family_prefix

__all__ = ["ProjectionDiff", "ProjectionWriter", "apply_delta", "rebuild_projections"]


@dataclass(frozen=True, slots=True)
class ProjectionDiff:
    """What :func:`rebuild_projections` or :func:`apply_delta` wrote."""

    written: int
    deleted: int


class ProjectionWriter:
    """An emit target that writes the difference to the stored projections.

    Its batch commits every 2,000 writes as records stream in; :meth:`finish` commits the
    rest. A build that fails before finishing leaves its projections marked dirty (the
    indexer sees to that), so a partial write is redone by the next run.
    """

    def __init__(self, store: Store, repo_id: str) -> None:
        """Read the digests of the repository's stored projection records."""
        prefixes = {
            STRUCTURAL: family_prefix(repo_id, "pkg"),
            SYMBOL: family_prefix(repo_id, "symbol"),
            XREF: family_prefix(repo_id, "xref"),
        }
        self._have = {
            tree: {
                r.key: record_digest(r.value)
                for r in store.iter_records(tree, prefix, page_size=5000)
            }
            for tree, prefix in prefixes.items()
        }
        self._batch = store.batch(commit_every=2000)
        self.written = 0
        self.deleted = 0

    def __call__(
        self, tree: str, key: str, value: Any, digest: bytes | None, packed: bytes | None
    ) -> None:
        """Receive one emitted record (the :data:`~repocontext.index.projection.Emit` shape)."""
        if self._have[tree].pop(key, None) == digest:
            return
        if value is None:
            self._batch.delete(tree, key)
            self.deleted += 1
        else:
            self._batch.put(tree, key, value, packed=packed, key_checked=True)
            self.written += 1

    def finish(self) -> ProjectionDiff:
        """Delete the stored records no emission named and commit everything queued."""
        for tree, gone in self._have.items():
            for key in gone:
                self._batch.delete(tree, key)
                self.deleted += 1
            gone.clear()
        self._batch.flush()
        return ProjectionDiff(self.written, self.deleted)


def rebuild_projections(
    store: Store,
    repo_id: str,
    state: ProjectionState,
    go_module: str | None,
    writer: ProjectionWriter | None = None,
) -> ProjectionDiff:
    """Commit a state built from nothing and make the stored projections equal to it.

    ``writer``: the writer earlier rounds of the same build went to (its stored digests
    already account for them); by default a new one.
    """
    out = writer or ProjectionWriter(store, repo_id)
    state.commit(go_module, emit=out)  # on an error, writes still queued are dropped
    return out.finish()


def apply_delta(store: Store, delta: Delta) -> ProjectionDiff:
    """Write one update's delta."""
    written = deleted = 0
    with store.batch(commit_every=2000) as batch:
        for tree, changes in delta.items():
            for key, value in changes.items():
                if value is None:
                    batch.delete(tree, key)
                    deleted += 1
                else:
                    batch.put(tree, key, value)
                    written += 1
    return ProjectionDiff(written, deleted)
