"""The index job: walk, read and parse what changed, write file nodes, rebuild projections.

Lifecycle (``status`` / ``phase`` as reported by ``repocontext_index_status``)::

    running/walking -> running/parsing -> running/applying -> completed   (or failed)

* Incremental: a file whose stat tuple (size, mtime_ns, inode) matches its node is not read;
  one whose bytes hash to the stored blob id only gets its stat tuple refreshed.
* Idempotent: a run over an unchanged tree writes nothing but its status.
* Resumable: file nodes are committed in groups as they are parsed, and the repository
  record carries ``projectionsDirty`` until the projections have been rebuilt, so a run
  killed at any point is completed by the next one, which ends with the same records.
* Projections: a job given the :class:`ProjectionState` of the previous run (the serving
  process keeps it) updates only the records its changes affect. Without one, or when the
  stored ``projectionsEpoch`` says another process wrote the projections since, it adopts
  the stored projections at its first change when their stamp allows
  (:func:`~repocontext.index.projections.projection_writer.load_projections`) and does the same;
  otherwise it rebuilds the state and writes the difference. A whole-tree run builds that
  state while it parses: each unchanged stored node and each new node is staged as it
  comes, so no file node is read back from the store, and its symbol and package records
  are written in groups as they accumulate (they need no other file), leaving only the
  links for after the parse.
* Scoped: a job with ``scope`` walks, compares and removes only under those prefixes (the
  reconcile loop refreshes the paths a watcher reported). Its phase is ``reconciling``
  throughout, and it records a status only once it finds a change, so refreshing paths
  that did not change (or that the filters exclude) writes nothing at all.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from repocontext.errors import RepoContextError
from repocontext.index.files.extract import Extracted, extract_all
from repocontext.index.files.fingerprint import git_index_blobs, is_binary_file
from repocontext.index.files.nodes import (
    NODE_FORMAT,
    file_node,
    iter_file_nodes,
    load_stats,
    node_reader,
    nodes_under,
    stat_of,
    touched_node,
)
from repocontext.index.files.walk import (
    WalkEntry,
    WalkOptions,
    WalkResult,
    in_scope,
    keyable_entries,
    walk,
)
from repocontext.index.model import FileOutline, NodeStat
from repocontext.index.projections.digests import stored_views, unheld
from repocontext.index.projections.projection import ProjectionState
from repocontext.index.projections.projection_writer import (
    ProjectionWriter,
    apply_delta,
    load_projections,
    projection_stamp,
    rebuild_projections,
)
from repocontext.index.run._collector import collector_paused
from repocontext.index.run.status import IndexProgress, ProgressFn, RunRecord, run_record
from repocontext.store import CONTENT, STRUCTURAL, Batch, Clock, RepoRecord, Store, Value
from repocontext.store.clock import iso_utc
from repocontext.store.keys import content_key, family_prefix, file_key, repo_key
from repocontext.tokens import DEFAULT_ENCODING

__all__ = ["IndexJob", "read_go_module"]

PROBE_IN_PROCESS: Final = 5_000
"""A rerun with at most this many files to read tells skipped binaries apart itself."""
COMMIT_EVERY: Final = 400
FLUSH_LOCAL_AT: Final = 20_000
"""A full build writes its symbol and package records once this many are pending (sorted
groups, while parsing goes on), instead of all of them after the parse."""
STATUS_INTERVAL_S: Final = 0.5


class IndexJob:
    """One indexing pass over one registered repository."""

    def __init__(
        self,
        store: Store,
        repo_id: str,
        root: Path,
        options: WalkOptions,
        *,
        clock: Clock,
        workers: int = 2,
        encoding: str = DEFAULT_ENCODING,
        on_progress: ProgressFn | None = None,
        state: ProjectionState | None = None,
        scope: Sequence[str] | None = None,
    ) -> None:
        """Prepare a pass; :meth:`run` executes it in the calling thread.

        Args:
            store: The store to write.
            repo_id: The registered repository.
            root: Its root directory.
            options: Walk filters.
            clock: Time source for status timestamps.
            workers: Parser processes for large runs.
            encoding: Token encoding of the counts.
            on_progress: Called as files are parsed.
            state: The projection state left by the previous run in this process, if any.
            scope: Repository-relative prefixes to restrict the run to (``None``: everything).
        """
        self.store = store
        self.repo_id = repo_id
        self.root = root
        self.options = options
        self.clock = clock
        self.workers = workers
        self.encoding = encoding
        self.progress = IndexProgress()
        self._on_progress = on_progress
        self._last_status = 0.0
        self._started = 0.0
        self._attempt = 0
        self._dirty_marked = False
        self.state = state
        self.scope = None if scope is None else tuple(scope)
        self._warm = False
        self._projected = False
        self._building: ProjectionState | None = None
        self._writer: ProjectionWriter | None = None
        self._stored: Mapping[str, NodeStat] = {}
        self._read_node = node_reader(store, repo_id)
        self._undecided: set[str] = set()  # stored paths read again or removed: staged then
        self._changes: dict[str, dict[str, Any] | None] = {}
        if self.scope is not None:
            self.progress.phase = "reconciling"

    def begin(self) -> None:
        """Record the run as started (``running``/``walking``, next attempt number)."""
        self._started = self.clock.now()
        repo = self._record()
        self._attempt = RunRecord.of_value(repo.run or {}).attempt + 1
        # The cached state still matches the stored projections only when the last writer of
        # the projections was the run that left it, and nothing was left half-done since.
        self._warm = (
            self.state is not None
            and self.state.epoch is not None
            and self.state.epoch == repo.projections_epoch
            and not repo.projections_dirty
        )
        self._status("running", force=True)

    def run(self) -> IndexProgress:
        """Run the pass to completion, recording status as it goes.

        Raises:
            RepoContextError: The pass failed (the status records the error first).
        """
        if not self._attempt:
            self.begin()
        try:
            with collector_paused():  # the run's objects are acyclic (see _collector)
                self._run()
        except RepoContextError as exc:
            self._status("failed", error={"code": exc.code, "message": exc.message}, force=True)
            raise
        except Exception as exc:
            error: dict[str, Value] = {
                "code": "index.failed",
                "message": f"{type(exc).__name__}: {exc}",
            }
            self._status("failed", error=error, force=True)
            raise
        return self.progress

    # -- phases ------------------------------------------------------------------------

    def _run(self) -> None:
        result = keyable_entries(walk(self.root, self.options, scope=self.scope), self.repo_id)
        self.progress.files_skipped = len(result.issues)
        self.progress.issues = [{"path": i.path, "reason": i.reason} for i in result.issues]
        changed = self._ingest(result)
        if changed or self._record().projections_dirty:
            self._project()
        self._finish(result, changed)

    def _ingest(self, result: WalkResult) -> bool:
        progress = self.progress
        self._phase("parsing")
        stored = self._stored_nodes()
        progress.files_seen = len(result.entries)
        todo = [
            e
            for e in result.entries
            if not (
                (stat := stored.get(e.path))
                and stat.matches(e.size, e.mtime_ns, e.inode, NODE_FORMAT)
                and (stat.token_encoding or DEFAULT_ENCODING) == self.encoding
                and stat.oversized == e.oversized  # the size cap changed
            )
        ]
        progress.files_unchanged = len(result.entries) - len(todo)
        if stored and self.options.exclude_binary and len(todo) <= PROBE_IN_PROCESS:
            todo = self._without_skipped_binaries(todo, stored)
        seen = {e.path for e in result.entries}
        removed = sorted(p for p in stored.keys() - seen if not result.unreadable(p))
        if not todo and not removed:
            return False
        index_blobs = git_index_blobs(self.root) if result.git else {}
        self._stored = stored
        self._undecided = {e.path for e in todo}.union(removed)
        changed = False
        with self.store.batch(commit_every=COMMIT_EVERY) as batch:
            skip = self.options.exclude_binary
            for item in extract_all(self.root, todo, self.encoding, self.workers, skip_binary=skip):
                changed |= self._apply_file(batch, item, stored.get(item.entry.path), index_blobs)
                self._tick(progress.files_read, len(todo))
            for path in removed:
                self._remove(batch, path)
                changed = True
        return changed

    def _without_skipped_binaries(
        self, todo: list[WalkEntry], stored: Mapping[str, NodeStat]
    ) -> list[WalkEntry]:
        """Drop the binary files a rerun would skip again, telling them here (8 KiB each).

        A skipped binary has no node, so every run reads it again; probed in this process,
        a rerun whose only candidates they are starts no parser processes at all.
        """
        kept = []
        for entry in todo:
            if entry.path not in stored and is_binary_file(self.root / entry.path):
                self.progress.files_read += 1
                self.progress.files_skipped += 1
            else:
                kept.append(entry)
        return kept

    def _apply_file(
        self,
        batch: Batch,
        item: Extracted,
        old: NodeStat | None,
        index_blobs: Mapping[str, str],
    ) -> bool:
        progress = self.progress
        progress.files_read += 1
        path = item.entry.path
        excluded = item.binary and self.options.exclude_binary
        if item.blob_id is None or excluded:  # vanished or unreadable since the walk, or binary
            progress.files_skipped += 1
            if not excluded:
                progress.issues.append({"path": path, "reason": item.issue or "unreadable"})
            if old is not None and not (item.issue or "").startswith("unreadable"):
                self._remove(batch, path)
                return True
            return False  # (a file that can't be read now keeps its node: nothing is lost)
        if (
            old is not None
            and old.blob_id == item.blob_id
            and old.format == NODE_FORMAT
            and (old.token_encoding or DEFAULT_ENCODING) == self.encoding
            and old.oversized == item.entry.oversized
        ):
            whole = self._read_node(path)
            if whole is not None:
                touched = touched_node(whole, item)
                batch.put(STRUCTURAL, file_key(self.repo_id, path), touched)
                self._unchanged(path, touched)
            progress.files_touched += 1
            return False
        if item.issue:
            progress.issues.append({"path": path, "reason": item.issue})
        self._mark_dirty()
        node = file_node(item, index_blobs.get(path), self.encoding)
        batch.put(STRUCTURAL, file_key(self.repo_id, path), node, key_checked=True)
        # The parsed outline is the node's outline only when the node has content.
        self._stage(path, node, item.outline if item.text is not None and item.language else None)
        if item.text is not None:
            batch.put(
                CONTENT,
                content_key(self.repo_id, path),
                {"text": item.text, "blobId": item.blob_id},
                key_checked=True,
            )
        elif old is not None and old.has_content:
            batch.delete(CONTENT, content_key(self.repo_id, path))
        if old is None:
            progress.files_added += 1
        else:
            progress.files_updated += 1
        return True

    def _stored_nodes(self) -> dict[str, NodeStat]:
        """The stat fields of the stored nodes in the run's scope."""
        if self.scope is None or "" in self.scope:
            return load_stats(self.store, self.repo_id)
        found: dict[str, NodeStat] = {}
        for prefix in self.scope:
            if prefix.endswith("/"):
                start = family_prefix(self.repo_id, "file") + prefix
                stats = (stat_of(node) for node in nodes_under(self.store, start))
                found.update((stat.path, stat) for stat in stats)
            else:
                node = self._read_node(prefix)
                if node is not None:
                    found[prefix] = stat_of(node)
        return {p: n for p, n in found.items() if in_scope(p, self.scope)}

    def _remove(self, batch: Batch, path: str) -> None:
        self._mark_dirty()
        batch.delete(STRUCTURAL, file_key(self.repo_id, path))
        batch.delete(CONTENT, content_key(self.repo_id, path))
        self.progress.files_removed += 1
        self._stage(path, None)

    def _stage(
        self, path: str, node: dict[str, Any] | None, outline: FileOutline | None = None
    ) -> None:
        """Record a changed file for the projections.

        A warm run collects the changes for an incremental update. A whole-tree run without
        a state builds one from nothing as it goes: at the first change it stages every
        stored node (files unchanged so far; later changes replace theirs), then each change,
        so no node is read back from the store afterwards. A run that changes nothing never
        builds one.
        """
        if self._warm:
            self._changes[path] = node
            return
        if self.scope is not None:
            return  # a scoped run without a state rebuilds from the store afterwards
        building = self._building
        if building is None:
            building = self._building = ProjectionState(self.repo_id)
            building.records = unheld()  # each file is staged once: the writer compares
            self._writer = ProjectionWriter(self.store, self.repo_id)
            if self._stored:  # the whole nodes, read once (stored holds stat fields only)
                for stored_node in iter_file_nodes(self.store, self.repo_id):
                    stored_path = str(stored_node.get("path"))
                    if stored_path not in self._undecided:  # (staged when decided)
                        building.stage(stored_path, stored_node)
                        self._flush_local(building)
        building.stage(path, node, outline)
        self._flush_local(building)

    def _unchanged(self, path: str, node: dict[str, Any]) -> None:
        """A file read again with the same bytes: staged now, or with the stored nodes later."""
        if self._building is not None:
            self._building.stage(path, node)
            self._flush_local(self._building)
        else:
            self._undecided.discard(path)

    def _flush_local(self, building: ProjectionState) -> None:
        # The symbol and package records depend on the staged files alone: written while
        # the workers still parse, they are off the single-threaded tail of the run.
        if building.pending_local >= FLUSH_LOCAL_AT and self._writer is not None:
            building.flush_local(self._writer)

    def _project(self) -> None:
        self._phase("applying")
        self._status("running", force=True)
        go_module = read_go_module(self.root)
        if self._warm and self.state is not None:
            state = self.state
            diff = apply_delta(self.store, state.update(self._changes, go_module))
        else:
            state, writer = self._building or self._staged_from_store(), self._writer
            if writer is not None:  # built while parsing; every node is written now
                state.flush_local(writer)
                state.release_definitions(self._read_node)
            diff = rebuild_projections(self.store, self.repo_id, state, go_module, writer)
        state.release_definitions(self._read_node)
        state.records = stored_views(self.store)  # written: the store answers from now on
        state.epoch = uuid.uuid4().hex
        self.state = state
        self._projected = True
        self.progress.projection_writes = diff.written
        self.progress.projection_deletes = diff.deleted
        self.progress.symbols = state.symbol_count

    def _staged_from_store(self) -> ProjectionState:
        state = ProjectionState(self.repo_id)
        state.records = unheld()  # each file is staged once: the writer compares
        for node in iter_file_nodes(self.store, self.repo_id):
            state.stage(str(node.get("path")), node)
        return state

    def _finish(self, result: WalkResult, changed: bool) -> None:
        if self.scope is not None and not changed and not self._projected:
            return  # a refresh that found nothing to do leaves no trace
        repo = self._repo()
        now = iso_utc(self.clock.now())
        files = (
            self.state.file_count
            if self.state is not None and (self._warm or self._projected)
            else self.store.count(STRUCTURAL, family_prefix(self.repo_id, "file"))
        )
        repo.update(
            files=files,
            indexedAt=now,
            indexedCommit=_head_commit(self.root) if result.git else None,
            projectionsDirty=False,
        )
        if self.state is not None and self.state.epoch is not None:
            repo.update(projection_stamp(self.state))
        if changed or not RepoRecord.of_value(self.repo_id, repo).last_ingested_at:
            repo["lastIngestedAt"] = now
        repo["index"] = self._status_value("completed", None)
        self.store.put(STRUCTURAL, repo_key(self.repo_id), repo)

    # -- status ------------------------------------------------------------------------

    def _repo(self) -> dict[str, Any]:
        """The stored repository record, to rewrite (read it through :meth:`_record`)."""
        record = self.store.get(STRUCTURAL, repo_key(self.repo_id))
        value = record.value if record is not None else None
        return dict(value) if isinstance(value, dict) else {}

    def _record(self) -> RepoRecord:
        return RepoRecord.of_value(self.repo_id, self._repo())

    def _mark_dirty(self) -> None:
        # Durable before the first changed node can commit, so a crash after it leaves the
        # projections marked for rebuilding; runs that change nothing never set it.
        if self._dirty_marked:
            return
        self._dirty_marked = True
        repo = self._repo()
        record = RepoRecord.of_value(self.repo_id, repo)
        if not self._warm:
            # Still clean: take the stored projections over (no record is recomputed), so
            # this run's changes are applied to them incrementally instead of rebuilding all.
            adopted = load_projections(self.store, self.repo_id, record)
            if adopted is not None:
                self.state, self._warm = adopted, True
        if not record.projections_dirty:
            repo["projectionsDirty"] = True
            self.store.put(STRUCTURAL, repo_key(self.repo_id), repo)

    def _phase(self, name: str) -> None:
        if self.scope is None:
            self.progress.phase = name

    def _tick(self, done: int, total: int) -> None:
        if self._on_progress is not None:
            self._on_progress(self.progress, done, total)
        self._status("running")

    def _status(
        self, status: str, *, error: dict[str, Value] | None = None, force: bool = False
    ) -> None:
        now = time.monotonic()
        if not force and now - self._last_status < STATUS_INTERVAL_S:
            return
        if self.scope is not None and not self._dirty_marked and status != "failed":
            return  # a refresh shows in the status only once it changes something
        self._last_status = now
        repo = self._repo()
        repo["index"] = self._status_value(status, error)
        self.store.put(STRUCTURAL, repo_key(self.repo_id), repo)

    def _status_value(self, status: str, error: dict[str, Value] | None) -> dict[str, Value]:
        return run_record(status, self.progress, self._attempt, self._started, self.clock, error)


def read_go_module(root: Path) -> str | None:
    """Return the ``module`` path of the root ``go.mod``, if there is one."""
    try:
        for line in (root / "go.mod").read_text(encoding="utf-8").splitlines():
            if line.startswith("module "):
                return line.split()[1].strip()
    except (OSError, IndexError):
        return None
    return None


def _head_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None
