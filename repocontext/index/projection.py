"""Projections of the code index, derived from file nodes and maintained incrementally.

* symbol tree ``repo/{id}/symbol/{fq}``: where a fully qualified name is defined;
* xref tree ``repo/{id}/xref/name:{name}``: the files that use a defined bare name (the
  first 200 in path order, and their count) — one record per name, however many symbols
  share it;
* xref tree ``repo/{id}/xref/out:{path}``: a file's resolved imports and references;
  ``repo/{id}/xref/in:{path}``: its dependents and covering tests (the reverse projection);
* structural tree ``repo/{id}/pkg/{dir}``: package (directory) nodes.

:class:`ProjectionState` holds what the projections are computed from (per-file facts, the
link graph and its reverse, the symbol and name indexes) and the records themselves. Its
:meth:`~ProjectionState.update` takes changed file nodes and recomputes only the records they
can affect, returning them as a :class:`Delta`; building from nothing is the same update with
every file added, so the full and the incremental path are one code path. What a change can
affect:

* the changed files' own links, and the links of files referencing a name whose set of
  defining files changed; every link when the file set, a Java/C# package or the Go module
  changed (import resolution depends on them);
* the reverse records of every target whose incoming links changed;
* the name records of names whose users or definitions changed, the symbol records of the
  changed files' qualified names, the package records of directories that gained or lost files.

:func:`apply_projections` writes a whole state as a diff against the store (a cold start, or
a store another process changed); :func:`apply_delta` writes an update's delta.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from repocontext.errors import InvalidKeyError
from repocontext.index.model import FileOutline, Link, Symbol
from repocontext.index.nodes import iter_symbols, outline_of
from repocontext.index.resolve import (
    MAX_DEFINING_FILES,
    RepoFiles,
    is_covered_source,
    naming_index,
    reference_links,
    resolve_imports,
    test_links,
)
from repocontext.store import STRUCTURAL, SYMBOL, XREF, Store
from repocontext.store.keys import family_prefix, pkg_key, symbol_key, xref_key

__all__ = [
    "Delta",
    "ProjectionDiff",
    "ProjectionState",
    "apply_delta",
    "apply_projections",
    "in_record",
    "name_record",
    "out_record",
]

MAX_USERS: Final = 200
TREES: Final = (STRUCTURAL, SYMBOL, XREF)
_PACKAGED: Final = (".java", ".cs")  # files whose declared package import resolution reads

Delta = dict[str, dict[str, Any]]
"""Tree -> key -> new value, ``None`` for a record to delete."""


@dataclass(frozen=True, slots=True)
class ProjectionDiff:
    """What :func:`apply_projections` or :func:`apply_delta` wrote."""

    written: int
    deleted: int


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the projections need of one parsed file (its outline without the symbol tree)."""

    outline: FileOutline  # symbols dropped: the fields below hold what is needed of them
    defines: frozenset[str]  # bare names it defines, for reference links (no impl blocks)
    names: frozenset[str]  # every bare name it defines, for name records
    refs: frozenset[str]
    defs: Mapping[str, tuple[Symbol, ...]]  # fully qualified name -> its definitions


def _facts(outline: FileOutline) -> _Facts:
    defs: dict[str, list[Symbol]] = defaultdict(list)
    defines: set[str] = set()
    names: set[str] = set()
    for symbol in iter_symbols(outline.symbols):
        names.add(symbol.name)
        if symbol.kind != "impl":
            defines.add(symbol.name)
        defs[symbol.fq_name].append(symbol)
    return _Facts(
        outline=dataclasses.replace(outline, symbols=()),
        defines=frozenset(defines),
        names=frozenset(names),
        refs=frozenset(outline.references),
        defs={fq: tuple(found) for fq, found in defs.items()},
    )


_NO_FACTS: Final = _Facts(FileOutline(language=""), frozenset(), frozenset(), frozenset(), {})


@dataclass
class _Affected:
    relink: set[str] = field(default_factory=set)
    definers: set[str] = field(default_factory=set)  # names whose reference links may change
    targets: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    refs: list[tuple[str, frozenset[str], frozenset[str]]] = field(default_factory=list)
    fqs: set[str] = field(default_factory=set)
    dirs: set[str] = field(default_factory=set)


class ProjectionState:
    """The projections of one repository and what they are computed from, kept in memory."""

    def __init__(self, repo_id: str) -> None:
        """Start empty: no files, no records."""
        self.repo_id = repo_id
        self.epoch: str | None = None
        self.go_module: str | None = None
        self.records: dict[str, dict[str, Any]] = {tree: {} for tree in TREES}
        self._languages: dict[str, str | None] = {}
        self._facts: dict[str, _Facts] = {}
        self._files = RepoFiles.build(())
        self._named: dict[str, tuple[str, ...]] = {}
        self._forward: dict[str, list[Link]] = {}
        self._incoming: dict[str, dict[str, list[Link]]] = defaultdict(dict)
        self._definers: dict[str, set[str]] = defaultdict(set)
        self._name_count: Counter[str] = Counter()
        # Files referencing each name some file defines (kept for defined names only: most
        # referenced names are defined nowhere in the repository).
        self._referrers: dict[str, set[str]] = {}
        self._fq_paths: dict[str, set[str]] = defaultdict(set)
        self._dir_languages: dict[str, Counter[str]] = defaultdict(Counter)

    @classmethod
    def build(
        cls, repo_id: str, nodes: Iterable[Mapping[str, Any]], go_module: str | None
    ) -> ProjectionState:
        """Compute every projection of a repository from its file nodes."""
        state = cls(repo_id)
        state.update(((str(node.get("path")), node) for node in nodes), go_module)
        return state

    @property
    def file_count(self) -> int:
        """How many files the state holds."""
        return len(self._languages)

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
            already holds the new values.
        """
        affected = _Affected()
        reindex = go_module != self.go_module
        self.go_module = go_module
        pairs = changes.items() if isinstance(changes, Mapping) else changes
        for path, node in pairs:
            reindex |= self._replace_file(path, node, affected)
        self._track_referrers(affected)
        if reindex:
            self._files = RepoFiles.build(
                self._languages,
                packages={
                    p: f.outline.package for p, f in self._facts.items() if p.endswith(_PACKAGED)
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
                affected.relink.update(self._referrers.get(name, ()))
        for path in affected.relink:
            self._relink(path, affected)
        return self._records(affected)

    # -- changes -----------------------------------------------------------------------

    def _replace_file(self, path: str, node: Mapping[str, Any] | None, affected: _Affected) -> bool:
        """Swap one file's facts; return True when import resolution must be redone."""
        was_known = path in self._languages
        old_language = self._languages.get(path)
        old = self._facts.pop(path, _NO_FACTS)
        outline = outline_of(node) if node is not None else None
        new = _facts(outline) if outline is not None else _NO_FACTS
        if node is None:
            self._languages.pop(path, None)
        else:
            self._languages[path] = node.get("language")
        if outline is not None:
            self._facts[path] = new
        directory = posixpath.dirname(path) or "."
        if was_known != (node is not None):
            counts = self._dir_languages[directory]
            language = str((node or {}).get("language") or old_language or "other")
            counts[language] += 1 if node is not None else -1
            affected.dirs.add(directory)
        for name in old.defines ^ new.defines:
            definers = self._definers[name]
            before = len(definers)
            (definers.discard if name in old.defines else definers.add)(path)
            if min(before, len(definers)) <= MAX_DEFINING_FILES:
                affected.definers.add(name)  # more definers than that make no reference link
            affected.names.add(name)
        for name in old.names ^ new.names:
            self._name_count[name] += 1 if name in new.names else -1
            affected.names.add(name)
        if old.refs != new.refs:
            affected.refs.append((path, old.refs, new.refs))
        for fq in old.defs.keys() | new.defs.keys():
            if fq not in new.defs:
                self._fq_paths[fq].discard(path)
            elif fq not in old.defs:
                self._fq_paths[fq].add(path)
            if old.defs.get(fq) != new.defs.get(fq):
                affected.fqs.add(fq)
        affected.relink.add(path)
        affected.targets.add(path)
        packaged = path.endswith(_PACKAGED) and old.outline.package != new.outline.package
        return was_known != (node is not None) or packaged

    def _track_referrers(self, affected: _Affected) -> None:
        """Bring the referrers index up to date once every changed file was swapped."""
        newly: set[str] = set()
        for name in affected.names:
            if self._name_count[name] <= 0:  # defined nowhere any more
                gone = self._referrers.pop(name, set())
                if name in affected.definers:
                    affected.relink.update(gone)  # their links to the old definer go
            elif name not in self._referrers:
                newly.add(name)
        for path, old, new in affected.refs:
            for name in old ^ new:
                users = self._referrers.get(name)
                if users is not None and name not in newly:
                    (users.add if name in new else users.discard)(path)
                    affected.names.add(name)
        if newly:  # names defined for the first time: find who already references them
            found: dict[str, set[str]] = {name: set() for name in newly}
            for path, facts in self._facts.items():
                for name in facts.refs & newly:
                    found[name].add(path)
            self._referrers.update(found)

    def _relink(self, path: str, affected: _Affected) -> None:
        old = self._forward.pop(path, [])
        facts = self._facts.get(path)
        new: list[Link] = []
        if facts is not None:
            imports = resolve_imports(path, facts.outline, self._files)
            imported = {link.target for link in imports}
            refs = reference_links(path, facts.outline, self._definers, imported)
            new = imports + refs
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

    def _records(self, affected: _Affected) -> Delta:
        delta: Delta = {tree: {} for tree in TREES}
        repo = self.repo_id
        for path in affected.relink:  # every changed path is in it
            self._set(
                delta, XREF, _xref_key(repo, f"out:{path}"), out_record(self._forward.get(path, ()))
            )
        for target in affected.targets:
            self._set(delta, XREF, _xref_key(repo, f"in:{target}"), self._in_record(target))
        for name in affected.names:
            users = self._referrers.get(name, ())
            self._set(delta, XREF, _xref_key(repo, f"name:{name}"), name_record(name, users))
        for fq in affected.fqs:
            self._set(delta, SYMBOL, _symbol_key(repo, fq), self._symbol_record(fq))
        for directory in affected.dirs:
            self._set(delta, STRUCTURAL, _pkg_key(repo, directory), self._pkg_record(directory))
        self._prune(affected)
        return delta

    def _set(self, delta: Delta, tree: str, key: str | None, value: Any) -> None:
        if key is None:
            return
        records = self.records[tree]
        if records.get(key) == value:
            return
        if value is None:
            del records[key]
        else:
            records[key] = value
        delta[tree][key] = value

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
            for path in sorted(self._fq_paths.get(fq, ()))
            for symbol in self._facts[path].defs[fq]
        ]
        if not found:
            return None
        return {
            "fullyQualifiedName": fq,
            "name": found[0][1].name,
            "defs": [
                {
                    "path": path,
                    "kind": symbol.kind,
                    "signature": symbol.signature,
                    "startLine": symbol.start_line,
                    "endLine": symbol.end_line,
                }
                for path, symbol in found
            ],
        }

    def _pkg_record(self, directory: str) -> dict[str, Any] | None:
        counts = +self._dir_languages.get(directory, Counter())  # drops zero counts
        if not counts:
            return None
        return {
            "path": directory,
            "files": sum(counts.values()),
            "languages": dict(sorted(counts.items())),
        }

    def _prune(self, affected: _Affected) -> None:
        """Drop index entries that became empty, so removed names do not pile up."""
        for name in affected.names:
            if not self._definers.get(name, True):
                del self._definers[name]
            if self._name_count.get(name) == 0:
                del self._name_count[name]
        for fq in affected.fqs:
            if not self._fq_paths.get(fq, True):
                del self._fq_paths[fq]
        for target in affected.targets:
            if not self._incoming.get(target, True):
                del self._incoming[target]
        for directory in affected.dirs:
            if not +self._dir_languages.get(directory, Counter()):
                self._dir_languages.pop(directory, None)


def out_record(links: Iterable[Link]) -> dict[str, Any] | None:
    """The ``out:{path}`` record of a file's import and reference links (``None``: no links)."""
    imports = [_link_wire(link.target, link) for link in links if link.kind == "import"]
    refs = [_link_wire(link.target, link) for link in links if link.kind == "reference"]
    return {"imports": imports, "references": refs} if imports or refs else None


def in_record(incoming: Iterable[Link], covering: Iterable[Link]) -> dict[str, Any] | None:
    """The ``in:{path}`` record: dependents (sorted by source, kind, reason) and covering tests."""
    ordered = sorted(incoming, key=lambda x: (x.source, x.kind, x.reason))
    deps = [_link_wire(link.source, link) for link in ordered]
    tests = [_link_wire(link.source, link) for link in covering]
    return {"dependents": deps, "coveringTests": tests} if deps or tests else None


def name_record(name: str, users: Iterable[str]) -> dict[str, Any] | None:
    """The ``name:{name}`` record: the first users in path order and their count."""
    ordered = sorted(users)
    if not ordered:
        return None
    return {"name": name, "users": ordered[:MAX_USERS], "count": len(ordered)}


def apply_projections(store: Store, repo_id: str, state: ProjectionState) -> ProjectionDiff:
    """Write the records of ``state`` that differ from the stored ones; delete the rest."""
    prefixes = {
        STRUCTURAL: family_prefix(repo_id, "pkg"),
        SYMBOL: family_prefix(repo_id, "symbol"),
        XREF: family_prefix(repo_id, "xref"),
    }
    written = deleted = 0
    with store.batch(commit_every=2000) as batch:
        for tree, prefix in prefixes.items():
            want = state.records[tree]
            have = {r.key: r.value for r in store.iter_records(tree, prefix, page_size=5000)}
            for key, value in want.items():
                if have.get(key) != value:
                    batch.put(tree, key, value)
                    written += 1
            for key in have.keys() - want.keys():
                batch.delete(tree, key)
                deleted += 1
    return ProjectionDiff(written, deleted)


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


def _link_wire(other: str, link: Link) -> dict[str, Any]:
    wire: dict[str, Any] = {"path": other, "reason": link.reason}
    if link.names:
        wire["names"] = list(link.names)
    return wire


def _xref_key(repo_id: str, name: str) -> str | None:
    try:
        return xref_key(repo_id, name)
    except InvalidKeyError:
        return None  # a path too long for an xref key: the file keeps its own node


def _symbol_key(repo_id: str, fq: str) -> str | None:
    try:
        return symbol_key(repo_id, fq)
    except InvalidKeyError:
        return None  # a name no key can hold (too long); the file's outline still has it


def _pkg_key(repo_id: str, directory: str) -> str | None:
    if directory == ".":
        return None
    try:
        return pkg_key(repo_id, directory)
    except InvalidKeyError:
        return None
