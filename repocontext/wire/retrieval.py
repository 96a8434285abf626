"""The wire form of retrieval results: search, context, stats, outline, related, changed, status.

Each model is built from a typed value with ``of(...)``, and :meth:`WireModel.wire` gives the
JSON object the MCP tool sends as structured content (the CLI's ``--json`` prints the same;
the HTTP app serves ``/stats`` from :class:`StatsResultWire`). Fields that are absent on the
wire when unset (``children``, ``names``, ``expiresAt``, a search's ``warnings``, a context
bundle's optional parts) are left out rather than sent as ``null``, as the tools always did.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Literal, TypeAlias

from pydantic import Field, JsonValue, SerializerFunctionWrapHandler, model_serializer

from repocontext.index.drift import DriftReport
from repocontext.index.model import RelatedLink, Symbol
from repocontext.index.run.status import IndexStatus
from repocontext.index.service import OutlineView, RelatedView
from repocontext.pack.model import Bundle, BundleEntry, BundleUnit, ReusedItem
from repocontext.pack.stats import CallStats
from repocontext.search.hits import FileEntry, Freshness, NoteEntry, SearchHit, SearchResult
from repocontext.wire._base import WireModel

__all__ = [
    "BundleEntryWire",
    "BundleUnitWire",
    "ChangedResult",
    "ContextResultWire",
    "FileEntryWire",
    "FreshnessWire",
    "ImpactedEntry",
    "IndexStatusResult",
    "LinkResult",
    "NoteEntryWire",
    "OutlineResult",
    "RelatedResult",
    "ReusedWire",
    "SearchHitWire",
    "SearchResultWire",
    "StatsResultWire",
    "SymbolResult",
]


class _Sparse(WireModel):
    """A wire model whose :attr:`sparse` fields are left out when unset (``None``)."""

    sparse: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self.sparse:
                field = type(self).model_fields[name]
                key = field.alias or name
                if data.get(key, 0) is None:
                    del data[key]
                elif data.get(name, 0) is None:
                    del data[name]
        return data


# -- search ----------------------------------------------------------------------------------


class FileEntryWire(WireModel):
    """What a code hit says about its file."""

    kind: Literal["file"] = "file"
    language: str | None
    token_count: int
    lines: int
    is_test: bool

    @classmethod
    def of(cls, entry: FileEntry) -> FileEntryWire:
        """Build the wire form of a :class:`FileEntry`."""
        return cls(
            language=entry.language,
            token_count=entry.token_count,
            lines=entry.lines,
            is_test=entry.is_test,
        )


class NoteEntryWire(_Sparse):
    """What a memory hit says about its entry."""

    sparse: ClassVar[frozenset[str]] = frozenset({"expires_at"})

    kind: Literal["memory"] = "memory"
    topic: str
    id: str
    memory_kind: str | None
    title: str | None
    tags: list[str]
    expires_at: float | None = None

    @classmethod
    def of(cls, entry: NoteEntry) -> NoteEntryWire:
        """Build the wire form of a :class:`NoteEntry`."""
        return cls(
            topic=entry.topic,
            id=entry.id,
            memory_kind=entry.memory_kind,
            title=entry.title,
            tags=list(entry.tags),
            expires_at=entry.expires_at,
        )


class SearchHitWire(WireModel):
    """One hit of ``repocontext_search``."""

    key: str
    path: str | None = None
    score: float
    reasons: list[str]
    entry: FileEntryWire | NoteEntryWire = Field(discriminator="kind")
    lines: list[int] | None = None

    @classmethod
    def of(cls, hit: SearchHit) -> SearchHitWire:
        """Build the wire form of a :class:`SearchHit` (its node, text and symbols stay)."""
        entry = hit.entry
        return cls(
            key=hit.key,
            path=hit.path,
            score=hit.score,
            reasons=list(hit.reasons),
            entry=(
                FileEntryWire.of(entry) if isinstance(entry, FileEntry) else NoteEntryWire.of(entry)
            ),
            lines=list(hit.lines) if hit.lines else None,
        )


class FreshnessWire(WireModel):
    """How current the index behind a search answer is."""

    indexed_at: str | None
    last_ingested_at: str | None
    indexed_commit: str | None
    indexing: bool
    store_seq: int

    @classmethod
    def of(cls, freshness: Freshness) -> FreshnessWire:
        """Build the wire form of a :class:`Freshness`."""
        return cls(
            indexed_at=freshness.indexed_at,
            last_ingested_at=freshness.last_ingested_at,
            indexed_commit=freshness.indexed_commit,
            indexing=freshness.indexing,
            store_seq=freshness.store_seq,
        )


class SearchResultWire(_Sparse):
    """Result of ``repocontext_search`` (``warnings`` only when there are some)."""

    sparse: ClassVar[frozenset[str]] = frozenset({"warnings"})

    mode: str
    retrieval_path: str
    hits: list[SearchHitWire]
    freshness: FreshnessWire
    warnings: list[str] | None = None

    @classmethod
    def of(cls, result: SearchResult) -> SearchResultWire:
        """Build the wire form of a :class:`SearchResult`."""
        return cls(
            mode=result.mode,
            retrieval_path=result.retrieval_path,
            hits=[SearchHitWire.of(hit) for hit in result.hits],
            freshness=FreshnessWire.of(result.freshness),
            warnings=list(result.warnings) or None,
        )


# -- context ---------------------------------------------------------------------------------


BundleUnitWire: TypeAlias = tuple[str, str, int, int, int]
"""One delivered unit of a bundle entry, compact: ``[receipt, kind, startLine, endLine,
tokenCount]`` (its symbol and reason are in the text block's header)."""


def unit_wire(unit: BundleUnit) -> BundleUnitWire:
    """The wire form of a :class:`BundleUnit`."""
    return (unit.receipt, unit.kind, unit.start_line, unit.end_line, unit.token_count)


class BundleEntryWire(WireModel):
    """One entry of a context bundle: metadata, and its code only with ``jsonCode``.

    ``contentHash`` is sent for a whole file (what a ``known`` claim names) and with the code.
    """

    path: str
    score: float
    reasons: list[str]
    token_count: int
    full_read_token_count: int
    content: str | None = None
    content_hash: str | None = None
    units: list[BundleUnitWire]

    @classmethod
    def of(cls, entry: BundleEntry, json_code: bool = False) -> BundleEntryWire:
        """Build the wire form of a :class:`BundleEntry`."""
        whole = any(unit.kind == "file" for unit in entry.units)
        return cls(
            path=entry.path,
            score=entry.score,
            reasons=list(entry.reasons),
            token_count=entry.token_count,
            full_read_token_count=entry.full_read_token_count,
            content=entry.content if json_code else None,
            content_hash=entry.content_hash if json_code or whole else None,
            units=[unit_wire(unit) for unit in entry.units],
        )


class ReusedWire(WireModel):
    """Something a bundle did not send again."""

    path: str
    kind: str
    receipt: str | None = None
    content_hash: str | None = None

    @classmethod
    def of(cls, item: ReusedItem) -> ReusedWire:
        """Build the wire form of a :class:`ReusedItem`."""
        return cls(
            path=item.path, kind=item.kind, receipt=item.receipt, content_hash=item.content_hash
        )


class ContextResultWire(WireModel):
    """The structured result of ``repocontext_context`` (see TOOLS.md); unset parts left out.

    The metadata of a bundle: its code is the tool's text block (:attr:`Bundle.text`), and
    is repeated here (``content``) only when asked for with ``jsonCode``. The field order is
    the order the bundle's cost was counted in (:func:`repocontext.pack.model.bundle_form`).
    """

    mode: str
    retrieval_path: str
    detail: str
    budget_tokens: int
    total_tokens: int
    response_tokens: int
    truncated: bool
    entries: list[BundleEntryWire]
    reused: list[ReusedWire]
    session: str | None = None
    reused_omitted: int | None = None
    retry_budget_tokens: int | None = None
    warnings: list[str] | None = None

    @classmethod
    def of(cls, bundle: Bundle) -> ContextResultWire:
        """Build the wire form of a :class:`Bundle`."""
        return cls(
            mode=bundle.mode,
            retrieval_path=bundle.retrieval_path,
            detail=bundle.detail,
            budget_tokens=bundle.budget_tokens,
            total_tokens=bundle.total_tokens,
            response_tokens=bundle.response_tokens,
            truncated=bundle.truncated,
            entries=[BundleEntryWire.of(entry, bundle.json_code) for entry in bundle.entries],
            reused=[ReusedWire.of(item) for item in bundle.reused],
            session=bundle.session,
            reused_omitted=bundle.reused_omitted,
            retry_budget_tokens=bundle.retry_budget_tokens,
            warnings=list(bundle.warnings) or None,
        )

    def wire(self) -> dict[str, JsonValue]:
        """The JSON object, without the parts that are unset."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class StatsResultWire(WireModel):
    """Result of ``repocontext_stats`` (and of the HTTP app's ``/stats``)."""

    calls: int
    response_tokens: int
    reads_replaced_tokens: int
    net_saved_tokens: int
    window_seconds: float

    @classmethod
    def of(cls, stats: CallStats) -> StatsResultWire:
        """Build the wire form of a :class:`CallStats`."""
        return cls(
            calls=stats.calls,
            response_tokens=stats.response_tokens,
            reads_replaced_tokens=stats.reads_replaced_tokens,
            net_saved_tokens=stats.net_saved_tokens,
            window_seconds=stats.window_seconds,
        )


# -- index views -----------------------------------------------------------------------------


class IndexStatusResult(WireModel):
    """Result of ``repocontext_index_status`` and ``repocontext_bootstrap``."""

    repo_id: str
    status: str
    phase: str | None
    counters: dict[str, JsonValue]
    attempt: int
    started_at: str | None
    finished_at: str | None
    elapsed_ms: int
    error: dict[str, JsonValue] | None = None
    issues: list[JsonValue] = Field(default_factory=list)

    @classmethod
    def of(cls, status: IndexStatus) -> IndexStatusResult:
        """Build the wire form of an :class:`IndexStatus`."""
        return cls.model_validate(dataclasses.asdict(status))


class SymbolResult(_Sparse):
    """One symbol of an outline, with its nested ones (``children`` only when it has some)."""

    sparse: ClassVar[frozenset[str]] = frozenset({"children"})

    kind: str
    name: str
    fully_qualified_name: str
    signature: str
    start_line: int
    end_line: int
    children: list[SymbolResult] | None = None

    @classmethod
    def of(cls, symbol: Symbol) -> SymbolResult:
        """Build the wire form of a :class:`Symbol` and its children."""
        return cls(
            kind=symbol.kind,
            name=symbol.name,
            fully_qualified_name=symbol.fq_name,
            signature=symbol.signature,
            start_line=symbol.start_line,
            end_line=symbol.end_line,
            children=[cls.of(child) for child in symbol.children] or None,
        )


class OutlineResult(WireModel):
    """Result of ``repocontext_outline``."""

    exists: bool
    language: str | None
    token_count: int | None
    symbols: list[SymbolResult]
    syntax_errors: bool = False
    symbol_count: int = 0
    truncated: bool = False

    @classmethod
    def of(cls, view: OutlineView) -> OutlineResult:
        """Build the wire form of an :class:`OutlineView`."""
        return cls(
            exists=view.exists,
            language=view.language,
            token_count=view.token_count,
            symbols=[SymbolResult.of(symbol) for symbol in view.symbols],
            syntax_errors=view.syntax_errors,
            symbol_count=view.symbol_count,
            truncated=view.truncated,
        )


class LinkResult(_Sparse):
    """One link of a file: the file at the other end and why (``names`` when known)."""

    sparse: ClassVar[frozenset[str]] = frozenset({"names"})

    path: str
    reason: str
    names: list[str] | None = None

    @classmethod
    def of(cls, link: RelatedLink) -> LinkResult:
        """Build the wire form of a :class:`RelatedLink`."""
        return cls(path=link.path, reason=link.reason, names=list(link.names) or None)


class RelatedResult(WireModel):
    """Result of ``repocontext_related``."""

    exists: bool
    imports: list[LinkResult]
    references: list[LinkResult]
    dependents: list[LinkResult]
    covering_tests: list[LinkResult]
    truncated: bool = False
    next_offset: int | None = None

    @classmethod
    def of(cls, view: RelatedView) -> RelatedResult:
        """Build the wire form of a :class:`RelatedView`."""
        return cls(
            exists=view.exists,
            imports=[LinkResult.of(link) for link in view.imports],
            references=[LinkResult.of(link) for link in view.references],
            dependents=[LinkResult.of(link) for link in view.dependents],
            covering_tests=[LinkResult.of(link) for link in view.covering_tests],
            truncated=view.truncated,
            next_offset=view.next_offset,
        )


class ImpactedEntry(WireModel):
    """One impacted file."""

    path: str
    reason: str


class ChangedResult(WireModel):
    """Result of ``repocontext_changed``."""

    added: list[str]
    updated: list[str]
    removed: list[str]
    impacted: list[ImpactedEntry]
    checked_files: int
    elapsed_ms: int

    @classmethod
    def of(cls, report: DriftReport) -> ChangedResult:
        """Build the wire form of a :class:`DriftReport`."""
        return cls(
            added=list(report.added),
            updated=list(report.updated),
            removed=list(report.removed),
            impacted=[ImpactedEntry(path=i.path, reason=i.reason) for i in report.impacted],
            checked_files=report.checked_files,
            elapsed_ms=report.elapsed_ms,
        )
