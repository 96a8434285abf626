"""The camelCase wire form of typed values: the result models of MCP, HTTP and CLI ``--json``.

One pydantic model per result, built from its typed value with ``Model.of(value)``; the JSON
schema of each is the output schema its MCP tool declares, and the MCP tools, the HTTP app
and the CLI all render through them, so the three send the same objects. Domain code never
imports this package; adapters never build a wire dict by hand.
"""

from repocontext.wire._base import WireModel
from repocontext.wire.claims import ClaimResult, ClaimStatusResult, ReleaseResult, RenewResult
from repocontext.wire.entries import EntryClaimResult, EntryResult, ScanResult, StaleLinkResult
from repocontext.wire.memory import (
    ForgetResult,
    NeighborNode,
    NeighborsResult,
    TopicCount,
    TopicsResult,
)
from repocontext.wire.reading import (
    AmbiguousNameWire,
    EnclosingWire,
    GrepMatchWire,
    GrepResult,
    MissingSymbolWire,
    OmittedSymbolWire,
    ReadResult,
    RepoMapEntryResult,
    RepoMapResult,
    SymbolSourcesResult,
    SymbolSourceWire,
)
from repocontext.wire.retrieval import (
    BundleEntryWire,
    BundleUnitWire,
    ChangedResult,
    ContextResultWire,
    FileEntryWire,
    FreshnessWire,
    ImpactedEntry,
    IndexStatusResult,
    LinkResult,
    NoteEntryWire,
    OutlineResult,
    RelatedResult,
    ReusedWire,
    SearchHitWire,
    SearchResultWire,
    StatsResultWire,
    SymbolResult,
)
from repocontext.wire.workspace import (
    HealthResult,
    ListReposResult,
    RemoveRepoResult,
    RepoEntry,
    RepositoryResult,
    ResetIndexResult,
)

__all__ = [
    "AmbiguousNameWire",
    "BundleEntryWire",
    "BundleUnitWire",
    "ChangedResult",
    "ClaimResult",
    "ClaimStatusResult",
    "ContextResultWire",
    "EnclosingWire",
    "EntryClaimResult",
    "EntryResult",
    "FileEntryWire",
    "ForgetResult",
    "FreshnessWire",
    "GrepMatchWire",
    "GrepResult",
    "HealthResult",
    "ImpactedEntry",
    "IndexStatusResult",
    "LinkResult",
    "ListReposResult",
    "MissingSymbolWire",
    "NeighborNode",
    "NeighborsResult",
    "NoteEntryWire",
    "OmittedSymbolWire",
    "OutlineResult",
    "ReadResult",
    "RelatedResult",
    "ReleaseResult",
    "RemoveRepoResult",
    "RenewResult",
    "RepoEntry",
    "RepoMapEntryResult",
    "RepoMapResult",
    "RepositoryResult",
    "ResetIndexResult",
    "ReusedWire",
    "ScanResult",
    "SearchHitWire",
    "SearchResultWire",
    "StaleLinkResult",
    "StatsResultWire",
    "SymbolResult",
    "SymbolSourceWire",
    "SymbolSourcesResult",
    "TopicCount",
    "TopicsResult",
    "WireModel",
]
