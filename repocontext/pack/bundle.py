"""Context bundles: the ranked files for a task, packed under an exact token budget.

``responseTokens`` is the cost of what the MCP client receives: the structured result plus its
text rendering (the same JSON, compact, as the MCP specification recommends for clients that
only read text), counted with the shared BPE counter. Packing is greedy in rank order; an
entry that does not fit is left out (``truncated``) and smaller ones after it may still fit.
The final response is counted exactly, with ``responseTokens`` itself inside it (a fixpoint),
and entries are dropped from the end until it fits: ``responseTokens <= budgetTokens``
always. ``budgetTokens`` is the budget applied — the request, raised to the cost of the
smallest possible response when it is below that.

Reuse (TOOLS.md "Reuse economics"): every unit carries a receipt bound to its text; ``seen``
receipts and the receipts a ``session`` already received are not sent again, and a ``known``
``path@hash`` suppresses a whole file only when the session recorded full-body possession of
exactly that version. Suppressed items are listed in ``reused`` and cost nothing against the
budget (their listing does).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from repocontext.errors import InvalidInputError, InvalidKeyError
from repocontext.index.files.nodes import file_text
from repocontext.pack.request import ContextRequest, Detail
from repocontext.search.service import SearchHit, SearchService
from repocontext.store import SESSION, STRUCTURAL, Clock, DocPatch, DocState, Store
from repocontext.store.keys import file_key, session_key
from repocontext.tokens import count_tokens

__all__ = ["Bundle", "ContextRequest", "Detail", "build_bundle", "receipt", "wire_json"]

Counter = Callable[[str], int]
SESSION_TTL_S: Final = 6 * 3600
SMALL_FILE_TOKENS: Final = 800
"""At ``slices`` detail a file up to this many tokens is sent whole."""
SLICE_CONTEXT_LINES: Final = 2
MAX_SLICE_LINES: Final = 80
MAX_SLICES: Final = 3
AUTO_SLICES_PER_ENTRY: Final = 600
AUTO_OUTLINE_PER_ENTRY: Final = 120


@dataclass
class Bundle:
    """The response, as the wire dict, plus what stats need."""

    wire: dict[str, Any]
    reads_replaced: int = 0
    delivered_receipts: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Rendered:
    """One ranked file rendered: its entry (``None`` when all of it is reused) and bookkeeping."""

    entry: dict[str, Any] | None
    reused: list[dict[str, Any]]
    full_tokens: int = 0
    receipts: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Unit:
    kind: str
    key: str
    text: str
    start: int
    end: int
    symbol: str | None = None


def wire_json(value: Any) -> str:
    """The compact JSON a bundle is counted as (and rendered to text as)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


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
        InvalidInputError: The task is empty.
    """
    result = search.search(request.repo_id, request.task, k=request.top, scope="code")
    if request.session is not None:
        _check_session(request.repo_id, request.session)
    count = _counter(request.encoding)
    hits = max(1, len(result.hits))
    detail = _resolve_detail(request.detail, request.budget, hits)
    session = _load_session(store, request) if request.session else _Session()
    seen = request.seen | session.receipts
    known = _known_held(request.known, session.held)

    def packed(detail: str, budget: int) -> Bundle:
        candidates: list[_Rendered] = []
        reused: list[dict[str, Any]] = []
        for hit in result.hits:
            rendered = _render(store, request.repo_id, hit, detail, seen, known, count)
            if rendered is not None:
                reused += rendered.reused
                if rendered.entry is not None:
                    candidates.append(rendered)
        head = {
            "mode": result.mode,
            "retrievalPath": result.retrieval_path,
            "detail": detail,
            "budgetTokens": budget,
            "totalTokens": 0,
            "responseTokens": 0,
            "truncated": False,
            "entries": [],
            "reused": reused,
        }
        if request.session:
            head["session"] = request.session
        return _pack(head, candidates, budget, count)

    bundle = packed(detail, request.budget)
    retry = bundle.wire.get("retryBudgetTokens")
    if request.detail == "auto" and isinstance(retry, int):
        # The retry budget must fit the first entry at the detail auto picks for *it*.
        for _ in range(3):
            picked = _resolve_detail("auto", retry, hits)
            if picked == detail:
                break
            probe = packed(picked, retry).wire
            if probe["entries"] or int(probe.get("retryBudgetTokens") or 0) <= retry:
                break
            retry = int(probe["retryBudgetTokens"])
        bundle.wire["retryBudgetTokens"] = retry
        _settle(bundle.wire, count)
    if request.session:
        _record_session(store, clock, request, bundle)
    return bundle


# -- rendering -------------------------------------------------------------------------------


def _resolve_detail(detail: str, budget: int, entries: int) -> str:
    if detail in ("paths", "outline", "slices"):
        return detail
    per_entry = budget / entries
    if per_entry >= AUTO_SLICES_PER_ENTRY:
        return "slices"
    return "outline" if per_entry >= AUTO_OUTLINE_PER_ENTRY else "paths"


def _render(
    store: Store,
    repo_id: str,
    hit: SearchHit,
    detail: str,
    seen: Collection[str],
    known: Mapping[str, str],
    count: Counter,
) -> _Rendered | None:
    if hit.path is None:
        return None  # a memory entry: bundles carry code
    node = _value(store, STRUCTURAL, file_key(repo_id, hit.path))
    if node is None:
        return None
    text = file_text(store, repo_id, hit.path)
    full_hash = _sha(text) if text is not None else None
    full_tokens = int(node.get("tokenCount") or 0)
    if full_hash is not None and known.get(hit.path) == full_hash:
        return _Rendered(None, [{"path": hit.path, "kind": "file", "contentHash": full_hash}])
    units = _units(node, text, hit, detail)
    delivered: list[tuple[_Unit, str]] = []
    reused: list[dict[str, Any]] = []
    for unit in units:
        mark = receipt(repo_id, hit.path, _sha(unit.text), unit.kind, unit.key)
        if mark in seen:
            reused.append({"path": hit.path, "kind": unit.kind, "receipt": mark})
        else:
            delivered.append((unit, mark))
    if units and not delivered:
        return _Rendered(None, reused)
    body = "".join(unit.text for unit, _ in delivered)
    entry = {
        "path": hit.path,
        "score": hit.score,
        "reasons": hit.reasons,
        "tokenCount": count(body) if body else 0,
        "fullReadTokenCount": full_tokens,
        "content": body,
        "contentHash": _sha(body),
        "units": [_unit_wire(unit, mark, count) for unit, mark in delivered],
    }
    whole = any(unit.kind == "file" for unit, _ in delivered)
    held = [f"{hit.path}@{full_hash}"] if whole and full_hash else []
    return _Rendered(entry, reused, full_tokens, [mark for _, mark in delivered], held)


def _unit_wire(unit: _Unit, mark: str, count: Counter) -> dict[str, Any]:
    wire: dict[str, Any] = {"receipt": mark, "kind": unit.kind}
    if unit.symbol:
        wire["symbol"] = unit.symbol
    wire.update(
        startLine=unit.start,
        endLine=unit.end,
        tokenCount=count(unit.text),
    )
    return wire


def _units(node: Mapping[str, Any], text: str | None, hit: SearchHit, detail: str) -> list[_Unit]:
    lines = max(int(node.get("lines") or 0), 1)
    outline = _outline_text(node.get("symbols") or [])
    if detail == "paths":
        return []
    if detail == "outline" or text is None:
        return [_Unit("outline", "outline", outline, 1, lines)] if outline else []
    if int(node.get("tokenCount") or 0) <= SMALL_FILE_TOKENS:
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


def _outline_text(symbols: Sequence[Any], depth: int = 0) -> str:
    out: list[str] = []
    for symbol in symbols:
        if not isinstance(symbol, Mapping):
            continue
        lines = f"L{symbol.get('startLine')}-{symbol.get('endLine')}"
        out.append(f"{'  ' * depth}{lines} {symbol.get('signature')}\n")
        out.append(_outline_text(symbol.get("children") or [], depth + 1))
    return "".join(out)


# -- packing ---------------------------------------------------------------------------------


def _counter(encoding: str) -> Counter:
    def count(text: str) -> int:
        return count_tokens(text, encoding)

    return count


def _cost(wire: Mapping[str, Any], count: Counter) -> int:
    # Structured content plus its text rendering: the same compact JSON twice.
    return 2 * count(wire_json(wire))


def _finalize(wire: dict[str, Any], count: Counter) -> int:
    """Set ``responseTokens`` to the exact cost of ``wire`` with that number inside it."""
    guess = _cost(wire, count)
    for _ in range(8):
        wire["responseTokens"] = guess
        actual = _cost(wire, count)
        if actual == guess:
            return actual
        guess = max(guess, actual)
    wire["responseTokens"] = guess  # did not settle: keep the larger count (never low)
    while _cost(wire, count) > wire["responseTokens"]:
        wire["responseTokens"] += 1
    return int(wire["responseTokens"])


def _settle(wire: dict[str, Any], count: Counter) -> None:
    """Count ``wire`` exactly; below the smallest possible response, raise the budget to it."""
    _finalize(wire, count)
    while wire["responseTokens"] > wire["budgetTokens"]:
        wire["budgetTokens"] = wire["responseTokens"]
        _finalize(wire, count)


def _fit_reused(head: dict[str, Any], budget: int, count: Counter) -> dict[str, Any]:
    """``head`` with its ``reused`` listing cut to what ``budget`` holds (``reusedOmitted``).

    Suppressed items cost nothing but their listing; a long listing (every unit of a big
    session) must not raise the budget far above the one asked for.
    """
    reused = head["reused"]
    if not reused or _cost(head, count) + 16 <= budget:
        return head
    low, high = 0, len(reused)  # the most items that fit: binary search on the count
    while low < high:
        mid = (low + high + 1) // 2
        trial = dict(head, reused=reused[:mid], reusedOmitted=len(reused) - mid)
        if _cost(trial, count) + 16 <= budget:
            low = mid
        else:
            high = mid - 1
    return dict(head, reused=reused[:low], reusedOmitted=len(reused) - low)


def _pack(head: dict[str, Any], rendered: list[_Rendered], budget: int, count: Counter) -> Bundle:
    applied = budget
    head = _fit_reused(head, budget, count)
    base = _cost(head, count) + 16  # room for the numbers filled in at the end
    chosen: list[int] = []
    spent = base
    candidates = [r.entry for r in rendered if r.entry is not None]
    costs = [2 * (count(wire_json(entry)) + 2) for entry in candidates]
    for i, cost in enumerate(costs):
        if spent + cost <= applied:
            chosen.append(i)
            spent += cost
    while True:
        wire = dict(head)
        wire["entries"] = [candidates[i] for i in chosen]
        wire["totalTokens"] = sum(candidates[i]["tokenCount"] for i in chosen)
        wire["truncated"] = len(chosen) < len(candidates) or "reusedOmitted" in head
        if not chosen and candidates:
            first = dict(head, entries=[candidates[0]], truncated=False)
            # Enough for the packer to take the first entry: its estimate, never below exact.
            wire["retryBudgetTokens"] = max(_finalize(first, count), base + costs[0])
        if _finalize(wire, count) <= applied or not chosen:
            break
        chosen.pop()  # the estimate was a few tokens short: drop the last entry
    _settle(wire, count)
    bundle = Bundle(wire)
    for i in chosen:
        if candidates[i]["content"]:  # a path (or an empty outline) replaces no read
            bundle.reads_replaced += rendered[i].full_tokens
        bundle.delivered_receipts += rendered[i].receipts
        bundle.held += rendered[i].held
    return bundle


# -- sessions --------------------------------------------------------------------------------


def _check_session(repo_id: str, session: str) -> None:
    try:
        session_key(repo_id, session)
    except InvalidKeyError as exc:
        raise InvalidInputError(
            f"session id {session[:60]!r} is not usable: {exc.message}",
            hint="Use a short printable id (a few words, a UUID).",
        ) from exc


@dataclass(frozen=True, slots=True)
class _Session:
    receipts: frozenset[str] = frozenset()
    held: frozenset[str] = frozenset()


def _load_session(store: Store, request: ContextRequest) -> _Session:
    assert request.session is not None
    record = store.get(SESSION, session_key(request.repo_id, request.session))
    if record is None or record.doc is None:
        return _Session()
    sets = record.doc.sets
    return _Session(sets.get("receipts", frozenset()), sets.get("held", frozenset()))


def _known_held(known: Sequence[str], held: Collection[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for claim in known:
        path, sep, digest = claim.rpartition("@")
        if sep and path and claim in held:
            out[path] = digest
    return out


def _record_session(store: Store, clock: Clock, request: ContextRequest, bundle: Bundle) -> None:
    assert request.session is not None
    expires = int((clock.now() + SESSION_TTL_S) * 1000)
    patch = DocPatch(
        set_fields={"repoId": request.repo_id, "lastTask": request.task[:200]},
        add={"receipts": bundle.delivered_receipts, "held": bundle.held},
        expires_at_ms=expires,
    )

    def decide(live: DocState | None, stored: DocState | None) -> DocPatch:
        if live is not None or stored is None:
            return patch
        # The id of an expired session, used again: a new session, not the old one revived
        # (its receipts would suppress what this caller never received).
        remove = {
            name: sorted(members - set(patch.add.get(name, ())))
            for name, members in stored.sets.items()
        }
        return dataclasses.replace(patch, remove=remove, drop_expiry=True)

    store.update_doc(SESSION, session_key(request.repo_id, request.session), decide)


# -- reads -----------------------------------------------------------------------------------


def _value(store: Store, tree: str, key: str) -> dict[str, Any] | None:
    record = store.get(tree, key)
    return record.value if record is not None and isinstance(record.value, dict) else None


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
