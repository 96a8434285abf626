"""Symbol lookup: which definitions a name a caller gives stands for, from the symbol records.

A symbol's fully qualified name is dotted, its module part derived from the file's path
(``src/flask/app.py`` defines ``src.flask.app.Flask.run``). A caller may give it whole or
as any dotted tail of it:

* a name that is a stored fully qualified name is found by its key (one read) and stands
  for that name only;
* any other name stands for every qualified name ending in ``.{name}`` (``Flask.run``,
  ``app.Flask.run``; ``run`` alone matches every ``run``), in key order: the symbol tree's
  keys are listed once (no record decoded but the matches') and kept, by last part, until
  the store changes;
* a name that matches nothing gets up to :data:`SUGGESTIONS` close names as a hint: names
  whose last part is spelled alike (case ignored), the closest whole tails first.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from repocontext.errors import InvalidKeyError
from repocontext.index.projections.xref_records import read_symbol_definitions
from repocontext.store import SYMBOL, Store, StoreMemo
from repocontext.store.keys import decode_component, family_prefix, symbol_key

__all__ = ["SUGGESTIONS", "Definition", "NameLookup", "close_names", "find_symbols"]

SUGGESTIONS: Final = 5
"""Most close names suggested for a name that matches nothing."""
_MAX_RANKED: Final = 2_000  # candidates of a suggestion compared whole (a bound on the cost)


@dataclass(frozen=True, slots=True)
class Definition:
    """Where the index says a qualified name is defined.

    Attributes:
        fq_name: The fully qualified name.
        path: The defining file.
    """

    fq_name: str
    path: str


@dataclass(frozen=True, slots=True)
class NameLookup:
    """What one name stands for.

    Attributes:
        name: The name as given.
        found: Its definitions (at most the limit asked for), in qualified name order.
        total: How many definitions it matched in all (``len(found)`` or more).
        suggestions: Close qualified names when ``found`` is empty.
    """

    name: str
    found: tuple[Definition, ...]
    total: int
    suggestions: tuple[str, ...] = ()


def find_symbols(
    store: Store, repo_id: str, names: Sequence[str], limit: int
) -> dict[str, NameLookup]:
    """Look up each of ``names`` in the repository's symbol records (rules: module docstring).

    Args:
        store: The store holding the repository's index.
        repo_id: A registered repository.
        names: Qualified names or dotted tails of them.
        limit: Most definitions kept per name (``total`` counts them all).
    """
    found: dict[str, NameLookup] = {}
    for name in names:
        exact = _definitions(store, repo_id, name)
        if exact:
            found[name] = NameLookup(name, tuple(exact[:limit]), len(exact))
    rest = [name for name in dict.fromkeys(names) if name not in found]
    if not rest:
        return found
    by_last = _NAMES.get(store, repo_id)
    for name in rest:
        candidates = [
            fq
            for fq in by_last.get(name.rpartition(".")[2], ())
            if fq.endswith(name) and fq[-len(name) - 1 : -len(name)] == "."
        ]
        definitions, total = _read_some(store, repo_id, candidates, limit)
        suggestions = () if total else close_names(name, by_last)
        found[name] = NameLookup(name, tuple(definitions), total, suggestions)
    return found


def _qualified_names(store: Store, repo_id: str) -> dict[str, list[str]]:
    """Every stored qualified name of the repository, by its last part, in key order.

    Tombstoned records are listed too (no value is decoded): a match is read, which drops them.
    """
    prefix = family_prefix(repo_id, "symbol")
    by_last: dict[str, list[str]] = defaultdict(list)
    for key in store.keys(SYMBOL, prefix, include_deleted=True):
        fq = decode_component(key[len(prefix) :])
        by_last[fq.rpartition(".")[2]].append(fq)
    return dict(by_last)


# Scanning the symbol keys of a large repository takes a fraction of a second: the names
# are kept until the store changes.
_NAMES: Final = StoreMemo(_qualified_names)


def _definitions(store: Store, repo_id: str, fq: str) -> list[Definition]:
    """The live definitions of one qualified name (none for a name no key can hold)."""
    try:
        key = symbol_key(repo_id, fq)
    except InvalidKeyError:
        return []
    stored = read_symbol_definitions(store, key) or ()
    return [Definition(fq, d.path) for d in stored]


def _read_some(
    store: Store, repo_id: str, candidates: Sequence[str], limit: int
) -> tuple[list[Definition], int]:
    """The first ``limit`` live definitions of ``candidates``, and how many there are.

    Beyond the limit a candidate counts as one definition unread (its record is not read).
    """
    kept: list[Definition] = []
    total = 0
    for at, fq in enumerate(candidates):
        if len(kept) >= limit:
            return kept, total + len(candidates) - at
        definitions = _definitions(store, repo_id, fq)
        kept += definitions[: limit - len(kept)]
        total += len(definitions)
    return kept, total


def close_names(name: str, by_last: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """Up to :data:`SUGGESTIONS` qualified names close to ``name`` (module docstring).

    Args:
        name: The name that matched nothing.
        by_last: Qualified names by their last part.
    """
    spellings: dict[str, list[str]] = defaultdict(list)
    for last in by_last:
        spellings[last.lower()].append(last)
    wanted_last = name.rpartition(".")[2].lower()
    close = difflib.get_close_matches(wanted_last, list(spellings), n=SUGGESTIONS, cutoff=0.7)
    parts = name.count(".") + 1
    wanted = name.lower()

    def closeness(fq: str) -> float:
        tail = ".".join(fq.split(".")[-parts:]).lower()
        return difflib.SequenceMatcher(None, wanted, tail).ratio()

    candidates = [fq for spelling in close for last in spellings[spelling] for fq in by_last[last]][
        :_MAX_RANKED
    ]
    ranked = sorted(candidates, key=lambda fq: (-closeness(fq), len(fq), fq))
    return tuple(ranked[:SUGGESTIONS])
