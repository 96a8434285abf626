"""Drift: what changed in the working tree since the index was built (read-only).

Stat first (size, mtime_ns, inode equal to the node's: unchanged, not read), then digest
(the git blob id of the bytes against the node's). The impacted set is every dependent and
covering test of a changed or removed file, from the stored reverse projection.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from repocontext.errors import InvalidInputError, PathOutsideWorkspaceError
from repocontext.index.files.fingerprint import (
    BINARY_PROBE_BYTES,
    git_blob_id,
    is_binary,
    is_binary_file,
)
from repocontext.index.files.nodes import NODE_FORMAT
from repocontext.index.files.roots import is_directory, resolve_path
from repocontext.index.files.walk import WalkOptions, keyable, walk
from repocontext.index.model import NodeStat
from repocontext.index.projections.xref_records import stored_links
from repocontext.store import Store

__all__ = ["DriftReport", "ImpactedFile", "detect_drift", "scope_matches", "scope_prefix"]


@dataclass(frozen=True, slots=True)
class ImpactedFile:
    """A file affected by a change, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class DriftReport:
    """Result of :func:`detect_drift`.

    Attributes:
        added: Files on disk without a node.
        updated: Files whose bytes differ from their node's digest.
        removed: Nodes without a file on disk.
        impacted: Dependents and covering tests of the changes (changed files excluded).
        checked_files: Files compared.
        elapsed_ms: Wall time of the comparison.
    """

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    impacted: list[ImpactedFile] = field(default_factory=list)
    checked_files: int = 0
    elapsed_ms: int = 0


def scope_prefix(root: Path, scope: str | None) -> str:
    """Turn a caller's scope path into a repository-relative prefix ("" for everything).

    An existing directory gets a trailing ``/``; any other path is returned bare and means
    that file, or that directory if it no longer exists (see :func:`scope_matches`). The
    directories on the way are resolved, not the last name: a symlink is the walk's entry of
    that name (followed, or reported, by the walk), never the file it points at.

    Raises:
        PathOutsideWorkspaceError: The scope resolves outside the indexed root.
        InvalidInputError: The scope is not a usable path.
    """
    if not scope or scope in (".", "./"):
        return ""
    if "\x00" in scope:
        raise InvalidInputError("the scope path holds a NUL byte")
    candidate = Path(scope)
    named = candidate if candidate.is_absolute() else root / candidate
    if named.name in ("", ".", ".."):
        full = resolve_path(named)
    else:
        full = resolve_path(named.parent) / named.name
    if not full.is_relative_to(root):
        raise PathOutsideWorkspaceError(
            f"scope {scope!r} resolves outside the indexed root {root}",
            hint="Pass a path inside the repository, relative to its root.",
        )
    rel = full.relative_to(root).as_posix()
    if rel == ".":
        return ""
    return rel + "/" if is_directory(full) and not full.is_symlink() else rel


def scope_matches(path: str, prefix: str) -> bool:
    """Whether ``path`` is inside a :func:`scope_prefix` result (a path, not a string prefix)."""
    if not prefix or path == prefix:
        return True
    return path.startswith(prefix if prefix.endswith("/") else prefix + "/")


def detect_drift(
    store: Store,
    repo_id: str,
    root: Path,
    nodes: Mapping[str, NodeStat],
    *,
    scope: str | None = None,
    options: WalkOptions | None = None,
) -> DriftReport:
    """Compare the working tree under ``scope`` with the stored file nodes.

    Raises:
        PathOutsideWorkspaceError: The scope resolves outside the indexed root.
    """
    started = time.perf_counter()
    # A path is a file or a directory, and may have been the other one when last indexed
    # (deleted, or replaced by a directory of that name): walk and compare both.
    prefix = scope_prefix(root, scope).rstrip("/")
    scopes = [prefix, prefix + "/"] if prefix else [prefix]
    result = walk(root, options, scope=scopes)
    entries = [e for e in result.entries if scope_matches(e.path, prefix)]
    added: list[str] = []
    updated: list[str] = []
    turned_binary: set[str] = set()
    skip_binary = (options or WalkOptions()).exclude_binary
    for entry in entries:
        node = nodes.get(entry.path)
        if node is None:
            if _indexed_when_run(root, repo_id, entry.path, skip_binary):
                added.append(entry.path)
        elif not node.matches(entry.size, entry.mtime_ns, entry.inode, NODE_FORMAT):
            try:
                data = (root / entry.path).read_bytes()
            except OSError:
                continue
            if skip_binary and is_binary(data[:BINARY_PROBE_BYTES]):
                turned_binary.add(entry.path)  # a run drops it: removed, as a run would say
            elif git_blob_id(data) != node.blob_id:
                updated.append(entry.path)
    on_disk = {e.path for e in entries} - turned_binary
    removed = sorted(
        p
        for p in nodes
        if scope_matches(p, prefix) and p not in on_disk and not result.unreadable(p)
    )
    changed = set(added) | set(updated) | set(removed)
    impacted = _impacted(store, repo_id, sorted(set(updated) | set(removed)), changed)
    return DriftReport(
        added=added,
        updated=updated,
        removed=removed,
        impacted=impacted,
        checked_files=len(entries),
        elapsed_ms=int((time.perf_counter() - started) * 1000),
    )


def _indexed_when_run(root: Path, repo_id: str, path: str, skip_binary: bool) -> bool:
    """Whether an index run would add this node-less file.

    What a run skips is no change: a path no key can hold, a file it cannot read, an
    excluded binary (8 KiB read to tell).
    """
    full = root / path
    if not keyable(repo_id, path) or not os.access(full, os.R_OK):
        return False
    return not (skip_binary and is_binary_file(full))


def _impacted(
    store: Store, repo_id: str, paths: list[str], changed: set[str]
) -> list[ImpactedFile]:
    found: dict[str, str] = {}
    records = [(path, stored_links(store, repo_id, f"in:{path}")) for path in paths]
    # Covering tests first, of every changed file: a test that covers one changed file and
    # merely depends on another is reported as covering the first.
    for verb in ("covers", "depends on"):
        for path, links in records:
            for link in links.covering_tests if verb == "covers" else links.dependents:
                found.setdefault(link.path, f"{verb} {path} ({link.reason})")
    return [ImpactedFile(p, reason) for p, reason in sorted(found.items()) if p not in changed]
