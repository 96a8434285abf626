"""The workspace: the facade every surface and library user works through.

:class:`Workspace` (:mod:`.facade`) opens the store and answers every operation in frozen
dataclasses: repositories (:mod:`.registry`), health (:mod:`.health`), the index views,
retrieval (search, context bundles, pages, the repository map), memory and claims. Servers
start its background work (:mod:`.background`). See ``docs/architecture.md``.
"""

from repocontext.workspace.facade import Workspace
from repocontext.workspace.health import (
    HealthReport,
    RepositoryHealth,
    RetrievalPhase,
    StoreHealth,
    Verdict,
)
from repocontext.workspace.registry import RepoInfo

__all__ = [
    "HealthReport",
    "RepoInfo",
    "RepositoryHealth",
    "RetrievalPhase",
    "StoreHealth",
    "Verdict",
    "Workspace",
]
