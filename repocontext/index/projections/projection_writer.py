"""Projections and the store: records written as a diff, deltas, states taken over.

:class:`ProjectionWriter` receives the records a
:class:`~repocontext.index.projections.projection.ProjectionState` emits and makes the stored
projections of one repository equal to them: a record whose stored value has the same digest
is skipped, any other is written, and when the writer finishes, every stored record no
emission named is deleted. Only the digests of
the stored records are held, and records are streamed to a batch as they come, so a full
build of a large repository never holds the record values. Records may arrive in several
rounds (the indexer emits symbol and package records while it still parses) before the
commit that emits the rest.

:func:`load_projections` gives a process that holds no state (a new ``repocontext index``,
a server starting) the state of the stored projections without recomputing their records:
the digests of the records a change recomputes are read off the stored bytes when it does,
so the next change is applied incrementally.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from repocontext.index.files.nodes import iter_file_nodes, node_reader
from repocontext.index.projections.digests import stored_views
from repocontext.index.projections.projection import (
    PROJECTION_FORMAT,
    Delta,
    ProjectionState,
    links_of_out_record,
    packed_digest,
)
from repocontext.store import STRUCTURAL, SYMBOL, XREF, RepoRecord, Store
from repocontext.store.keys import decode_component, family_prefix

__all__ = [
    "ProjectionDiff",
    "ProjectionWriter",
    "apply_delta",
    "load_projections",
    "projection_stamp",
    "rebuild_projections",
    "stored_digests",
]


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
        self._have = stored_digests(store, repo_id)
        self._batch = store.batch(commit_every=2000)
        self.written = 0
        self.deleted = 0

    def __call__(
        self, tree: str, key: str, value: Any, digest: bytes | None, packed: bytes | None
    ) -> None:
        """Receive one emitted record (the :data:`.projection.Emit` shape)."""
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


def stored_digests(store: Store, repo_id: str) -> dict[str, dict[str, bytes]]:
    """Tree -> key -> digest of every stored projection record of a repository.

    Read off the stored bytes of each value (nothing is decoded); equal to
    :func:`~repocontext.index.projections.projection.record_digest` of the decoded value.
    """
    prefixes = {
        STRUCTURAL: family_prefix(repo_id, "pkg"),
        SYMBOL: family_prefix(repo_id, "symbol"),
        XREF: family_prefix(repo_id, "xref"),
    }
    return {
        tree: {key: packed_digest(packed) for key, packed in store.iter_packed(tree, prefix)}
        for tree, prefix in prefixes.items()
    }


def projection_stamp(state: ProjectionState) -> dict[str, Any]:
    """The repository record's fields that let a later process adopt ``state``'s records."""
    return {
        "projectionsEpoch": state.epoch,
        "projectionsFormat": PROJECTION_FORMAT,
        "projectionsGoModule": state.go_module,
    }


def load_projections(store: Store, repo_id: str, repo: RepoRecord) -> ProjectionState | None:
    """The state of a repository's stored projections, or ``None`` when they can't be trusted.

    Trusted means: not marked dirty, stamped by :func:`projection_stamp` with this
    :data:`~repocontext.index.projections.projection.PROJECTION_FORMAT` (``repo`` is the repository
    record). The state carries the stamp's epoch and Go module, so a change of ``go.mod``
    since is a change like any other.
    """
    epoch = repo.projections_epoch
    if (
        epoch is None
        or repo.projections_dirty
        or repo.projections_format != PROJECTION_FORMAT
        or not repo.projections_stamped
    ):
        return None
    out = family_prefix(repo_id, "xref") + "out:"
    links = {
        path: links_of_out_record(path, record.value if isinstance(record.value, dict) else None)
        for record in store.iter_records(XREF, out, page_size=5000)
        for path in (decode_component(record.key[len(out) :]),)
    }
    state = ProjectionState.adopt(
        repo_id,
        iter_file_nodes(store, repo_id),
        repo.projections_go_module,
        stored_views(store),
        links,
        node_reader(store, repo_id),
    )
    state.epoch = epoch
    return state
