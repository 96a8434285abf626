"""The wire form of what is read from a repository: pages, symbols, grep matches, the map.

The results of ``repocontext_read`` (:class:`ReadResult`, from a :class:`~repocontext.pack.Page`),
``repocontext_symbol`` (:class:`SymbolSourcesResult`, from
:class:`~repocontext.pack.SymbolSources`), ``repocontext_grep`` (:class:`GrepResult`, from a
:class:`~repocontext.search.GrepPage`) and ``repocontext_map`` (:class:`RepoMapResult`, from a
:class:`~repocontext.search.RepoMap`); the CLI's ``--json`` prints the same objects.
"""

from __future__ import annotations

from repocontext.pack import (
    AmbiguousName,
    Enclosing,
    MissingSymbol,
    OmittedSymbol,
    Page,
    SymbolSource,
    SymbolSources,
)
from repocontext.search import GrepMatch, GrepPage, RepoMap, RepoMapEntry
from repocontext.wire._base import WireModel

__all__ = [
    "AmbiguousNameWire",
    "EnclosingWire",
    "GrepMatchWire",
    "GrepResult",
    "MissingSymbolWire",
    "OmittedSymbolWire",
    "ReadResult",
    "RepoMapEntryResult",
    "RepoMapResult",
    "SymbolSourceWire",
    "SymbolSourcesResult",
]


class ReadResult(WireModel):
    """Result of ``repocontext_read``."""

    path: str
    start_line: int
    end_line: int
    text: str
    blob_id: str
    token_count: int
    fresh: bool
    continuation: int | None = None

    @classmethod
    def of(cls, page: Page) -> ReadResult:
        """Build the wire form of a :class:`~repocontext.pack.Page`."""
        return cls(
            path=page.path,
            start_line=page.start_line,
            end_line=page.end_line,
            text=page.text,
            blob_id=page.blob_id,
            token_count=page.token_count,
            fresh=page.fresh,
            continuation=page.continuation,
        )


class EnclosingWire(WireModel):
    """A definition around a served symbol, with its header lines."""

    fully_qualified_name: str
    kind: str
    start_line: int
    end_line: int
    header: str
    token_count: int

    @classmethod
    def of(cls, enclosing: Enclosing) -> EnclosingWire:
        """Build the wire form of an :class:`~repocontext.pack.Enclosing`."""
        return cls(
            fully_qualified_name=enclosing.fq_name,
            kind=enclosing.kind,
            start_line=enclosing.start_line,
            end_line=enclosing.end_line,
            header=enclosing.header,
            token_count=enclosing.token_count,
        )


class SymbolSourceWire(WireModel):
    """One definition served by ``repocontext_symbol``."""

    name: str
    fully_qualified_name: str
    path: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    text: str
    token_count: int
    blob_id: str
    fresh: bool
    enclosing: list[EnclosingWire]

    @classmethod
    def of(cls, source: SymbolSource) -> SymbolSourceWire:
        """Build the wire form of a :class:`~repocontext.pack.SymbolSource`."""
        return cls(
            name=source.name,
            fully_qualified_name=source.fq_name,
            path=source.path,
            kind=source.kind,
            start_line=source.start_line,
            end_line=source.end_line,
            signature=source.signature,
            text=source.text,
            token_count=source.token_count,
            blob_id=source.blob_id,
            fresh=source.fresh,
            enclosing=[EnclosingWire.of(e) for e in source.enclosing],
        )


class MissingSymbolWire(WireModel):
    """A name (or a definition of it) that could not be served, and why."""

    name: str
    reason: str
    suggestions: list[str]

    @classmethod
    def of(cls, missing: MissingSymbol) -> MissingSymbolWire:
        """Build the wire form of a :class:`~repocontext.pack.MissingSymbol`."""
        return cls(name=missing.name, reason=missing.reason, suggestions=list(missing.suggestions))


class OmittedSymbolWire(WireModel):
    """A definition left out because it did not fit the budget."""

    name: str
    fully_qualified_name: str
    path: str
    start_line: int
    end_line: int
    token_count: int

    @classmethod
    def of(cls, omitted: OmittedSymbol) -> OmittedSymbolWire:
        """Build the wire form of an :class:`~repocontext.pack.OmittedSymbol`."""
        return cls(
            name=omitted.name,
            fully_qualified_name=omitted.fq_name,
            path=omitted.path,
            start_line=omitted.start_line,
            end_line=omitted.end_line,
            token_count=omitted.token_count,
        )


class AmbiguousNameWire(WireModel):
    """A name that matched several definitions."""

    name: str
    matches: int
    served: int

    @classmethod
    def of(cls, ambiguous: AmbiguousName) -> AmbiguousNameWire:
        """Build the wire form of an :class:`~repocontext.pack.AmbiguousName`."""
        return cls(name=ambiguous.name, matches=ambiguous.matches, served=ambiguous.served)


class SymbolSourcesResult(WireModel):
    """Result of ``repocontext_symbol``."""

    symbols: list[SymbolSourceWire]
    missing: list[MissingSymbolWire]
    omitted: list[OmittedSymbolWire]
    ambiguous: list[AmbiguousNameWire]
    token_count: int
    budget_tokens: int | None = None

    @classmethod
    def of(cls, sources: SymbolSources) -> SymbolSourcesResult:
        """Build the wire form of :class:`~repocontext.pack.SymbolSources`."""
        return cls(
            symbols=[SymbolSourceWire.of(s) for s in sources.symbols],
            missing=[MissingSymbolWire.of(m) for m in sources.missing],
            omitted=[OmittedSymbolWire.of(o) for o in sources.omitted],
            ambiguous=[AmbiguousNameWire.of(a) for a in sources.ambiguous],
            token_count=sources.token_count,
            budget_tokens=sources.budget_tokens,
        )


class GrepMatchWire(WireModel):
    """One matching line with its context."""

    path: str
    line: int
    column: int
    text: str
    before: list[str]
    after: list[str]

    @classmethod
    def of(cls, match: GrepMatch) -> GrepMatchWire:
        """Build the wire form of a :class:`~repocontext.search.GrepMatch`."""
        return cls(
            path=match.path,
            line=match.line,
            column=match.column,
            text=match.text,
            before=list(match.before),
            after=list(match.after),
        )


class GrepResult(WireModel):
    """Result of ``repocontext_grep``."""

    matches: list[GrepMatchWire]
    truncated: bool
    continuation_token: str | None = None
    files_searched: int

    @classmethod
    def of(cls, page: GrepPage) -> GrepResult:
        """Build the wire form of a :class:`~repocontext.search.GrepPage`."""
        return cls(
            matches=[GrepMatchWire.of(m) for m in page.matches],
            truncated=page.truncated,
            continuation_token=page.continuation_token,
            files_searched=page.files_searched,
        )


class RepoMapEntryResult(WireModel):
    """One file of a map."""

    path: str
    symbols: list[str]

    @classmethod
    def of(cls, entry: RepoMapEntry) -> RepoMapEntryResult:
        """Build the wire form of a :class:`~repocontext.search.RepoMapEntry`."""
        return cls(path=entry.path, symbols=list(entry.symbols))


class RepoMapResult(WireModel):
    """Result of ``repocontext_map``."""

    repo_id: str
    budget_tokens: int
    token_count: int
    files: int
    truncated: bool
    entries: list[RepoMapEntryResult]

    @classmethod
    def of(cls, repo_map: RepoMap) -> RepoMapResult:
        """Build the wire form of a :class:`~repocontext.search.RepoMap`."""
        return cls(
            repo_id=repo_map.repo_id,
            budget_tokens=repo_map.budget_tokens,
            token_count=repo_map.token_count,
            files=repo_map.files,
            truncated=repo_map.truncated,
            entries=[RepoMapEntryResult.of(entry) for entry in repo_map.entries],
        )
