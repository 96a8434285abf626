"""The values of a context bundle, and the camelCase form its cost is counted on.

:class:`Bundle` is what :func:`~repocontext.pack.bundle.build_bundle` returns: typed entries
and units, plus the figures stats and sessions need. :func:`bundle_form` is the form a bundle
is sent in (the wire module renders the same JSON, and a test holds them equal); the packer
counts its exact cost on it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

__all__ = [
    "Bundle",
    "BundleEntry",
    "BundleUnit",
    "Json",
    "ReusedItem",
    "UnitKind",
    "bundle_form",
    "entry_form",
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
        symbol: The matched symbol a slice was cut around.
    """

    receipt: str
    kind: UnitKind
    start_line: int
    end_line: int
    token_count: int
    symbol: str | None = None


@dataclass(frozen=True, slots=True)
class BundleEntry:
    """One ranked file in a bundle.

    Attributes:
        path: Repository-relative path.
        score: The search score.
        reasons: Why the search found it.
        token_count: Exact tokens of ``content``.
        full_read_token_count: What reading the whole file would cost.
        content: The delivered units' text, concatenated ("" at ``paths`` detail).
        content_hash: SHA-256 of ``content``.
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
        "entries": [entry_form(entry) for entry in bundle.entries],
        "reused": [_reused_form(item) for item in bundle.reused],
    }
    if bundle.session is not None:
        form["session"] = bundle.session
    if bundle.reused_omitted is not None:
        form["reusedOmitted"] = bundle.reused_omitted
    if bundle.retry_budget_tokens is not None:
        form["retryBudgetTokens"] = bundle.retry_budget_tokens
    return form


def entry_form(entry: BundleEntry) -> dict[str, Json]:
    """The form of one entry (its cost is estimated on it while packing)."""
    return {
        "path": entry.path,
        "score": entry.score,
        "reasons": list(entry.reasons),
        "tokenCount": entry.token_count,
        "fullReadTokenCount": entry.full_read_token_count,
        "content": entry.content,
        "contentHash": entry.content_hash,
        "units": [_unit_form(unit) for unit in entry.units],
    }


def _unit_form(unit: BundleUnit) -> dict[str, Json]:
    form: dict[str, Json] = {"receipt": unit.receipt, "kind": unit.kind}
    if unit.symbol:
        form["symbol"] = unit.symbol
    form.update(startLine=unit.start_line, endLine=unit.end_line, tokenCount=unit.token_count)
    return form


def _reused_form(item: ReusedItem) -> dict[str, Json]:
    form: dict[str, Json] = {"path": item.path, "kind": item.kind}
    if item.receipt is not None:
        form["receipt"] = item.receipt
    if item.content_hash is not None:
        form["contentHash"] = item.content_hash
    return form
