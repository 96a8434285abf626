"""Context bundles: the code a task needs, packed under an exact token budget.

A bundle is sent as readable code plus compact metadata (:mod:`repocontext.pack.model`):
``responseTokens`` is the exact count of both as the MCP client receives them (the text block
and the compact JSON of the structured content, with ``responseTokens`` itself inside it: a
fixpoint), and never exceeds ``budgetTokens``. Below the cost of the smallest possible
response the call is refused with :class:`~repocontext.errors.BudgetTooSmallError`, whose
``smallest`` (and hint) names the smallest budget that is answered.

How the code is chosen (``slices``, and ``auto``), see docs/retrieval.md "How a bundle is
built": the search ranks files (``top`` of them at least, more when the budget holds more
code: :func:`files_to_rank`); every ranked file is cut into tiles by its outline
(:mod:`.units`); tiles are scored for the task (:mod:`.scoring`); whole files and tiles are
taken best value per token first under the budget (:mod:`.selection`), and consecutive
chosen tiles of a file are sent as one unit. The estimate is then counted exactly and the
choice adjusted until it fits (dropping the last picks) and fills the budget (a larger room
when the estimate was pessimistic). ``outline`` and ``paths`` send a file's outline or its
path only; ``auto`` answers with code whenever some fits, else outlines, else paths.

Reuse (TOOLS.md "Reuse economics"): every unit carries a receipt bound to its text; ``seen``
receipts and the receipts a ``session`` already received are not sent again (the runs of
tiles they name are recognised whatever the budget), and a ``known`` ``path@hash``
suppresses a whole file only when the session recorded full-body possession of exactly that
version. Suppressed items are listed in ``reused`` and cost nothing against the budget
(their listing does). The store is written only for a named ``session``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Final

from repocontext.errors import BudgetTooSmallError
from repocontext.pack.candidates import Pool, files_to_rank
from repocontext.pack.model import (
    Bundle,
    BundleEntry,
    BundleUnit,
    ReusedItem,
    bundle_form,
    entry_form,
    unit_header,
    wire_json,
)
from repocontext.pack.request import ContextRequest, Detail
from repocontext.pack.selection import WHOLE, Pick, choose, runs_of
from repocontext.pack.sessions import (
    SESSION_TTL_S,
    Session,
    check_session,
    known_held,
    load_session,
    record_session,
)
from repocontext.pack.units import receipt, short_hash
from repocontext.search.hits import SearchResult
from repocontext.search.service import SearchService
from repocontext.store import Clock, Store

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
    "files_to_rank",
    "pack_result",
    "receipt",
    "wire_json",
]

Counter = Callable[[str], int]
_NUMBERS_ROOM: Final = 16
"""Tokens kept free for the numbers filled in at the end (counts, budgets)."""
FILL_TARGET: Final = 0.97
"""The packer stops adjusting its room once the response uses this share of the budget."""
_ROUNDS: Final = 4


class _Overflow(Exception):
    """The smallest response at a budget costs more than it (``smallest``: a budget that fits)."""

    def __init__(self, smallest: int) -> None:
        super().__init__(smallest)
        self.smallest = smallest


def build_bundle(
    store: Store, search: SearchService, clock: Clock, request: ContextRequest
) -> Bundle:
    """Rank, choose, suppress and pack; record the session's new holdings.

    Raises:
        NotFoundError: The repository is not registered.
        InvalidInputError: The task is empty, or the session id is not usable.
        BudgetTooSmallError: Even the smallest response costs more than ``request.budget``
            (its ``smallest`` is the smallest budget that is answered).
    """
    if request.session is not None:
        check_session(request.repo_id, request.session)
    result = search.search(
        request.repo_id, request.task, files_to_rank(request), retrieval=request.mode
    )
    return pack_result(store, clock, request, result)


def pack_result(
    store: Store, clock: Clock, request: ContextRequest, result: SearchResult
) -> Bundle:
    """Pack a search result for ``request``: rendered from what its hits carry.

    The store is read for the session's holdings and the links of the best files (their
    callers, callees and tests), and written only for a named ``session``.

    Raises:
        InvalidInputError: The session id is not usable.
        BudgetTooSmallError: Even the smallest response costs more than ``request.budget``.
    """
    session = Session()
    if request.session is not None:
        check_session(request.repo_id, request.session)
        session = load_session(store, request.repo_id, request.session)
    seen = request.seen | session.receipts
    pool = Pool(store, request, result, seen, known_held(request.known, session.held))
    packer = _Packer(request, result, pool)
    try:
        bundle = packer.answer(request.budget)
    except _Overflow as over:
        raise BudgetTooSmallError(request.budget, packer.smallest(over.smallest)) from None
    if request.session is not None:
        sent = (bundle.delivered_receipts, bundle.held)
        record_session(store, clock, request.repo_id, request.session, request.task, sent)
    return bundle


class _Packer:
    """The packing of one call: candidates scored once, packed at any budget."""

    def __init__(self, request: ContextRequest, result: SearchResult, pool: Pool) -> None:
        self.request = request
        self.result = result
        self.pool = pool
        self.count = pool.count

    def answer(self, budget: int) -> Bundle:
        """The bundle at ``budget`` (``auto``: code when some fits, else outlines, else paths).

        Raises:
            _Overflow: The smallest response at ``budget`` does not fit it.
        """
        detail = self.request.detail
        if detail in ("paths", "outline"):
            return self.listed(detail, budget)
        if detail == "slices":
            return self.code(budget)
        answers: list[Bundle] = []
        smallest: list[int] = []
        for level in ("slices", "outline", "paths"):
            try:
                bundle = self.code(budget) if level == "slices" else self.listed(level, budget)
            except _Overflow as over:
                smallest.append(over.smallest)
                continue
            if bundle.entries:
                return bundle
            answers.append(bundle)
        if not answers:
            raise _Overflow(min(smallest))
        return answers[0]  # nothing fits: the answer saying what budget would hold code

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

    def _head(self, detail: str, budget: int) -> Bundle:
        reused = self.pool.reused if detail == "slices" else self.pool.listed_reused(detail)
        head = Bundle(
            mode=self.result.mode,
            retrieval_path=self.result.retrieval_path,
            detail=detail,
            budget_tokens=budget,
            reused=reused,
            session=self.request.session or None,
            json_code=self.request.json_code,
            warnings=self.result.warnings,
        )
        return _fit_reused(head, self.count)

    # -- code ----------------------------------------------------------------------------

    def code(self, budget: int) -> Bundle:
        """The code bundle at ``budget``: whole files and tiles, chosen to fill it.

        Raises:
            _Overflow: Not even the response without code fits ``budget``.
        """
        head = self._head("slices", budget)
        base = _finalize(head, self.count).response_tokens + _NUMBERS_ROOM
        best: Bundle | None = None
        room = budget - base
        picks: list[Pick] = []
        for _ in range(_ROUNDS if room > 0 else 0):
            picks = choose(self.pool.candidates, self.pool.scored, self.pool.tokens, room)
            bundle = self._fitted(head, picks)
            if best is None or bundle.response_tokens > best.response_tokens:
                best = bundle
            used = bundle.response_tokens
            if used >= FILL_TARGET * budget or len(bundle.entries) == len(picks) == 0:
                break
            room += budget - used  # the estimate was pessimistic: offer the slack
        if best is None or not best.entries:
            return _within_budget(self._nothing_fits(head), self.count)
        return _within_budget(_shed_reused(best, self.count), self.count)

    def _fitted(self, head: Bundle, picks: list[Pick]) -> Bundle:
        """The bundle of ``picks``, its last picks dropped until the exact count fits."""
        budget = head.budget_tokens
        while True:
            bundle = _finalize(self._assembled(head, picks), self.count)
            over = bundle.response_tokens - budget
            if over <= 0 or not picks:
                return bundle
            dropped = 0
            while picks and dropped < over:  # drop about what is over, then count again
                f, t = picks.pop()
                dropped += self.pool.tokens(f, t)

    def _assembled(self, head: Bundle, picks: list[Pick]) -> Bundle:
        by_file: dict[int, list[int]] = {}
        for f, t in picks:
            by_file.setdefault(f, []).append(t)
        entries = [self._entry(f, by_file[f]) for f in sorted(by_file)]
        candidates = self.pool.candidates
        return dataclasses.replace(
            head,
            entries=tuple(entries),
            total_tokens=sum(entry.token_count for entry in entries),
            truncated=len(entries) < len(candidates) or head.reused_omitted is not None,
            reads_replaced=sum(candidates[f].node.token_count for f in by_file),
            delivered_receipts=tuple(u.receipt for e in entries for u in e.units),
            held=tuple(f"{e.path}@{e.content_hash}" for e in entries if e.units[0].kind == "file"),
        )

    def _entry(self, f: int, tiles: list[int]) -> BundleEntry:
        candidate = self.pool.candidates[f]
        if WHOLE in tiles:
            digest = short_hash(candidate.text)
            unit = BundleUnit(
                receipt(self.request.repo_id, candidate.path, digest, "file", "file"),
                "file",
                1,
                max(len(candidate.lines), 1),
                self.pool.tokens(f, WHOLE),
                None,
                "whole-file",
                candidate.text,
            )
            units: tuple[BundleUnit, ...] = (unit,)
        else:
            units = tuple(self.pool.run_unit(f, first, last) for first, last in runs_of(tiles))
        return BundleEntry.of_units(
            candidate.path, candidate.score, candidate.reasons, candidate.node.token_count, units
        )

    def _alone(self, head: Bundle) -> Bundle | None:
        """The bundle of the best first pick alone, at a budget that holds it (or none)."""
        pool = self.pool
        picks = choose(pool.candidates, pool.scored, pool.tokens, 10**9, offers=1)
        if not picks:
            return None
        alone = _finalize(self._assembled(head, picks), self.count)
        for _ in range(4):  # its budget is inside it: settle the number
            if alone.response_tokens <= alone.budget_tokens:
                break
            resized = _fit_reused(
                dataclasses.replace(head, budget_tokens=alone.response_tokens), self.count
            )
            alone = _finalize(self._assembled(resized, picks), self.count)
        return alone

    def _nothing_fits(self, head: Bundle) -> Bundle:
        """The answer without code: what budget would hold the best first pick, if any."""
        alone = self._alone(head)
        if alone is not None and alone.budget_tokens == head.budget_tokens:
            return alone
        retry = alone.budget_tokens if alone is not None else None
        empty = dataclasses.replace(
            head,
            truncated=retry is not None or bool(head.reused_omitted),
            retry_budget_tokens=retry,
        )
        return _finalize(empty, self.count)

    # -- outlines and paths ---------------------------------------------------------------

    def listed(self, detail: str, budget: int) -> Bundle:
        """Outlines (or paths) of the ranked files in rank order, greedily under ``budget``.

        Raises:
            _Overflow: Not even the response without entries fits ``budget``.
        """
        head = self._head(detail, budget)
        base = _finalize(head, self.count).response_tokens + _NUMBERS_ROOM
        candidates = self.pool.listed(detail)
        costs = [
            self.count(wire_json(entry_form(e, head.json_code)))
            + self.count("".join(unit_header(e.path, u) + u.text for u in e.units) or e.path)
            + 8
            for e in candidates
        ]
        chosen: list[int] = []
        spent = base
        for i, cost in enumerate(costs):
            if spent + cost <= budget:
                chosen.append(i)
                spent += cost
        while True:
            entries = tuple(candidates[i] for i in chosen)
            bundle = dataclasses.replace(
                head,
                entries=entries,
                total_tokens=sum(e.token_count for e in entries),
                truncated=len(chosen) < len(candidates) or head.reused_omitted is not None,
                reads_replaced=sum(e.full_read_token_count for e in entries if e.content),
                delivered_receipts=tuple(u.receipt for e in entries for u in e.units),
            )
            if not chosen and candidates:
                bundle = dataclasses.replace(bundle, retry_budget_tokens=base + costs[0] + 8)
            bundle = _finalize(bundle, self.count)
            if bundle.response_tokens <= budget or not chosen:
                break
            chosen.pop()
        return _within_budget(_shed_reused(bundle, self.count), self.count)


# -- exact cost ------------------------------------------------------------------------------


def _cost(bundle: Bundle, count: Counter) -> int:
    # What the client receives: the text block and the compact JSON of the structured part.
    return count(bundle.text) + count(wire_json(bundle_form(bundle)))


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
