"""Projections of the code index, derived from file nodes alone and written as a diff.

* symbol tree ``repo/{id}/symbol/{fq}``: where a fully qualified name is defined;
* xref tree ``repo/{id}/xref/name:{name}``: the files that use a defined bare name (the
  first 200 in path order, and their count) — one record per name, however many symbols
  share it;
* xref tree ``repo/{id}/xref/out:{path}``: a file's resolved imports and references;
  ``repo/{id}/xref/in:{path}``: its dependents and covering tests (the reverse projection);
* structural tree ``repo/{id}/pkg/{dir}``: package (directory) nodes.

Every projection is recomputed in memory from all file nodes and only records whose value
changed are written, so a rerun over an unchanged index writes nothing, a deleted file
disappears everywhere, and a run killed half-way is finished by the next one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Final

from repocontext.errors import InvalidKeyError
from repocontext.index.model import FileOutline, Link
from repocontext.index.nodes import iter_symbols, outline_of
from repocontext.index.resolve import RepoFiles, covering_tests, dependents, link_repository
from repocontext.store import STRUCTURAL, SYMBOL, XREF, Store
from repocontext.store.keys import family_prefix, pkg_key, symbol_key, xref_key

__all__ = ["ProjectionDiff", "Projections", "apply_projections", "compute_projections"]

MAX_USERS: Final = 200


@dataclass
class Projections:
    """Desired projection records by tree, as ``key -> value``."""

    records: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {STRUCTURAL: {}, SYMBOL: {}, XREF: {}}
    )


@dataclass(frozen=True, slots=True)
class ProjectionDiff:
    """What :func:`apply_projections` wrote."""

    written: int
    deleted: int


def compute_projections(
    repo_id: str, nodes: Iterable[Mapping[str, Any]], go_module: str | None
) -> Projections:
    """Compute every projection of one repository from its file nodes.

    ``nodes`` is consumed once; only the outlines are kept, not the nodes.
    """
    outlines: dict[str, FileOutline] = {}
    languages: dict[str, str | None] = {}
    for node in nodes:
        path = str(node.get("path"))
        languages[path] = node.get("language")
        outline = outline_of(node)
        if outline is not None:
            outlines[path] = outline
    paths = sorted(languages)
    packages = {path: outline.package for path, outline in outlines.items()}
    files = RepoFiles.build(paths, packages=packages, go_mod_module=go_module)
    all_links = link_repository(outlines, files)
    forward: dict[str, list[Link]] = defaultdict(list)
    for link in all_links:
        forward[link.source].append(link)
    out = Projections()
    _xref_records(repo_id, forward, all_links, paths, out)
    _symbol_records(repo_id, outlines, out)
    _package_records(repo_id, languages, out)
    return out


def apply_projections(store: Store, repo_id: str, desired: Projections) -> ProjectionDiff:
    """Write the records of ``desired`` that differ from the stored ones; delete the rest."""
    prefixes = {
        STRUCTURAL: family_prefix(repo_id, "pkg"),
        SYMBOL: family_prefix(repo_id, "symbol"),
        XREF: family_prefix(repo_id, "xref"),
    }
    written = deleted = 0
    with store.batch(commit_every=2000) as batch:
        for tree, prefix in prefixes.items():
            want = desired.records[tree]
            have = {r.key: r.value for r in store.iter_records(tree, prefix, page_size=5000)}
            for key, value in want.items():
                if have.get(key) != value:
                    batch.put(tree, key, value)
                    written += 1
            for key in have.keys() - want.keys():
                batch.delete(tree, key)
                deleted += 1
    return ProjectionDiff(written, deleted)


def _link_wire(other: str, link: Link) -> dict[str, Any]:
    wire: dict[str, Any] = {"path": other, "reason": link.reason}
    if link.names:
        wire["names"] = list(link.names)
    return wire


def _xref_records(
    repo_id: str,
    forward: Mapping[str, list[Link]],
    all_links: list[Link],
    paths: list[str],
    out: Projections,
) -> None:
    records = out.records[XREF]
    for path, links in forward.items():
        imports = [_link_wire(link.target, link) for link in links if link.kind == "import"]
        refs = [_link_wire(link.target, link) for link in links if link.kind == "reference"]
        key = _xref_key(repo_id, f"out:{path}")
        if (imports or refs) and key:
            records[key] = {"imports": imports, "references": refs}
    reverse = dependents(all_links)
    tests = covering_tests(all_links, paths)
    for path in paths:
        deps = [_link_wire(link.source, link) for link in reverse.get(path, [])]
        covering = [_link_wire(link.source, link) for link in tests.get(path, [])]
        key = _xref_key(repo_id, f"in:{path}")
        if (deps or covering) and key:
            records[key] = {
                "dependents": deps,
                "coveringTests": covering,
            }


def _xref_key(repo_id: str, name: str) -> str | None:
    try:
        return xref_key(repo_id, name)
    except InvalidKeyError:
        return None  # a path too long for an xref key: the file keeps its own node


def _symbol_records(repo_id: str, outlines: Mapping[str, FileOutline], out: Projections) -> None:
    defined = {s.name for outline in outlines.values() for s in iter_symbols(outline.symbols)}
    users: dict[str, list[str]] = defaultdict(list)
    for path in sorted(outlines):  # path order, so every users list is already sorted
        for name in defined.intersection(outlines[path].references):
            users[name].append(path)
    names = out.records[XREF]
    for name, paths in users.items():
        key = _xref_key(repo_id, f"name:{name}")
        if key:
            names[key] = {"name": name, "users": paths[:MAX_USERS], "count": len(paths)}
    records = out.records[SYMBOL]
    for path, outline in sorted(outlines.items()):
        for symbol in iter_symbols(outline.symbols):
            try:
                key = symbol_key(repo_id, symbol.fq_name)
            except InvalidKeyError:
                continue  # a name no key can hold (too long); the file's outline still has it
            record = records.setdefault(
                key,
                {
                    "fullyQualifiedName": symbol.fq_name,
                    "name": symbol.name,
                    "defs": [],
                },
            )
            record["defs"].append(
                {
                    "path": path,
                    "kind": symbol.kind,
                    "signature": symbol.signature,
                    "startLine": symbol.start_line,
                    "endLine": symbol.end_line,
                }
            )


def _package_records(repo_id: str, languages: Mapping[str, str | None], out: Projections) -> None:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for path, language in languages.items():
        directory = PurePosixPath(path).parent.as_posix()
        if directory == ".":
            continue
        counts[directory][language or "other"] += 1
    records = out.records[STRUCTURAL]
    for directory, per_language in sorted(counts.items()):
        records[pkg_key(repo_id, directory)] = {
            "path": directory,
            "files": sum(per_language.values()),
            "languages": dict(sorted(per_language.items())),
        }
