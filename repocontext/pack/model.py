"""The values of a context bundle, and the two forms its cost is counted on.

:class:`Bundle` is what :func:`~repocontext.pack.bundle.build_bundle` returns: typed entries
and units, plus the figures stats and sessions need. A bundle is sent as two parts, and both
are counted: :func:`bundle_text` (:attr:`Bundle.text`), the readable code (one header line per
unit, ``path:start-end  symbol  reason``, then the code verbatim), and :func:`bundle_form`,
the camelCase structured metadata (the wire module renders the same JSON, and a test holds
them equal). The structured form carries the code a second time only for ``json_code``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from repocontext.pack.units import short_hash

__all__ = [
    "Bundle",
    "BundleEntry",
    "BundleUnit",
    "Json",
    "ReusedItem",
    "UnitKind",
    "bundle_form",
    "bundle_text",
    "entry_form",
    "unit_form",
    "unit_header",
    "wire_json",
]

UnitKind = Literal["file", "slice", "outline"]
Json: TypeAlias = str | int | float | bool | list["Json"] | dict[str, "Json"] | None
"""A JSON value (the form a bundle is counted on)."""


@dataclass(frozen=True, slots=True)
class BundleUnit:
    """One delivered part of an entry, with the receipt that suppresses it next time.

    Attributes:
        receipt: Bound to the unit's text (see :func:`receipt`).
        kind: ``file`` (whole file), ``slice`` (lines around a matched symbol) or
            ``outline`` (the symbol outline).
        start_line: 1-based first line it covers.
        end_line: 1-based last line it covers.
        token_count: Exact tokens of its text.
        symbol: The definition the unit is (or its best-scoring definition).
        reason: Why it was chosen, one word or tag: ``whole-file``, ``name-match``,
            ``content-match``, ``semantic``, ``caller``, ``callee``, ``test``, ``enclosing``
            (the header of a chosen method's class), ``context`` (filler around what was
            chosen) or ``outline``.
        text: The code verbatim (what the text block sends under the unit's header).
    """

    receipt: str
    kind: UnitKind
    start_line: int
    end_line: int
    token_count: int
    symbol: str | None = None
    reason: str = "context"
    text: str = field(default="", repr=False)


@dataclass(frozen=True, slots=True)
class BundleEntry:
    """One ranked file in a bundle.

    Attributes:
        path: Repository-relative path.
        score: The search score.
        reasons: Why the search found it.
        token_count: Exact tokens of ``content``.
        full_read_token_count: What reading the whole file would cost.
        content: The delivered units' text, concatenated ("" at ``paths`` detail); sent in
            the structured form only for ``json_code``.
        content_hash: The short hash of ``content`` (16 hex digits of its SHA-256); for a
            whole file, the hash a ``known`` claim names.
        units: The delivered units.
    """

    path: str
    score: float
    reasons: tuple[str, ...]
    token_count: int
    full_read_token_count: int
    content: str
    content_hash: str
    units: tuple[BundleUnit, ...] = ()

    @classmethod
    def of_units(
        cls,
        path: str,
        score: float,
        reasons: tuple[str, ...],
        full_read_token_count: int,
        units: tuple[BundleUnit, ...],
    ) -> BundleEntry:
        """The entry delivering ``units``: its content, hash and count derive from them."""
        body = "".join(unit.text for unit in units)
        return cls(
            path=path,
            score=score,
            reasons=reasons,
            token_count=sum(unit.token_count for unit in units),
            full_read_token_count=full_read_token_count,
            content=body,
            content_hash=short_hash(body),
            units=units,
        )


@dataclass(frozen=True, slots=True)
class ReusedItem:
    """Something not sent again because the caller holds it.

    Attributes:
        path: The file.
        kind: The unit kind (``file`` for a whole file known by its hash).
        receipt: The receipt of a suppressed unit.
        content_hash: The hash of a suppressed whole file.
    """

    path: str
    kind: str
    receipt: str | None = None
    content_hash: str | None = None


@dataclass(frozen=True, slots=True)
class Bundle:
    """What ``repocontext_context`` returns, plus what stats and sessions need.

    Attributes:
        mode: The search mode that ranked the entries.
        retrieval_path: How the search answered.
        detail: The detail applied (``auto`` resolved).
        budget_tokens: The budget asked for.
        total_tokens: Tokens of the entries' content.
        response_tokens: The exact cost of the response (never above ``budget_tokens``).
        truncated: Something ranked was left out (entries or ``reused`` listings).
        entries: The packed entries in rank order.
        reused: What was not sent again.
        session: The caller's session id.
        reused_omitted: ``reused`` items left out of the listing for the budget.
        retry_budget_tokens: When nothing fitted: the budget at which the first entry fits.
        reads_replaced: Tokens of the whole files the delivered content replaces (stats).
        delivered_receipts: Receipts of the units sent (a session records them).
        held: ``path@hash`` of the whole files sent (a session records them).
        json_code: The structured form carries each entry's ``content`` too.
        warnings: What the search behind it warns about (an embedder mismatch), if anything.
    """

    mode: str
    retrieval_path: str
    detail: str
    budget_tokens: int
    total_tokens: int = 0
    response_tokens: int = 0
    truncated: bool = False
    entries: tuple[BundleEntry, ...] = ()
    reused: tuple[ReusedItem, ...] = ()
    session: str | None = None
    reused_omitted: int | None = None
    retry_budget_tokens: int | None = None
    reads_replaced: int = field(default=0, compare=False)
    delivered_receipts: tuple[str, ...] = field(default=(), compare=False)
    held: tuple[str, ...] = field(default=(), compare=False)
    json_code: bool = False
    warnings: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The text block: per unit its header line and code (see :func:`bundle_text`)."""
        return bundle_text(self)


def unit_header(path: str, unit: BundleUnit) -> str:
    """The one-line header of a unit: ``path:start-end  symbol  reason`` (``-``: no symbol)."""
    return f"{path}:{unit.start_line}-{unit.end_line}  {unit.symbol or '-'}  {unit.reason}\n"


def bundle_text(bundle: Bundle) -> str:
    """The readable text block of a bundle: per unit its header, then its code verbatim.

    Each unit's code ends with a newline. An entry without units (``paths`` detail) is one
    line ``path  -  path-only``; a bundle without entries says what budget would hold one.
    """
    parts: list[str] = []
    for entry in bundle.entries:
        if not entry.units:
            parts.append(f"{entry.path}  -  path-only\n")
        for unit in entry.units:
            parts.append(unit_header(entry.path, unit))
            parts.append(unit.text if unit.text.endswith("\n") else unit.text + "\n")
    if not bundle.entries and bundle.retry_budget_tokens is not None:
        parts.append(f"(nothing fits: retry with a budget of {bundle.retry_budget_tokens})\n")
    return "".join(parts)


def wire_json(value: Json) -> str:
    """The compact JSON a bundle is counted as (and rendered to text as)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def bundle_form(bundle: Bundle) -> dict[str, Json]:
    """The camelCase form of a bundle as sent (what its cost is counted on).

    The one codec of that form in the domain; :class:`repocontext.wire.retrieval.ContextResult`
    renders the same JSON (a test holds them equal).
    """
    form: dict[str, Json] = {
        "mode": bundle.mode,
        "retrievalPath": bundle.retrieval_path,
        "detail": bundle.detail,
        "budgetTokens": bundle.budget_tokens,
        "totalTokens": bundle.total_tokens,
        "responseTokens": bundle.response_tokens,
        "truncated": bundle.truncated,
        "entries": [entry_form(entry, bundle.json_code) for entry in bundle.entries],
        "reused": [_reused_form(item) for item in bundle.reused],
    }
    if bundle.session is not None:
        form["session"] = bundle.session
    if bundle.reused_omitted is not None:
        form["reusedOmitted"] = bundle.reused_omitted
    if bundle.retry_budget_tokens is not None:
        form["retryBudgetTokens"] = bundle.retry_budget_tokens
    if bundle.warnings:
        form["warnings"] = list(bundle.warnings)
    return form


def entry_form(entry: BundleEntry, json_code: bool = False) -> dict[str, Json]:
    """The form of one entry: metadata only, its code too with ``json_code``.

    ``contentHash`` is sent for a whole file (what a ``known`` claim names) and with the
    code; the units' symbols and reasons are in the text block's headers.
    """
    form: dict[str, Json] = {
        "path": entry.path,
        "score": entry.score,
        "reasons": list(entry.reasons),
        "tokenCount": entry.token_count,
        "fullReadTokenCount": entry.full_read_token_count,
    }
    if json_code:
        form["content"] = entry.content
    if json_code or any(unit.kind == "file" for unit in entry.units):
        form["contentHash"] = entry.content_hash
    form["units"] = [unit_form(unit) for unit in entry.units]
    return form


def unit_form(unit: BundleUnit) -> list[Json]:
    """The compact form of one unit: ``[receipt, kind, startLine, endLine, tokenCount]``.

    Its symbol and reason are in the text block's header; a list rather than an object
    halves what each unit's metadata costs.
    """
    return [unit.receipt, unit.kind, unit.start_line, unit.end_line, unit.token_count]


def _reused_form(item: ReusedItem) -> dict[str, Json]:
    form: dict[str, Json] = {"path": item.path, "kind": item.kind}
    if item.receipt is not None:
        form["receipt"] = item.receipt
    if item.content_hash is not None:
        form["contentHash"] = item.content_hash
    return form
