"""The name indexes of a projection state: who defines and who references each name.

A :class:`~repocontext.index.projections.projection.ProjectionState` keeps, per bare name, the
files defining it and the files referencing it (only for names some file defines), and per
fully qualified name its defining files. A file's change swaps its names here
(:meth:`NameIndex.swap`) and says in an :class:`Affected` which links and records it touches.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from repocontext.index.links.facts import Facts
from repocontext.index.links.references import MAX_DEFINING_FILES

__all__ = ["Affected", "NameIndex"]

_FEW_NAMES: Final = 16  # newly defined names looked up by binary search in each file's refs
_FEW: Final = MAX_DEFINING_FILES  # (a name of more definers makes no reference link)


@dataclass
class Affected:
    """What staged changes affect: the files to relink and the records to recompute."""

    relink: set[str] = field(default_factory=set)
    definers: set[str] = field(default_factory=set)  # names whose reference links may change
    targets: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    refs: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    fqs: set[str] = field(default_factory=set)
    dirs: set[str] = field(default_factory=set)


class NameIndex:
    """Bare names -> defining and referencing files; qualified names -> defining files."""

    def __init__(self) -> None:
        """Start empty."""
        self.definers: dict[str, set[str]] = defaultdict(set)
        self.name_count: Counter[str] = Counter()
        # Files referencing each defined name (most referenced names are defined nowhere).
        self.referrers: dict[str, set[str]] = {}
        # The defining file itself, else a sorted tuple: nearly every name has one (not sets).
        self.fq_paths: dict[str, str | tuple[str, ...]] = {}

    def swap(self, path: str, old: Facts, new: Facts, affected: Affected) -> None:
        """Replace the names ``path`` defined (``old``) with those it defines now (``new``)."""
        old_defines, new_defines = set(old.defines), set(new.defines)
        for name in old_defines ^ new_defines:
            definers = self.definers[name]
            before = len(definers)
            (definers.discard if name in old_defines else definers.add)(path)
            if min(before, len(definers)) <= MAX_DEFINING_FILES:
                affected.definers.add(name)  # more definers than that make no reference link
            affected.names.add(name)
        old_names = old_defines if old.names is old.defines else set(old.names)
        new_names = new_defines if new.names is new.defines else set(new.names)
        for name in old_names ^ new_names:
            self.name_count[name] += 1 if name in new_names else -1
            affected.names.add(name)
        if old.refs != new.refs:
            affected.refs.append((path, old.refs, new.refs))
        flipped = set(old.members).symmetric_difference(new.members)  # a method <-> a function
        affected.definers.update(n for n in flipped if len(self.definers.get(n, ())) <= _FEW)
        fq_paths, kept = self.fq_paths, set(old.defs).intersection(new.defs)
        gone = [fq for fq in old.defs if fq not in kept]
        for fq in gone:
            left = tuple(p for p in _paths(fq_paths.get(fq)) if p != path)
            fq_paths[fq] = left[0] if len(left) == 1 else left
        for fq in new.defs:
            if fq not in kept:  # nearly always the only defining file: nothing to sort
                have = fq_paths.get(fq)
                fq_paths[fq] = path if have is None else tuple(sorted((*_paths(have), path)))
        affected.fqs.update(new.defs)  # (a file staged again changed: each record is compared)
        affected.fqs.update(gone)

    def defining_files(self, fq: str) -> tuple[str, ...]:
        """The files defining a fully qualified name."""
        return _paths(self.fq_paths.get(fq))

    def track_referrers(self, affected: Affected, files: Mapping[str, Facts]) -> None:
        """Bring the referrers index up to date once every changed file was swapped."""
        newly: set[str] = set()
        for name in affected.names:
            if self.name_count[name] <= 0:  # defined nowhere any more
                gone = self.referrers.pop(name, set())
                if name in affected.definers:
                    affected.relink.update(gone)  # their links to the old definer go
            elif name not in self.referrers:
                newly.add(name)
        for path, old, new in affected.refs:
            now = frozenset(new)
            for name in now.symmetric_difference(old):
                users = self.referrers.get(name)
                if users is not None and name not in newly:
                    (users.add if name in now else users.discard)(path)
                    affected.names.add(name)
        if newly:  # names defined for the first time: find who already references them
            found: dict[str, set[str]] = {name: set() for name in newly}
            few = sorted(newly) if len(newly) <= _FEW_NAMES else None
            for path, facts in files.items():
                for name in _referenced(facts.refs, newly, few):
                    found[name].add(path)
            self.referrers.update(found)

    def prune(self, affected: Affected) -> None:
        """Drop the entries of names no file defines any more."""
        for name in affected.names:
            if not self.definers.get(name, True):
                del self.definers[name]
            if self.name_count.get(name) == 0:
                del self.name_count[name]
        for fq in affected.fqs:
            if not self.fq_paths.get(fq, True):
                del self.fq_paths[fq]


def _paths(entry: str | tuple[str, ...] | None) -> tuple[str, ...]:
    """The defining files of a :attr:`NameIndex.fq_paths` entry."""
    return (entry,) if isinstance(entry, str) else entry or ()


def _referenced(refs: tuple[str, ...], names: set[str], few: list[str] | None) -> Iterable[str]:
    """The ``names`` among a file's sorted ``refs``: by binary search when they are ``few``."""
    if few is None:
        return names.intersection(refs)
    found = []
    for name in few:
        at = bisect.bisect_left(refs, name)
        if at < len(refs) and refs[at] == name:
            found.append(name)
    return found
