"""The repository registry: which directories are registered under which ids.

A repository record (``repo/{repoId}`` in the structural tree) holds the root, when it was
registered, its kept walk filters and the counters the index keeps there. Every path a caller
passes is realpath-checked inside the workspace root first (:meth:`Registry.guard`); a
directory is registered under one id only, and a new id is a plain name.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from repocontext.arguments import new_repo_id, quoted, repo_path
from repocontext.arguments import repo_id as checked_repo_id
from repocontext.errors import (
    InvalidInputError,
    NoWorkspaceRootError,
    PathOutsideWorkspaceError,
    RepoConflictError,
)
from repocontext.index.files.roots import check_root, resolve_path
from repocontext.index.files.walk import WalkOptions
from repocontext.store import (
    STRUCTURAL,
    Clock,
    RepoRecord,
    Store,
    Value,
    read_repo,
    stored_repo_value,
)
from repocontext.store.clock import iso_utc
from repocontext.store.keys import decode_component, repo_key

__all__ = ["Registry", "RepoInfo"]

_REPO_SCAN_PREFIX: Final = "repo/"


@dataclass(frozen=True, slots=True)
class RepoInfo:
    """A registered repository.

    Attributes:
        repo_id: The repository id (unique in the store).
        root: Absolute, symlink-free path of the repository root.
        registered_at: When it was registered (ISO 8601, UTC).
        files: Files in its index.
        indexed_at: When its last index pass finished (ISO 8601, UTC), or ``None``.
        vectors: Vectors in its semantic index.
        last_ingested_at: When the last file change was ingested, or ``None``.
        indexed_commit: Git commit the index reflects, or ``None``.
    """

    repo_id: str
    root: str
    registered_at: str | None
    files: int
    indexed_at: str | None
    vectors: int
    last_ingested_at: str | None = None
    indexed_commit: str | None = None

    @classmethod
    def of(cls, repo: RepoRecord) -> RepoInfo:
        """The view of a repository's registration record."""
        return cls(
            repo_id=repo.repo_id,
            root=repo.root,
            registered_at=repo.registered_at,
            files=repo.files,
            indexed_at=repo.indexed_at,
            vectors=repo.vectors,
            last_ingested_at=repo.last_ingested_at,
            indexed_commit=repo.indexed_commit,
        )


class Registry:
    """Registered repositories of one store, and the path guard of the workspace root."""

    def __init__(self, store: Store, clock: Clock, workspace_root: Path | None) -> None:
        """Read and write repository records of ``store``; check paths against the root."""
        self._store = store
        self._clock = clock
        self._workspace_root = workspace_root

    def guard(self, path: Path | str) -> Path:
        """Return the resolved repository directory ``path`` names, checked.

        Raises:
            NoWorkspaceRootError: The workspace has no root to check paths against.
            InvalidInputError: The path is empty or holds a NUL byte.
            PathOutsideWorkspaceError: The path resolves outside the workspace root.
            DangerousRootError: The path is the filesystem root or the home directory.
            PathNotFoundError: The path is not an existing directory.
        """
        workspace_root = self._workspace_root
        if workspace_root is None:
            raise NoWorkspaceRootError(
                f"cannot register {quoted(str(path))}: no workspace root is configured"
            )
        if not str(path).strip() or "\x00" in str(path):
            raise InvalidInputError(
                f"{quoted(str(path))} is no repository path", hint="Pass the repository directory."
            )
        given = Path(repo_path(str(path))).expanduser()
        # A relative path is relative to the workspace root, not to the server's directory.
        # Outside the root is refused before anything else is looked at (existence included).
        resolved = resolve_path(given if given.is_absolute() else workspace_root / given)
        if not resolved.is_relative_to(workspace_root.expanduser().resolve()):
            raise PathOutsideWorkspaceError(
                f"{quoted(str(path))} resolves to {quoted(str(resolved))}, outside the "
                f"workspace root {workspace_root}"
            )
        return check_root(resolved)

    def register(self, path: Path | str, repo_id: str | None = None) -> RepoInfo:
        """Register a repository directory (see :meth:`Workspace.register_repo`).

        Raises:
            RepoContextError: As :meth:`guard`; ``InvalidInputError`` for a malformed id,
                ``RepoConflictError`` for an id taken by another directory or a directory
                registered under another id.
        """
        root = self.guard(path)
        repo_id = checked_repo_id(repo_id if repo_id is not None else root.name)
        key = repo_key(repo_id)
        existing = read_repo(self._store, repo_id)
        if existing is not None:
            info = RepoInfo.of(existing)
            if info.root == str(root):
                return info
            raise RepoConflictError(
                f"repository id {quoted(repo_id)} is already registered at {info.root}"
            )
        new_repo_id(repo_id)
        if (same := next((r for r in self.iter_repos() if r.root == str(root)), None)) is not None:
            raise RepoConflictError(
                f"{root} is already registered as {same.repo_id!r}",
                hint=f"Use repoId {same.repo_id!r}; a directory is registered under one id.",
            )
        value: dict[str, Value] = {
            "root": str(root),
            "registeredAt": iso_utc(self._clock.now()),
            "files": 0,
            "indexedAt": None,
            "vectors": 0,
        }
        stored = self._store.put(STRUCTURAL, key, value)
        return RepoInfo.of(RepoRecord.of_value(repo_id, stored.value))

    def get(self, repo_id: str) -> RepoInfo | None:
        """Return the registered repository ``repo_id``, or ``None``.

        Raises:
            InvalidInputError: The repository id is empty or malformed.
        """
        repo = read_repo(self._store, checked_repo_id(repo_id))
        return RepoInfo.of(repo) if repo is not None else None

    def iter_repos(self) -> Iterator[RepoInfo]:
        """Every registered repository, in key order."""
        # The registry shares the structural tree with file records; only keys with exactly
        # two components (repo/{id}) are repository records. Each repository's subtree
        # (repo/{id}/...) is skipped in one jump, so the cost grows with repositories, not files.
        start: str | None = None
        while True:
            page = self._store.scan(STRUCTURAL, _REPO_SCAN_PREFIX, limit=1, start=start)
            if not page.records:
                return
            key = page.records[0].key
            head, _, rest = key.partition("/")
            encoded_id, slash, _ = rest.partition("/")
            if not slash:
                repo_id = decode_component(encoded_id)
                yield RepoInfo.of(RepoRecord.of_value(repo_id, page.records[0].value))
                start = key + "\x00"
            else:
                start = f"{head}/{encoded_id}0"  # '0' sorts right after '/'

    def kept_filters(self, repo_id: str) -> WalkOptions:
        """The walk filters kept with the repository (the defaults when none are)."""
        repo = read_repo(self._store, repo_id)
        return WalkOptions.from_wire(repo.filters if repo is not None else None)

    def keep_filters(self, repo_id: str, options: WalkOptions) -> None:
        """Keep ``options`` with the repository (written only when they changed)."""
        value = stored_repo_value(self._store, repo_id) or {}
        filters = options.to_wire()
        if value.get("filters") != filters:
            value["filters"] = filters
            self._store.put(STRUCTURAL, repo_key(repo_id), value)
