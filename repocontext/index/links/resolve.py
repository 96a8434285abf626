"""Import links between repository files, re-exports, and the links of a whole repository.

Pure functions over values: no store, no tree-sitter, no filesystem. Resolving one import is a
handful of lookups in the :class:`~repocontext.index.links.repo_files.RepoFiles` indexes.

* :func:`resolve_imports` — ``import`` links from a file's imports (one rule per
  :attr:`ImportRef.kind`, see ``docs/indexing.md``); external and unresolvable imports yield
  nothing.
* :func:`link_repository` — every file's ``import`` links and the ``reference`` links of
  :mod:`.references`; :mod:`.coverage` adds the ``test`` links.
* :func:`dependents` — the reverse projection, target -> links pointing at it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

from repocontext.index.links._import_rules import RULES
from repocontext.index.links.facts import member_names
from repocontext.index.links.references import build_symbol_index, reference_links
from repocontext.index.links.repo_files import RepoFiles
from repocontext.index.model import IMPORT, FileOutline, Link

__all__ = [
    "dependents",
    "link_repository",
    "reexports_of",
    "refresh_reexports",
    "resolve_imports",
    "through_reexports",
]


def resolve_imports(path: str, outline: FileOutline, files: RepoFiles) -> list[Link]:
    """Resolve a file's imports to ``import`` links, one per target file, sorted by target.

    Args:
        path: The importing file.
        outline: Its outline.
        files: The repository's indexed file set.

    Returns:
        Links with kind ``import``; external, system and unresolvable imports yield none, and
        a file never links to itself. When two imports reach one file the first reason is kept
        and the names are merged, except that an import of the file itself replaces a
        package-wide one (names ``*``: a Java wildcard, a C# namespace).
    """
    found: dict[str, Link] = {}
    for ref in outline.imports:
        rule = RULES.get(ref.kind)
        if rule is None:
            continue
        for target, reason, names in rule(path, ref, files, outline.language):
            if target == path:
                continue
            prior = found.get(target)
            if prior is not None and names == ("*",):
                continue  # a package-wide import adds nothing to a file's own import
            if prior is not None and prior.names != ("*",):
                names = prior.names + tuple(n for n in names if n not in prior.names)
                reason = prior.reason
            found[target] = Link(path, target, IMPORT, reason, names)
    return [found[target] for target in sorted(found)]


def reexports_of(path: str, outline: FileOutline, files: RepoFiles) -> tuple[str, ...]:
    """The files a JavaScript/TypeScript file re-exports (``export ... from``), sorted."""
    rule = RULES["js_export"]
    found = {
        target
        for ref in outline.imports
        if ref.kind == "js_export"
        for target, _, _ in rule(path, ref, files, outline.language)
    }
    found.discard(path)
    return tuple(sorted(found))


def refresh_reexports(
    paths: Iterable[str],
    reexports: dict[str, tuple[str, ...]],
    outline_of: Callable[[str], FileOutline],
    files: RepoFiles,
    importers: Callable[[str], Iterable[str]],
) -> set[str]:
    """Recompute the re-exports of changed files; return the files whose links that changes.

    Args:
        paths: The files to recompute (changed or relinked).
        reexports: Barrel -> the files it re-exports, updated in place.
        outline_of: A file's outline (an empty one for a file gone).
        files: The repository's file set.
        importers: A file -> the files importing it (their ``import`` links).

    Returns:
        The files that reach a barrel whose re-exports changed: its importers, and those of
        the barrels re-exporting it in turn.
    """
    changed = []
    for path in paths:
        new = reexports_of(path, outline_of(path), files)
        if new != reexports.get(path, ()):
            if new:
                reexports[path] = new
            else:
                reexports.pop(path, None)
            changed.append(path)
    reached: set[str] = set()
    seen = set(changed)
    while changed:
        barrel = changed.pop()
        for importer in importers(barrel):
            reached.add(importer)
            if barrel in reexports.get(importer, ()) and importer not in seen:
                seen.add(importer)
                changed.append(importer)
    return reached


def through_reexports(imported: Iterable[str], reexports: Mapping[str, Iterable[str]]) -> set[str]:
    """``imported`` and every file reached from them through re-exports.

    Importing a barrel (``index.ts`` holding ``export * from "./schemas"``) reaches the
    names of the files it re-exports, at any depth: they disambiguate a name as the files
    imported directly do (:func:`reference_links`).
    """
    seen = set(imported)
    pending = [path for path in seen if path in reexports]
    while pending:
        for target in reexports.get(pending.pop(), ()):
            if target not in seen:
                seen.add(target)
                pending.append(target)
    return seen


def link_repository(outlines: Mapping[str, FileOutline], files: RepoFiles) -> list[Link]:
    """Resolve the imports and references of every file of a repository.

    Args:
        outlines: Path -> outline for every parsed file.
        files: The repository's indexed file set.

    Returns:
        All ``import`` and ``reference`` links, grouped by source in path order.
    """
    index = build_symbol_index(outlines)
    members = {path: member_names(outline) for path, outline in outlines.items()}
    reexports = {path: reexports_of(path, outline, files) for path, outline in outlines.items()}
    links: list[Link] = []
    for path in sorted(outlines):
        imports = resolve_imports(path, outlines[path], files)
        links += imports
        targets = through_reexports((i.target for i in imports), reexports)
        links += reference_links(
            path,
            outlines[path],
            index,
            targets,
            files=files,
            only_members=lambda target, name: name in members[target],
        )
    return links


def dependents(links: Iterable[Link]) -> dict[str, list[Link]]:
    """Project links onto their targets: who imports, references or tests each file.

    Args:
        links: Any links.

    Returns:
        Target -> the links pointing at it, sorted by source, kind and reason.
    """
    by_target: dict[str, list[Link]] = defaultdict(list)
    for link in links:
        by_target[link.target].append(link)
    return {
        target: sorted(found, key=lambda x: (x.source, x.kind, x.reason))
        for target, found in sorted(by_target.items())
    }
