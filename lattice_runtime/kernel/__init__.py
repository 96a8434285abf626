"""The context kernel: pages, the repository map and context faults, on repocontext.

:class:`ContextKernel` (:mod:`.kernel`) indexes a repository into ``.lattice/index`` with an
embedded repocontext workspace (:mod:`.workspace`), ranks its files for the task's goal
(:mod:`.relevance`), grants the initial set of :class:`ContextPage` values (:mod:`.pages`,
:mod:`.selection`) with a repository map of the rest (:mod:`.repomap`), serves context faults
(:mod:`.faults`) within the task's budget (:mod:`.grant`), and refuses a page whose file
changed since it was granted. It uses repocontext only through package faces. See
``docs/lattice-kernel.md``.
"""

from lattice_runtime.kernel.grant import ContextGrant, FaultRecord
from lattice_runtime.kernel.kernel import ContextKernel
from lattice_runtime.kernel.pages import (
    SLICE_CHARS,
    WHOLE_FILE_CHARS,
    WHOLE_FILE_CHARS_HIGH_RISK,
    ContextPage,
    PageKind,
    PageReason,
    page_id,
)
from lattice_runtime.kernel.relevance import (
    PATH_MATCH,
    REFERENCE_MATCH,
    SEARCH_WEIGHT,
    SYMBOL_MATCH,
    TEST_BONUS,
    FileRelevance,
    Ranking,
)
from lattice_runtime.kernel.repomap import MAP_CHARS, MAP_SYMBOLS, MapEntry, RepoMapView
from lattice_runtime.kernel.workspace import REPO_ID, Embedder, RepoIndex, index_settings

__all__ = [
    "MAP_CHARS",
    "MAP_SYMBOLS",
    "PATH_MATCH",
    "REFERENCE_MATCH",
    "REPO_ID",
    "SEARCH_WEIGHT",
    "SLICE_CHARS",
    "SYMBOL_MATCH",
    "TEST_BONUS",
    "WHOLE_FILE_CHARS",
    "WHOLE_FILE_CHARS_HIGH_RISK",
    "ContextGrant",
    "ContextKernel",
    "ContextPage",
    "Embedder",
    "FaultRecord",
    "FileRelevance",
    "MapEntry",
    "PageKind",
    "PageReason",
    "Ranking",
    "RepoIndex",
    "RepoMapView",
    "index_settings",
    "page_id",
]
