"""The embedded repocontext workspace the kernel reads a repository through.

Each repository gets its own store under ``<repo>/.lattice/index`` (git-excluded by
:func:`~lattice_runtime._files.lattice_dir`), registered under the fixed id :data:`REPO_ID`.
The settings are built here, in code, from defaults and the caller's arguments: no
``REPOCONTEXT_*`` variable and no ``.env`` file is read (library code never reads the
environment). Keyword-only by default: no embedding model is loaded or downloaded unless the
caller picks an embedder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from lattice_runtime._files import lattice_dir
from lattice_runtime.errors import ContextError
from repocontext.errors import RepoConflictError, RepoContextError
from repocontext.index import WalkOptions
from repocontext.settings import Settings
from repocontext.workspace import Workspace

__all__ = ["INDEX_DIR", "REPO_ID", "Embedder", "RepoIndex", "index_settings"]

REPO_ID: Final = "repo"
"""The id the repository is registered under in its own store."""
INDEX_DIR: Final = "index"
"""The store's directory under ``.lattice/``."""
_NEVER_INDEXED: Final = (".lattice/**",)
"""The runtime's own directory, left out even where git's exclude file does not apply."""

Embedder = Literal["off", "static", "minilm"]
"""``off``: keyword ranking only (the default); ``static`` / ``minilm``: hybrid ranking."""


class _CodeSettings(Settings):
    """:class:`Settings` taken from the constructor's arguments alone (no environment)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def index_settings(repo_root: Path, *, embedder: Embedder = "off") -> Settings:
    """The settings of a repository's embedded store, built in code.

    Raises:
        UnsafePathError: ``<repo>/.lattice`` is a symlink or not a directory.
    """
    root = repo_root.resolve()
    return _CodeSettings(
        data_dir=lattice_dir(root) / INDEX_DIR,
        workspace_root=root,
        embedder=embedder,
        reconcile="off",
        access_log=False,
    )


@dataclass(frozen=True, slots=True)
class RepoIndex:
    """An open workspace holding one indexed repository.

    Attributes:
        workspace: The repocontext facade (closed by :meth:`close`).
        repo_id: The repository's id in it (:data:`REPO_ID`).
        root: The repository root, resolved.
    """

    workspace: Workspace
    repo_id: str
    root: Path

    @classmethod
    def open(cls, repo_root: Path, *, embedder: Embedder = "off") -> RepoIndex:
        """Open the repository's store and index the repository now, in this thread.

        Later opens index incrementally (unchanged files are not read again). A store that
        registered the repository at another root (the repository was moved) is re-indexed.

        Raises:
            ContextError: The repository cannot be opened or indexed (the message says why).
            UnsafePathError: ``<repo>/.lattice`` is a symlink or not a directory.
        """
        root = repo_root.resolve()
        settings = index_settings(root, embedder=embedder)
        try:
            workspace = Workspace.open(settings)
        except RepoContextError as exc:
            raise ContextError(f"cannot open the index of {root}: {exc}") from exc
        try:
            _index(workspace, root, embedder)
        except RepoContextError as exc:
            workspace.close()
            raise ContextError(f"cannot index {root}: {exc}", hint=exc.hint) from exc
        except BaseException:
            workspace.close()
            raise
        return cls(workspace, REPO_ID, root)

    def close(self) -> None:
        """Close the workspace (idempotent)."""
        self.workspace.close()


def _index(workspace: Workspace, root: Path, embedder: Embedder) -> None:
    """Index ``root`` synchronously (and embed it, with an embedder).

    Raises:
        RepoContextError: Registering or indexing failed.
        ContextError: The index run did not complete.
    """
    options = WalkOptions(exclude_globs=_NEVER_INDEXED)
    try:
        status = workspace.bootstrap(root, REPO_ID, options, background=False)
    except RepoConflictError:  # the repository moved: its old records are of another root
        workspace.remove_repo(REPO_ID)
        status = workspace.bootstrap(root, REPO_ID, options, background=False)
    if status.status != "completed":
        reason = (status.error or {}).get("message") or "no reason given"
        raise ContextError(
            f"indexing {root} ended {status.status}: {reason!s}",
            hint="Run `repocontext doctor` on the repository, or remove .lattice/index.",
        )
    if embedder != "off":
        workspace.embed(REPO_ID)
