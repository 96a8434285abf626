"""Context bundles: the ranked files for a task, packed under an exact token budget.

``responseTokens`` is the cost of what the MCP client receives: the structured result plus its
text rendering (the same JSON, compact, as the MCP specification recommends for clients that
only read text), counted with the shared BPE counter. Packing is greedy in rank order; an
entry that does not fit is left out (``truncated``) and smaller ones after it may still fit.
The final response is counted exactly, with ``responseTokens`` itself inside it (a fixpoint),
and entries are dropped from the end until it fits: ``responseTokens <= budgetTokens``
always, and ``budgetTokens`` is the budget asked for. A budget is a hard ceiling: below the
cost of the smallest possible response the call is refused with
:class:`~repocontext.errors.BudgetTooSmallError`, whose ``smallest`` (and hint) names the
smallest budget that is answered; nothing larger than asked is ever sent.

The context path does each thing once: the search hits carry the file node and text they
were ranked from, so rendering reads nothing from the store; each detail level is rendered
(and its units counted) at most once per call, however often ``auto`` probes a retry budget.
The store is written only for a named ``session`` (its receipts and held files).

Reuse (TOOLS.md "Reuse economics"): every unit carries a receipt bound to its text; ``seen``
receipts and the receipts a ``session`` already received are not sent again, and a ``known``
``path@hash`` suppresses a whole file only when the session recorded full-body possession of
exactly that version. Suppressed items are listed in ``reused`` and cost nothing against the
budget (their listing does).

The values are typed (:mod:`repocontext.pack.model`: :class:`Bundle`, :class:`BundleEntry`,
:class:`BundleUnit`, :class:`ReusedItem`); :mod:`repocontext.wire.retrieval` renders them as
the camelCase wire form. Counting needs that form here too: :func:`bundle_form` is the one
codec of it in the domain, and the wire module's output is tested to be the same JSON.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from repocontext.errors import BudgetTooSmallError
from repocontext.index.model import FileNode, Symbol
from repocontext.pack.model import (
    Bundle,
    BundleEntry,
    BundleUnit,
    ReusedItem,
    UnitKind,
    bundle_form,
    entry_form,
    wire_json,
)
from repocontext.pack.request import ContextRequest, Detail
from repocontext.pack.sessions import (
    SESSION_TTL_S,
    Session,
    check_session,
    known_held,
    load_session,
    record_session,
)
from repocontext.search.hits import SearchHit, SearchResult
from repocontext.search.service import SearchService
from repocontext.store import Clock, Store
from repocontext.tokens import count_tokens

__all__ = [
    "SESSION_TTL_S",
    "Bundle",
    "BundleEntry",
    "BundleUnit",
    "ContextRequest",
    "Detail",
    "ReusedItem",
    "build_bundle",
    "bundle_form",
    "pack_result",
    "receipt",
    "wire_json",
]

Counter = Callable[[str], int]
SMALL_FILE_TOKENS: Final = 800
"""At ``slices`` detail a file up to this many tokens is sent whole."""
SLICE_CONTEXT_LINES: Final = 2
MAX_SLICE_LINES: Final = 80
MAX_SLICES: Final = 3
AUTO_SLICES_PER_ENTRY: Final = 600
AUTO_OUTLINE_PER_ENTRY: Final = 120
_NUMBERS_ROOM: Final = 16
"""Tokens kept free for the numbers filled in at the end (counts, budgets)."""


@dataclass(frozen=True, slots=True)
class _Rendered:
    """One ranked file rendered: its entry (``None`` when all of it is reused) and bookkeeping."""

    entry: BundleEntry | None
    reused: tuple[ReusedItem, ...]
    full_tokens: int = 0
    receipts: tuple[str, ...] = ()
    held: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Unit:
    kind: UnitKind
    key: str
    text: str
    start: int
    end: int
    symbol: str | None = None


class _Overflow(Exception):
    """The smallest response at a budget costs more than it (``smallest``: a budget that fits)."""

    def __init__(self, smallest: int) -> None:
        super().__init__(smallest)
        self.smallest = smallest


def receipt(repo_id: str, path: str, content_hash: str, kind: str, unit_key: str) -> str:
    """The receipt of one delivered unit (bound to the hash of its text)."""
    raw = "\0".join((repo_id, path, content_hash, kind, unit_key)).encode()
    return hashlib.sha256(raw).hexdigest()


def build_bundle(
    store: Store, search: SearchService, clock: Clock, request: ContextRequest
) -> Bundle:
    """Rank, render, suppress and pack; record the session's new holdings.

    Raises:
        NotFoundError: The repository is not registered.
        InvalidInputError: The task is empty, or the session id is not usable.
        BudgetTooSmallError: Even the smallest response costs more than ``request.budget``
            (its ``smallest`` is the smallest budget that is answered).
    """
    if request.session is not None:
        check_session(request.repo_id, request.session)
    result = search.search(request.repo_id, request.task, request.top, retrieval=request.mode)
    return pack_result(store, clock, request, result)


def pack_result(
    store: Store, clock: Clock, request: ContextRequest, result: SearchResult
) -> Bundle:
    """Pack a search result for ``request``: rendered from what its hits carry.

    Nothing of the repository is read again (the hits hold their file node and text); the
    store is read for the session's holdings and written only for a named ``session``.

    Raises:
        InvalidInputError: The session id is not usable.
        BudgetTooSmallError: Even the smallest response costs more than ``request.budget``.
    """
    session = Session()
    if request.session is not None:
        check_session(request.repo_id, request.session)
        session = load_session(store, request.repo_id, request.session)
    packer = _Packer(request, result, request.seen | session.receipts, session.held)
    try:
        bundle = packer.answer(request.budget)
    except _Overflow as over:
        raise BudgetTooSmallError(request.budget, packer.smallest(over.smallest)) from None
    if request.session is not None:
        sent = (bundle.delivered_receipts, bundle.held)
        record_session(store, clock, request.repo_id, request.session, request.task, sent)
    return bundle


class _Packer:
    """The packing of one call: each detail level rendered once, packed at any budget."""

    def __init__(
        self,
        request: ContextRequest,
        result: SearchResult,
        seen: frozenset[str],
        held: frozenset[str],
    ) -> None:
        self.request = request
        self.result = result
        self.seen = seen
        self.known = known_held(request.known, held)
        self.count = _counter(request.encoding)
        self.hits = max(1, len(result.hits))
        self._rendered: dict[str, tuple[list[_Rendered], list[ReusedItem]]] = {}

    def answer(self, budget: int) -> Bundle:
        """The bundle at ``budget`` (with ``auto``: the detail, and a retry budget, for it).

        Raises:
            _Overflow: The smallest response at ``budget`` does not fit it.
        """
        detail = _resolve_detail(self.request.detail, budget, self.hits)
        bundle = self.packed(detail, budget)
        retry = bundle.retry_budget_tokens
        if self.request.detail != "auto" or retry is None:
            return bundle
        # The retry budget must fit the first entry at the detail auto picks for *it*.
        for _ in range(3):
            picked = _resolve_detail("auto", retry, self.hits)
            if picked == detail:
                break
            try:
                probe = self.packed(picked, retry)
            except _Overflow:
                break
            if probe.entries or (probe.retry_budget_tokens or 0) <= retry:
                break
            retry = probe.retry_budget_tokens or retry
        if retry == bundle.retry_budget_tokens:
            return bundle
        return _within_budget(
            _finalize(dataclasses.replace(bundle, retry_budget_tokens=retry), self.count),
            self.count,
        )

    def smallest(self, guess: int) -> int:
        """The smallest budget answered, from a first ``guess`` (checked by packing at it)."""
        for _ in range(8):
            try:
                self.answer(guess)
            except _Overflow as again:
                guess = max(guess + 1, again.smallest)
            else:
                break
        return guess

    def packed(self, detail: str, budget: int) -> Bundle:
        """Pack the hits rendered at ``detail`` under ``budget``.

        Raises:
            _Overflow: The smallest response does not fit ``budget``.
        """
        candidates, reused = self._render(detail)
        head = Bundle(
            mode=self.result.mode,
            retrieval_path=self.result.retrieval_path,
            detail=detail,
            budget_tokens=budget,
            reused=tuple(reused),
            session=self.request.session or None,
        )
        return _pack(head, candidates, self.count)

    def _render(self, detail: str) -> tuple[list[_Rendered], list[ReusedItem]]:
        if detail not in self._rendered:
            candidates: list[_Rendered] = []
            reused: list[ReusedItem] = []
            for hit in self.result.hits:
                rendered = _render(
                    self.request.repo_id, hit, detail, self.seen, self.known, self.count
                )
                if rendered is not None:
                    reused += rendered.reused
                    if rendered.entry is not None:
                        candidates.append(rendered)
            self._rendered[detail] = (candidates, reused)
        return self._rendered[detail]


# -- rendering -------------------------------------------------------------------------------


def _resolve_detail(detail: str, budget: int, entries: int) -> str:
    if detail in ("paths", "outline", "slices"):
        return detail
    per_entry = budget / entries
    if per_entry >= AUTO_SLICES_PER_ENTRY:
        return "slices"
    return "outline" if per_entry >= AUTO_OUTLINE_PER_ENTRY else "paths"


def _render(
    repo_id: str,
    hit: SearchHit,
    detail: str,
    seen: Collection[str],
    known: Mapping[str, str],
    count: Counter,
) -> _Rendered | None:
    """Render one hit from the node and text it carries (nothing is read from the store)."""
    if hit.path is None or hit.node is None:
        return None  # a memory entry: bundles carry code
    node, text = hit.node, hit.text
    full_hash = _sha(text) if text is not None else None
    if full_hash is not None and known.get(hit.path) == full_hash:
        return _Rendered(None, (ReusedItem(hit.path, "file", content_hash=full_hash),))
    units = _units(node, text, hit, detail)
    delivered: list[tuple[_Unit, str]] = []
    reused: list[ReusedItem] = []
    for unit in units:
        mark = receipt(repo_id, hit.path, _sha(unit.text), unit.kind, unit.key)
        if mark in seen:
            reused.append(ReusedItem(hit.path, unit.kind, receipt=mark))
        else:
            delivered.append((unit, mark))
    if units and not delivered:
        return _Rendered(None, tuple(reused))
    body = "".join(unit.text for unit, _ in delivered)
    entry = BundleEntry(
        path=hit.path,
        score=hit.score,
        reasons=hit.reasons,
        token_count=count(body) if body else 0,
        full_read_token_count=node.token_count,
        content=body,
        content_hash=_sha(body),
        units=tuple(
            BundleUnit(mark, unit.kind, unit.start, unit.end, count(unit.text), unit.symbol)
            for unit, mark in delivered
        ),
    )
    whole = any(unit.kind == "file" for unit, _ in delivered)
    held = (f"{hit.path}@{full_hash}",) if whole and full_hash else ()
    marks = tuple(mark for _, mark in delivered)
    return _Rendered(entry, tuple(reused), node.token_count, marks, held)


def _units(node: FileNode, text: str | None, hit: SearchHit, detail: str) -> list[_Unit]:
    lines = max(node.lines, 1)
    outline = _outline_text(node.symbols)
    if detail == "paths":
        return []
    if detail == "outline" or text is None:
        return [_Unit("outline", "outline", outline, 1, lines)] if outline else []
    if node.token_count <= SMALL_FILE_TOKENS:
        return [_Unit("file", "file", text, 1, lines)]
    if hit.symbols:
        return _slices(text, hit)
    if outline:
        return [_Unit("outline", "outline", outline, 1, lines)]
    head = "".join(_source_lines(text)[:MAX_SLICE_LINES])
    end = min(lines, MAX_SLICE_LINES)
    return [_Unit("slice", f"1-{end}", f"--- L1-{end}\n" + head, 1, end)]


def _source_lines(text: str) -> list[str]:
    r"""``text``'s lines as the outlines number them: split at ``\n`` only, ends kept.

    ``str.splitlines`` also splits at form feeds, ``\x1c``-``\x1e``, ``\x85`` and the
    Unicode line and paragraph separators, which would shift every slice after one.
    """
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _slices(text: str, hit: SearchHit) -> list[_Unit]:
    source = _source_lines(text)
    ranges: list[tuple[int, int, str]] = []
    for match in hit.symbols[:MAX_SLICES]:
        start = max(1, match.start_line - SLICE_CONTEXT_LINES)
        end = min(len(source), match.end_line + SLICE_CONTEXT_LINES, start + MAX_SLICE_LINES - 1)
        ranges.append((start, end, match.fq_name))
    ranges.sort()
    merged: list[tuple[int, int, str]] = []
    for start, end, symbol in ranges:
        if merged and start <= merged[-1][1] + 1:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, symbol))
    return [
        _Unit("slice", f"{a}-{b}", f"--- L{a}-{b}\n" + "".join(source[a - 1 : b]), a, b, symbol)
        for a, b, symbol in merged
    ]


def _outline_text(symbols: Sequence[Symbol], depth: int = 0) -> str:
    out: list[str] = []
    for symbol in symbols:
        out.append(f"{'  ' * depth}L{symbol.start_line}-{symbol.end_line} {symbol.signature}\n")
        out.append(_outline_text(symbol.children, depth + 1))
    return "".join(out)


# -- packing ---------------------------------------------------------------------------------


def _counter(encoding: str) -> Counter:
    def count(text: str) -> int:
        return count_tokens(text, encoding)

    return count


def _cost(bundle: Bundle, count: Counter) -> int:
    # Structured content plus its text rendering: the same compact JSON twice.
    return 2 * count(wire_json(bundle_form(bundle)))


def _finalize(bundle: Bundle, count: Counter) -> Bundle:
    """``bundle`` with ``response_tokens`` the exact cost of it with that number inside it."""
    guess = _cost(bundle, count)
    for _ in range(8):
        trial = dataclasses.replace(bundle, response_tokens=guess)
        actual = _cost(trial, count)
        if actual == guess:
            return trial
        guess = max(guess, actual)
    trial = dataclasses.replace(bundle, response_tokens=guess)  # did not settle: never low
    while _cost(trial, count) > trial.response_tokens:
        trial = dataclasses.replace(trial, response_tokens=trial.response_tokens + 1)
    return trial


def _within_budget(bundle: Bundle, count: Counter) -> Bundle:
    """``bundle`` when it fits its budget; the hard ceiling otherwise.

    Raises:
        _Overflow: It does not fit, with the first budget at which this response would.
    """
    if bundle.response_tokens <= bundle.budget_tokens:
        return bundle
    larger = bundle
    while larger.response_tokens > larger.budget_tokens:
        larger = _finalize(dataclasses.replace(larger, budget_tokens=larger.response_tokens), count)
    raise _Overflow(larger.budget_tokens)


def _fit_reused(head: Bundle, count: Counter) -> Bundle:
    """``head`` with its ``reused`` listing cut to what its budget holds (``reused_omitted``).

    Suppressed items cost nothing but their listing; a long listing (every unit of a big
    session) must not take the room of the entries, nor exceed the budget.
    """
    reused, budget = head.reused, head.budget_tokens
    if not reused or _cost(head, count) + _NUMBERS_ROOM <= budget:
        return head
    low, high = 0, len(reused)  # the most items that fit: binary search on the count
    while low < high:
        mid = (low + high + 1) // 2
        trial = dataclasses.replace(head, reused=reused[:mid], reused_omitted=len(reused) - mid)
        if _cost(trial, count) + _NUMBERS_ROOM <= budget:
            low = mid
        else:
            high = mid - 1
    return dataclasses.replace(head, reused=reused[:low], reused_omitted=len(reused) - low)


def _pack(head: Bundle, rendered: list[_Rendered], count: Counter) -> Bundle:
    """Pack ``rendered`` in rank order under ``head.budget_tokens``.

    Raises:
        _Overflow: Not even the response without entries fits the budget.
    """
    budget = head.budget_tokens
    head = _fit_reused(head, count)
    base = _cost(head, count) + _NUMBERS_ROOM
    candidates = [r.entry for r in rendered if r.entry is not None]
    costs = [2 * (count(wire_json(entry_form(entry))) + 2) for entry in candidates]
    chosen: list[int] = []
    spent = base
    for i, cost in enumerate(costs):
        if spent + cost <= budget:
            chosen.append(i)
            spent += cost
    while True:
        bundle = dataclasses.replace(
            head,
            entries=tuple(candidates[i] for i in chosen),
            total_tokens=sum(candidates[i].token_count for i in chosen),
            truncated=len(chosen) < len(candidates) or head.reused_omitted is not None,
        )
        if not chosen and candidates:
            first = dataclasses.replace(head, entries=(candidates[0],), truncated=False)
            # Enough for the packer to take the first entry: its estimate, never below exact.
            retry = max(_finalize(first, count).response_tokens, base + costs[0])
            bundle = dataclasses.replace(bundle, retry_budget_tokens=retry)
        bundle = _finalize(bundle, count)
        if bundle.response_tokens <= budget or not chosen:
            break
        chosen.pop()  # the estimate was a few tokens short: drop the last entry
    bundle = _within_budget(_shed_reused(bundle, count), count)
    return dataclasses.replace(
        bundle,
        reads_replaced=sum(
            rendered[i].full_tokens for i in chosen if candidates[i].content
        ),  # a path (or an empty outline) replaces no read
        delivered_receipts=tuple(m for i in chosen for m in rendered[i].receipts),
        held=tuple(h for i in chosen for h in rendered[i].held),
    )


def _shed_reused(bundle: Bundle, count: Counter) -> Bundle:
    """Drop ``reused`` items from the end while the response is over budget."""
    while bundle.response_tokens > bundle.budget_tokens and bundle.reused:
        omitted = (bundle.reused_omitted or 0) + 1
        bundle = _finalize(
            dataclasses.replace(
                bundle, reused=bundle.reused[:-1], reused_omitted=omitted, truncated=True
            ),
            count,
        )
    return bundle


# -- reads -----------------------------------------------------------------------------------


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
