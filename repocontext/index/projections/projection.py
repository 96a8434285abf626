"""Projections of the code index, derived from file nodes and maintained incrementally.

* symbol tree ``repo/{id}/symbol/{fq}``: where a fully qualified name is defined;
* xref tree ``repo/{id}/xref/name:{name}``: the files using a defined bare name (the first
  200 in path order, and their count), one record per name however many symbols share it;
* xref tree ``repo/{id}/xref/out:{path}``: a file's resolved imports and references;
  ``repo/{id}/xref/in:{path}``: its dependents and covering tests (the reverse projection);
* structural tree ``repo/{id}/pkg/{dir}``: package (directory) nodes.

:class:`ProjectionState` holds what they are computed from (per-file facts, the link graph
and its reverse, the symbol and name indexes) and compares each record it recomputes by
digest (:mod:`repocontext.index.projections.digests`; values are never held). Changed file nodes are
staged one at a time (:meth:`~ProjectionState.stage`, as an indexing run parses them) and
:meth:`~ProjectionState.commit` recomputes only the records they can affect, as a
:class:`Delta` or streamed to a writer; building from nothing is the same commit with every
file staged, so the full and the incremental path are one code path. What a change affects:

* the changed files' own links, the links of files referencing a name whose defining files
  (or whose member-only definers) changed, and of files importing a barrel whose re-exports
  changed; every link when the file set, a Java/C# package, a manifest's package name or the
  Go module changed (import resolution depends on them);
* the reverse records of every target whose incoming links changed;
* the name records of names whose users or definitions changed, the symbol records of the
  changed files' qualified names, the package records of directories that gained or lost files.

Symbol and package records depend on the staged files alone, so a state being built emits
them before the commit (:meth:`~ProjectionState.flush_local`) while the indexer still parses.
:mod:`repocontext.index.projections.projection_writer` writes what a state emits to the store.
"""

from __future__ import annotations

import bisect
import posixpath
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from operator import itemgetter
from typing import Any, Final

from repocontext.errors import InvalidKeyError
from repocontext.index.links._naming import is_covered_source, naming_index
from repocontext.index.links.coverage import test_links
from repocontext.index.links.facts import NO_FACTS, Definitions, Facts, definitions_of, file_facts
from repocontext.index.links.references import reference_links
from repocontext.index.links.repo_files import PACKAGED, RepoFiles
from repocontext.index.links.resolve import refresh_reexports, resolve_imports, through_reexports
from repocontext.index.model import IMPORT, FileOutline, Link
from repocontext.index.parsing.manifests import MANIFESTS
from repocontext.index.projections.digests import DigestMap, packed_digest, record_digest
from repocontext.index.projections.names import Affected, NameIndex
from repocontext.index.projections.xref_records import (
    in_record,
    links_of_out_record,
    name_record,
    out_record,
    pkg_record,
    symbol_record,
)
from repocontext.store import STRUCTURAL, SYMBOL, XREF
from repocontext.store.keys import pkg_key, symbol_key, xref_key
from repocontext.store.records import pack

__all__ = [
    "PROJECTION_FORMAT",
    "Delta",
    "Emit",
    "NodeReader",
    "ProjectionState",
    "in_record",
    "links_of_out_record",
    "name_record",
    "out_record",
    "packed_digest",
    "record_digest",
]

PROJECTION_FORMAT: Final = 20
"""Version of what the records hold and how they are computed: a change must bump it, so
older stored projections are rebuilt, not adopted (tests/index/test_projection_format.py)."""
TREES: Final = (STRUCTURAL, SYMBOL, XREF)

NodeReader = Callable[[str], Mapping[str, Any] | None]
"""Reads a written file node back: path -> the node, ``None`` when there is none."""
Delta = dict[str, dict[str, Any]]
"""Tree -> key -> new value, ``None`` for a record to delete."""

Emit = Callable[[str, str, Any, "bytes | None", "bytes | None"], None]
"""Receives each changed record: tree, key, new value (``None``: delete), its digest and its
packed bytes (:func:`repocontext.store.records.pack`, ``None`` with a deletion)."""


class ProjectionState:
    """The projections of one repository and what they are computed from, kept in memory."""

    def __init__(self, repo_id: str, read_node: NodeReader | None = None) -> None:
        """Start empty: no files, no records.

        ``read_node``: where the written file nodes can be read back (path -> node or
        ``None``). With one, the state keeps a file's definitions only until it has emitted
        the records they make, and reads a file's from its node when another file's change
        needs them (the records of a qualified name several files define); without, it keeps
        every file's (see :meth:`release_definitions`).
        """
        self.repo_id = repo_id
        self._read_node = read_node
        self._definitions: dict[str, Definitions] = {}
        self.epoch: str | None = None
        self.go_module: str | None = None
        self.records: dict[str, DigestMap] = {tree: {} for tree in TREES}
        """Tree -> key -> :func:`record_digest` of the record's value (a dict, or the store's
        digests once the records are written: :func:`~.digests.stored_views`)."""
        self._pending = Affected()
        self._reindex = False
        self._languages: dict[str, str | None] = {}
        self._facts: dict[str, Facts] = {}
        self._files = RepoFiles.build(())
        self._named: dict[str, tuple[str, ...]] = {}
        self._forward: dict[str, list[Link]] = {}
        self._incoming: dict[str, dict[str, list[Link]]] = defaultdict(dict)
        self._names = NameIndex()
        self._manifests: dict[str, str | None] = {}  # package.json, Cargo.toml -> its name
        self._reexports: dict[str, tuple[str, ...]] = {}  # a barrel -> the files it re-exports
        self._dir_languages: dict[str, Counter[str]] = defaultdict(Counter)

    @classmethod
    def build(
        cls, repo_id: str, nodes: Iterable[Mapping[str, Any]], go_module: str | None
    ) -> ProjectionState:
        """Compute every projection of a repository from its file nodes.

        The state keeps the records' digests only: this is for a store whose projections are
        already written (use :func:`rebuild_projections` to write them).
        """
        state = cls(repo_id)
        for node in nodes:
            state.stage(str(node.get("path")), node)
        state.commit(go_module, emit=lambda *_: None)
        return state

    @classmethod
    def adopt(
        cls,
        repo_id: str,
        nodes: Iterable[Mapping[str, Any]],
        go_module: str | None,
        records: dict[str, DigestMap],
        links: Mapping[str, list[Link]],
        read_node: NodeReader,
    ) -> ProjectionState:
        """Take over stored projections, computing none of their records.

        The indexes are built from ``nodes`` (those the records were computed from, with
        ``go_module``) as by :meth:`build`; ``records`` (tree -> key -> digest) and ``links``
        (path -> its links, read back with :func:`links_of_out_record`; absent: none) are
        taken on trust, which holds while the stored projections are not marked dirty and
        were written by this :data:`PROJECTION_FORMAT`. ``read_node`` reads the nodes back.
        """
        state = cls(repo_id, read_node)
        for node in nodes:  # (their records exist: no definitions are needed)
            path = sys.intern(str(node.get("path")))
            state._reindex |= state._replace_file(path, node, None, state._pending, held=False)
        state._index(go_module, links)
        state.records = records
        return state

    @property
    def file_count(self) -> int:
        """How many files the state holds."""
        return len(self._languages)

    def release_definitions(self, read_node: NodeReader) -> None:
        """Hold no more definitions than :class:`ProjectionState` with ``read_node`` does.

        For a state built without a reader once every staged node is written: the definitions
        it holds are dropped, and read back from the nodes when a change needs them.
        """
        self._read_node = read_node
        self._definitions.clear()

    @property
    def symbol_count(self) -> int:
        """How many fully qualified names the files define (one symbol record each)."""
        return len(self._names.fq_paths)

    def update(
        self,
        changes: Mapping[str, Mapping[str, Any] | None]
        | Iterable[tuple[str, Mapping[str, Any] | None]],
        go_module: str | None,
    ) -> Delta:
        """Apply changed file nodes (``None`` for a removed file) and return the record delta.

        Args:
            changes: Path -> its new file node, or ``None`` when the file is gone (a mapping,
                or pairs consumed once, so a full build never holds every node at once).
            go_module: The ``module`` of the root ``go.mod`` now.

        Returns:
            Every record whose value changed (``None`` values are deletions); ``records``
            already holds the digests of the new values.
        """
        pairs = changes.items() if isinstance(changes, Mapping) else changes
        for path, node in pairs:
            self.stage(path, node)
        return self.commit(go_module)

    def stage(
        self, path: str, node: Mapping[str, Any] | None, outline: FileOutline | None = None
    ) -> None:
        """Swap one file's facts (``node`` ``None``: the file is gone); :meth:`commit` follows.

        Only what the node says about the file is kept, so a caller can stage each node as
        it is produced and drop it. ``outline``: the node's outline when the caller still
        has it (the indexer does), which saves rebuilding it from the node.
        """
        self._reindex |= self._replace_file(sys.intern(path), node, outline, self._pending)

    def commit(self, go_module: str | None, emit: Emit | None = None) -> Delta:
        """Recompute the records the staged changes can affect.

        Args:
            go_module: The ``module`` of the root ``go.mod`` now.
            emit: Receives each changed record instead of the returned delta (a full build
                streams hundreds of thousands of records to the store this way).

        Returns:
            Every record whose value changed (empty when ``emit`` is given).
        """
        affected = self._index(go_module)
        delta: Delta = {tree: {} for tree in TREES}
        if emit is None:

            def emit(
                tree: str, key: str, value: Any, digest: bytes | None, packed: bytes | None
            ) -> None:
                delta[tree][key] = value

        self._records(affected, emit)
        return delta

    def _index(
        self, go_module: str | None, links: Mapping[str, list[Link]] | None = None
    ) -> Affected:
        """Bring the indexes and the links up to date with the staged changes.

        ``links``: each file's links as already known (see :meth:`adopt`), not recomputed.

        Returns:
            What the changes affected, for the records to recompute.
        """
        affected, self._pending = self._pending, Affected()
        reindex, self._reindex = self._reindex or go_module != self.go_module, False
        self.go_module = go_module
        self._names.track_referrers(affected, self._facts)
        if reindex:
            self._files = RepoFiles.build(
                self._languages,
                packages={
                    **{
                        p: f.outline.package for p, f in self._facts.items() if p.endswith(PACKAGED)
                    },
                    **self._manifests,
                },
                go_mod_module=go_module,
            )
            named = naming_index(self._languages)
            affected.targets.update(
                t for t in named.keys() | self._named.keys() if named.get(t) != self._named.get(t)
            )
            self._named = named
            affected.relink.update(self._facts)
        else:
            for name in affected.definers:
                affected.relink.update(self._names.referrers.get(name, ()))
        affected.relink |= refresh_reexports(
            list(affected.relink),
            self._reexports,
            lambda path: self._facts.get(path, NO_FACTS).outline,
            self._files,
            self._importers,
        )
        repo = self.repo_id
        for path in affected.relink:
            if links is None or _key(xref_key, repo, f"out:{path}") is None:
                self._relink(path, affected)  # (a file whose record no key can hold: computed)
            else:
                self._link(path, links.get(path, []), affected)
        return affected

    @property
    def pending_local(self) -> int:
        """How many symbol and package records :meth:`flush_local` would recompute now."""
        return len(self._pending.fqs) + len(self._pending.dirs)

    def flush_local(self, emit: Emit) -> None:
        """Emit the staged changes' symbol and package records now, ahead of :meth:`commit`.

        They depend on the staged files alone (not on import resolution or on other files'
        names), so emitting them early gives the same records as emitting them at the commit;
        a qualified name a later file also defines is emitted again then.
        """
        pending = self._pending
        local = Affected(fqs=pending.fqs, dirs=pending.dirs)
        pending.fqs, pending.dirs = set(), set()
        self._records(local, emit)

    # -- changes -----------------------------------------------------------------------

    def _replace_file(
        self,
        path: str,
        node: Mapping[str, Any] | None,
        parsed: FileOutline | None,
        affected: Affected,
        held: bool = True,
    ) -> bool:
        """Swap one file's facts; return True when import resolution must be redone.

        ``held`` False: its definitions are not held (read back when needed).
        """
        was_known = path in self._languages
        old_language = self._languages.get(path)
        old = self._facts.pop(path, NO_FACTS)
        found = file_facts(node, parsed, definitions=held)
        new = NO_FACTS if found is None else found[0]
        if node is None:
            self._languages.pop(path, None)
        else:
            language = node.get("language")
            self._languages[path] = None if language is None else sys.intern(language)
        if found is not None:
            self._facts[path] = new
        if found is not None and held:
            self._definitions[path] = found[1]
        else:
            self._definitions.pop(path, None)
        directory = posixpath.dirname(path) or "."
        if was_known != (node is not None):
            counts = self._dir_languages[directory]
            language = str((node or {}).get("language") or old_language or "other")
            counts[language] += 1 if node is not None else -1
            affected.dirs.add(directory)
        self._names.swap(path, old, new, affected)
        affected.relink.add(path)
        affected.targets.add(path)
        packaged = path.endswith(PACKAGED) and old.outline.package != new.outline.package
        manifest = self._manifest_changed(path, node)  # (a package.json's name: imports of it)
        return was_known != (node is not None) or packaged or manifest

    def _manifest_changed(self, path: str, node: Mapping[str, Any] | None) -> bool:
        """Track the package name a manifest declares; True when it changed."""
        declared = node.get("package") if node is not None and path.endswith(MANIFESTS) else None
        if self._manifests.get(path) == declared:
            return False
        self._manifests[path] = declared
        return True

    def _relink(self, path: str, affected: Affected) -> None:
        facts = self._facts.get(path)
        new: list[Link] = []
        if facts is not None:
            imports = resolve_imports(path, facts.outline, self._files)
            imported = through_reexports((link.target for link in imports), self._reexports)
            refs = reference_links(
                path,
                facts.outline,
                self._names.definers,
                imported,
                references=facts.refs,
                files=self._files,
                member_references=facts.member_refs,
                only_members=self._only_member,
            )
            new = imports + refs
        self._link(path, new, affected)

    def _importers(self, target: str) -> list[str]:
        incoming = self._incoming.get(target, {})
        # (a source's import links come first among its links to the target)
        return [path for path, links in incoming.items() if links[0].kind == IMPORT]

    def _only_member(self, path: str, name: str) -> bool:
        members = self._facts.get(path, NO_FACTS).members
        at = bisect.bisect_left(members, name)
        return at < len(members) and members[at] == name

    def _link(self, path: str, new: list[Link], affected: Affected) -> None:
        """Make ``new`` the links of ``path`` (and the reverse links of their targets)."""
        old = self._forward.pop(path, [])
        if new:
            self._forward[path] = new
        if old == new:
            return
        for link in old:
            self._incoming[link.target].pop(path, None)
            affected.targets.add(link.target)
        for link in new:
            self._incoming[link.target].setdefault(path, []).append(link)
            affected.targets.add(link.target)

    # -- records -----------------------------------------------------------------------

    def _records(self, affected: Affected, emit: Emit) -> None:
        # Records go out in key order within each tree: a full build then appends to the
        # store's B-trees instead of touching (and mapping in) every page again.
        for tree in TREES:
            pending = self._pending_records(tree, affected)
            pending.sort(key=itemgetter(0))
            for key, make, ident in pending:
                self._set(emit, tree, key, make(ident))
            del pending  # before the next tree's list is built
        self._prune(affected)
        if self._read_node is not None:
            self._definitions.clear()  # emitted: read back from the nodes when needed again

    def _definitions_in(self, path: str) -> Definitions:
        known = self._definitions.get(path)
        if known is None and self._read_node is not None:  # (kept until the records are out)
            known = self._definitions[path] = definitions_of(self._read_node(path))
        return known or {}

    def _pending_records(
        self, tree: str, affected: Affected
    ) -> list[tuple[str, Callable[[str], Any], str]]:
        """The (key, record maker, its argument) of each record of ``tree`` to recompute."""
        repo = self.repo_id
        found: list[tuple[str | None, Callable[[str], Any], str]]
        if tree == STRUCTURAL:
            dirs = affected.dirs - {"."}  # the root is no package
            found = [(_key(pkg_key, repo, d), self._pkg_record, d) for d in dirs]
        elif tree == SYMBOL:
            found = [(_key(symbol_key, repo, fq), self._symbol_record, fq) for fq in affected.fqs]
        else:
            found = [
                (_key(xref_key, repo, f"out:{p}"), self._out_record, p) for p in affected.relink
            ]
            found += [
                (_key(xref_key, repo, f"in:{t}"), self._in_record, t) for t in affected.targets
            ]
            found += [
                (_key(xref_key, repo, f"name:{n}"), self._name_record, n) for n in affected.names
            ]
        return [item for item in found if item[0] is not None]  # type: ignore[misc]

    def _out_record(self, path: str) -> dict[str, Any] | None:
        return out_record(self._forward.get(path, ()))

    def _name_record(self, name: str) -> dict[str, Any] | None:
        return name_record(name, self._names.referrers.get(name, ()))

    def _set(self, emit: Emit, tree: str, key: str, value: Any) -> None:
        records = self.records[tree]
        packed = None if value is None else pack(value)
        digest = None if packed is None else packed_digest(packed)
        if records.get(key) == digest:
            return
        if digest is None:
            del records[key]
        else:
            records[key] = digest
        emit(tree, key, value, digest, packed)

    def _in_record(self, target: str) -> dict[str, Any] | None:
        if target not in self._languages:
            return None
        incoming = [link for links in self._incoming.get(target, {}).values() for link in links]
        covering = (
            test_links(target, incoming, self._named.get(target, ()))
            if is_covered_source(target)
            else []
        )
        return in_record(incoming, covering)

    def _symbol_record(self, fq: str) -> dict[str, Any] | None:
        found = [
            (path, symbol)
            for path in self._names.defining_files(fq)
            for symbol in self._definitions_in(path).get(fq, ())
        ]
        return symbol_record(fq, found)

    def _pkg_record(self, directory: str) -> dict[str, Any] | None:
        return pkg_record(directory, self._dir_languages.get(directory, Counter()))

    def _prune(self, affected: Affected) -> None:
        """Drop index entries that became empty, so removed names do not pile up."""
        self._names.prune(affected)
        for target in affected.targets:
            if not self._incoming.get(target, True):
                del self._incoming[target]
        for directory in affected.dirs:
            if not +self._dir_languages.get(directory, Counter()):
                self._dir_languages.pop(directory, None)


def _key(make: Callable[[str, str], str], repo_id: str, name: str) -> str | None:
    # None for a name no key can hold (too long): only the projection record is left out.
    try:
        return make(repo_id, name)
    except InvalidKeyError:
        return None
