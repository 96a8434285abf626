"""Indexing: walk, ignore rules, fingerprints, outlines, imports, references, covering tests.

The face of the index for the layers above: the typed values its views answer with and the
walk options a repository is indexed with. The work itself is organised by concept in
subpackages (``parsing/``, ``files/``, ``links/``, ``projections/``, ``run/``; see
``docs/indexing.md``, "Layout"); callers reach it through :class:`~repocontext.workspace.
Workspace` (``bootstrap``, ``refresh``, ``outline``, ``related``, ``changed``).
"""

from repocontext.index.drift import DriftReport, ImpactedFile
from repocontext.index.files.roots import resolve_path
from repocontext.index.files.walk import DEFAULT_MAX_FILE_BYTES, WalkOptions
from repocontext.index.model import (
    FileLinks,
    FileNode,
    FileOutline,
    ImportRef,
    Link,
    NodeStat,
    RelatedLink,
    Symbol,
)
from repocontext.index.removal import IndexReset, RepoRemoval
from repocontext.index.run.status import IndexProgress, IndexStatus, ProgressFn
from repocontext.index.service import (
    MAX_RELATED_PAGE,
    RELATED_PAGE,
    IndexService,
    OutlineView,
    RelatedView,
)

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "MAX_RELATED_PAGE",
    "RELATED_PAGE",
    "DriftReport",
    "FileLinks",
    "FileNode",
    "FileOutline",
    "ImpactedFile",
    "ImportRef",
    "IndexProgress",
    "IndexReset",
    "IndexService",
    "IndexStatus",
    "Link",
    "NodeStat",
    "OutlineView",
    "ProgressFn",
    "RelatedLink",
    "RelatedView",
    "RepoRemoval",
    "Symbol",
    "WalkOptions",
    "resolve_path",
]
