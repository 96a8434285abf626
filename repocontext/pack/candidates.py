"""The candidate files of one context call: tiled, scored and counted once.

:class:`Pool` turns a search result into :class:`~repocontext.pack.selection.Candidate` files
(what the caller already holds taken out and listed as reused), scores their tiles for the
task (:mod:`repocontext.pack.scoring`, with the callers, callees and covering tests of the
best files as second choices, read from the stored links) and counts each tile's tokens at
most once, however often the packer re-packs at another room or budget.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Final

from repocontext.index.files.nodes import file_text, read_file_node
from repocontext.index.model import FileNode, Symbol
from repocontext.index.projections.xref_records import stored_links
from repocontext.pack.model import BundleEntry, BundleUnit, ReusedItem
from repocontext.pack.request import ContextRequest
from repocontext.pack.scoring import (
    LINK_SHARE,
    Linked,
    Scored,
    matcher,
    query_names,
    query_terms,
    score_file,
    term_counts,
    term_weights,
)
from repocontext.pack.selection import WHOLE, Candidate
from repocontext.pack.units import (
    Tile,
    gap_end,
    receipt,
    run_receipt,
    run_receipts,
    short_hash,
    source_lines,
    tiles_of,
)
from repocontext.search.hits import SearchResult
from repocontext.store import Store
from repocontext.tokens import count_tokens

__all__ = ["MAX_RANKED", "TOKENS_PER_FILE", "Pool", "files_to_rank"]

MAX_RANKED: Final = 40
TOKENS_PER_FILE: Final = 1600
"""``slices`` and ``auto`` rank ``max(top, budget / TOKENS_PER_FILE)`` files (at most
:data:`MAX_RANKED`): a larger budget draws on more of the ranking."""
LINK_SEEDS: Final = 3
"""The best files whose callers, callees and tests are second choices."""
MAX_LINKED_FILES: Final = 4
"""Linked files read beside the ranked ones (the others are already candidates)."""


def files_to_rank(request: ContextRequest) -> int:
    """How many ranked files a request draws on (see :data:`TOKENS_PER_FILE`)."""
    if request.detail in ("paths", "outline"):
        return request.top
    return max(request.top, min(MAX_RANKED, request.budget // TOKENS_PER_FILE))


class Pool:
    """The candidates of one call and everything counted about them."""

    def __init__(
        self,
        store: Store,
        request: ContextRequest,
        result: SearchResult,
        seen: frozenset[str],
        known: Mapping[str, str],
    ) -> None:
        self.store = store
        self.request = request
        self.result = result
        self.seen = seen
        self.known = known
        self._counted: dict[str, int] = {}
        self._tokens: dict[tuple[int, int], int] = {}
        self._reused: list[ReusedItem] = []
        self._links: dict[str, list[tuple[int, str, frozenset[str]]]] = {}

    def count(self, text: str) -> int:
        """Exact tokens of ``text`` in the request's encoding (cached for repeated texts)."""
        if len(text) > 2000:
            return count_tokens(text, self.request.encoding)
        found = self._counted.get(text)
        if found is None:
            found = self._counted[text] = count_tokens(text, self.request.encoding)
        return found

    # -- candidates ----------------------------------------------------------------------

    @cached_property
    def candidates(self) -> list[Candidate]:
        """The ranked files with code to offer (held tiles marked, fully held files out)."""
        out: list[Candidate] = []
        hits = [h for h in self.result.hits if h.path and h.node is not None]
        for rank, hit in enumerate(hits):
            assert hit.path is not None and hit.node is not None  # (filtered above)
            if hit.text is None:
                continue
            candidate = self._candidate(rank, hit.path, hit.node, hit.text, hit.score)
            if candidate is not None:
                out.append(
                    _with(candidate, reasons=_file_reasons(hit.reasons), anchor=hit.lines)
                    if hit.lines
                    else _with(candidate, reasons=_file_reasons(hit.reasons))
                )
        out += self._linked_files(out)
        return out

    @property
    def reused(self) -> tuple[ReusedItem, ...]:
        """What the caller holds of the code candidates (listed, never sent)."""
        self.candidates  # noqa: B018 (builds the listing)
        return tuple(self._reused)

    def _candidate(
        self, rank: int, path: str, node: FileNode, text: str, score: float
    ) -> Candidate | None:
        digest = short_hash(text)
        if self.known.get(path) == digest:
            self._reused.append(ReusedItem(path, "file", content_hash=digest))
            return None
        whole = receipt(self.request.repo_id, path, digest, "file", "file")
        if whole in self.seen:
            self._reused.append(ReusedItem(path, "file", receipt=whole))
            return None
        lines = tuple(source_lines(text))
        tiles = tuple(tiles_of(node.symbols, lines))
        held: set[int] = set()
        found = run_receipts(self.request.repo_id, path, tiles, lines, self.seen)
        for mark, (first, last) in sorted(found.items(), key=lambda item: item[1]):
            held.update(range(first, last + 1))
            self._reused.append(ReusedItem(path, "slice", receipt=mark))
        if not tiles or len(held) == len(tiles):
            return None
        return Candidate(
            rank=rank,
            path=path,
            score=score,
            reasons=(),
            node=node,
            text=text,
            lines=lines,
            tiles=tiles,
            held=frozenset(held),
            anchor=None,
            path_tokens=self.count(path),
            whole_ok=not held,
        )

    def _linked_files(self, ranked: list[Candidate]) -> list[Candidate]:
        """Files linked to the best ranked ones that the ranking did not include."""
        have = {c.path for c in ranked} | {h.path for h in self.result.hits if h.path}
        out: list[Candidate] = []
        self._links = self._links_of(ranked[:LINK_SEEDS])
        for path in self._links:
            if path in have or len(out) >= MAX_LINKED_FILES:
                continue
            node = read_file_node(self.store, self.request.repo_id, path)
            text = file_text(self.store, self.request.repo_id, path)
            if node is None or text is None:
                continue
            candidate = self._candidate(len(ranked) + len(out), path, node, text, 0.0)
            if candidate is not None:
                out.append(_with(candidate, reasons=("linked",)))
                have.add(path)
        return out

    def _links_of(self, seeds: list[Candidate]) -> dict[str, list[tuple[int, str, frozenset[str]]]]:
        """Per linked path: (seed index, reason, names) of the links of the ``seeds``."""
        links: dict[str, list[tuple[int, str, frozenset[str]]]] = {}
        for seed, candidate in enumerate(seeds):
            outgoing = stored_links(self.store, self.request.repo_id, f"out:{candidate.path}")
            incoming = stored_links(self.store, self.request.repo_id, f"in:{candidate.path}")
            symbols = _names(candidate.node.symbols)
            groups = (
                ("callee", outgoing.imports + outgoing.references),
                ("caller", incoming.dependents),
                ("test", incoming.covering_tests),
            )
            for reason, group in groups:
                for link in group:
                    names = frozenset(link.names) or (
                        symbols if reason != "callee" else frozenset()
                    )
                    if names:
                        links.setdefault(link.path, []).append((seed, reason, names))
        return links

    # -- scores and counts ---------------------------------------------------------------

    @cached_property
    def scored(self) -> list[Scored]:
        """Every candidate's tiles scored for the task (second choices included)."""
        terms = query_terms(self.request.task)
        names = query_names(self.request.task)
        terms += sorted(names - set(terms))  # whole identifiers count in the text too
        pattern = matcher(terms)
        counts = [term_counts(c.text, _spans(c), pattern) for c in self.candidates]
        weights = term_weights(counts, terms)
        sizes = [[_chars(c, t) for t in c.tiles] for c in self.candidates]
        top = max((c.score for c in self.candidates), default=0.0)
        relative = [c.score / top if top > 0 else 1.0 for c in self.candidates]
        first = [
            score_file(
                c.tiles,
                sizes[i],
                counts[i],
                weights,
                c.rank,
                c.anchor,
                names=names,
                is_test=c.node.is_test,
                relative=relative[i],
            )
            for i, c in enumerate(self.candidates)
        ]
        out: list[Scored] = []
        for i, candidate in enumerate(self.candidates):
            links = [
                Linked(linked, reason, LINK_SHARE * first[seed].best)
                for seed, reason, linked in self._links.get(candidate.path, ())
                if seed != i
            ]
            if not links:
                out.append(first[i])
                continue
            texts = [self.tile_text(i, t) for t in range(len(candidate.tiles))]
            out.append(
                score_file(
                    candidate.tiles,
                    sizes[i],
                    counts[i],
                    weights,
                    candidate.rank,
                    candidate.anchor,
                    links,
                    texts,
                    names=names,
                    is_test=candidate.node.is_test,
                    relative=relative[i],
                )
            )
        return out

    def tile_text(self, f: int, t: int) -> str:
        """The text of tile ``t`` of candidate ``f`` (the whole text for :data:`WHOLE`)."""
        candidate = self.candidates[f]
        if t == WHOLE:
            return candidate.text
        tile = candidate.tiles[t]
        return "".join(candidate.lines[tile.start - 1 : tile.end])

    def tokens(self, f: int, t: int) -> int:
        """Tokens of tile ``t`` of candidate ``f``, for choosing (counted once per call).

        The whole file's count is exact; a tile's is estimated from its share of the file's
        characters (the units sent are counted exactly, once each).
        """
        found = self._tokens.get((f, t))
        if found is None:
            whole = self._tokens.get((f, WHOLE))
            if whole is None:
                whole = self._tokens[f, WHOLE] = self._file_tokens(self.candidates[f])
            if t == WHOLE:
                return whole
            chars = max(1, len(self.candidates[f].text))
            found = self._tokens[f, t] = max(1, round(whole * len(self.tile_text(f, t)) / chars))
        return found

    def _file_tokens(self, candidate: Candidate) -> int:
        node = candidate.node
        if node.token_encoding == self.request.encoding and node.token_count:
            return node.token_count  # counted by the indexer, from the same text
        return count_tokens(candidate.text, self.request.encoding)

    def run_unit(self, f: int, first: int, last: int) -> BundleUnit:
        """The delivered unit of tiles ``first..last`` of candidate ``f``."""
        candidate = self.candidates[f]
        tiles, lines = candidate.tiles, candidate.lines
        start, end = tiles[first].start, gap_end(tiles, last, len(lines))
        text = "".join(lines[start - 1 : end])
        count = self.count(text)
        scored = self.scored[f]
        best = max(range(first, last + 1), key=lambda t: scored.values[t])
        reason = scored.reasons[best]
        if reason == "context" and tiles[best].kind == "sig":
            reason = "enclosing"
        symbol = _short(candidate.path, tiles[best].symbol)
        mark = run_receipt(self.request.repo_id, candidate.path, tiles, lines, first, last)
        return BundleUnit(mark, "slice", start, end, count, symbol, reason, text)

    # -- outlines and paths --------------------------------------------------------------

    def listed(self, detail: str) -> list[BundleEntry]:
        """Entries of the first ``top`` ranked files at ``outline`` or ``paths`` detail."""
        out: list[BundleEntry] = []
        for hit in [h for h in self.result.hits if h.path and h.node][: self.request.top]:
            assert hit.path is not None and hit.node is not None
            if hit.text is not None and self.known.get(hit.path) == short_hash(hit.text):
                continue
            units: tuple[BundleUnit, ...] = ()
            outline = _outline_text(hit.node.symbols)
            if detail == "outline" and outline:
                digest = short_hash(outline)
                mark = receipt(self.request.repo_id, hit.path, digest, "outline", "outline")
                if mark in self.seen:
                    continue
                lines = max(hit.node.lines, 1)
                tokens = self.count(outline)
                units = (BundleUnit(mark, "outline", 1, lines, tokens, None, "outline", outline),)
            out.append(
                BundleEntry.of_units(hit.path, hit.score, hit.reasons, hit.node.token_count, units)
            )
        return out

    def listed_reused(self, detail: str) -> tuple[ReusedItem, ...]:
        """What the caller holds of the listed files (known whole files, seen outlines)."""
        out: list[ReusedItem] = []
        for hit in [h for h in self.result.hits if h.path and h.node][: self.request.top]:
            assert hit.path is not None and hit.node is not None
            if hit.text is not None and self.known.get(hit.path) == short_hash(hit.text):
                out.append(ReusedItem(hit.path, "file", content_hash=short_hash(hit.text)))
                continue
            outline = _outline_text(hit.node.symbols)
            if detail == "outline" and outline:
                digest = short_hash(outline)
                mark = receipt(self.request.repo_id, hit.path, digest, "outline", "outline")
                if mark in self.seen:
                    out.append(ReusedItem(hit.path, "outline", receipt=mark))
        return tuple(out)


def _file_reasons(reasons: tuple[str, ...]) -> tuple[str, ...]:
    """A file's search reasons without the per-symbol ones (its units' headers name those)."""
    out = [r for r in reasons if not r.startswith(("symbol:", "chunk:"))]
    if any(r.startswith("symbol:") for r in reasons):
        out.insert(1 if out[:1] == ["path-name-match"] else 0, "symbol-match")
    return tuple(out)


def _with(candidate: Candidate, **changes: object) -> Candidate:
    import dataclasses

    return dataclasses.replace(candidate, **changes)  # type: ignore[arg-type]


def _spans(candidate: Candidate) -> list[tuple[int, int]]:
    """Each tile's character range in the file's text."""
    offsets = [0]
    for line in candidate.lines:
        offsets.append(offsets[-1] + len(line))
    return [(offsets[t.start - 1], offsets[t.end]) for t in candidate.tiles]


def _chars(candidate: Candidate, tile: Tile) -> int:
    return sum(len(line) for line in candidate.lines[tile.start - 1 : tile.end])


def _names(symbols: tuple[Symbol, ...]) -> frozenset[str]:
    names: set[str] = set()
    for symbol in symbols:
        names.add(symbol.name)
        names.update(_names(symbol.children))
    return frozenset(n for n in names if len(n) > 2)


def _short(path: str, symbol: str | None) -> str | None:
    """``symbol`` without the module part its path already says (``Flask.run``)."""
    if symbol is None:
        return None
    parts = symbol.split(".")
    module = path.rsplit(".", 1)[0].split("/")
    i = 0
    while i < len(parts) - 1 and i < len(module) and parts[i] == module[i]:
        i += 1
    return ".".join(parts[i:])


def _outline_text(symbols: tuple[Symbol, ...], depth: int = 0) -> str:
    out: list[str] = []
    for symbol in symbols:
        out.append(f"{'  ' * depth}L{symbol.start_line}-{symbol.end_line} {symbol.signature}\n")
        out.append(_outline_text(symbol.children, depth + 1))
    return "".join(out)
