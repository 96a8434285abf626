"""The repository map: the files that matter most, each with its most used symbols, in a budget.

A map is one line per file, ``path: sym1, sym2, ...`` (a file without listed symbols is its
bare path), most important file first, cut so that its text never costs more tokens than the
budget (exact BPE count in the workspace's encoding). It is what an agent reads to find its
way around a repository before asking for pages.

Files are ranked by PageRank over the reference graph the index already holds (the
``out:{path}`` xref records): a file that imports or references another passes rank to it, an
import link weighing 1 and a reference link the number of names it uses (a private name a
tenth), so modules that many files lean on come first. The walk restarts uniformly, or, when a
query or focus files are given, mostly (90 %) on the focus files and on files whose path or
symbol names share terms with the query (weighted by how rare each term is among the files);
a file without outgoing links hands its rank on the same way. Ties are broken by path, so a
map is deterministic.

Within a file, symbols are ranked by how many files use their name (the ``name:{name}``
records), then by kind (types before functions before methods), size and position; with a
query, symbols sharing a term with it come first. Private (``_x``) and dunder names, locals of
functions and variables no other file uses are left out; at most :data:`MAX_SYMBOLS` per file.

Every record is read once per map: the file nodes, the ``out:`` records and the ``name:``
counts, each in one pass over its key range.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from repocontext.errors import InvalidInputError, NotFoundError
from repocontext.index.files.nodes import symbol_from_wire
from repocontext.index.projections.xref_records import links_of_out_record
from repocontext.search.terms import terms, unique_terms
from repocontext.store import STRUCTURAL, XREF, Store, read_repo
from repocontext.store.keys import decode_component, family_prefix
from repocontext.tokens import DEFAULT_ENCODING, count_tokens

__all__ = [
    "MAX_SYMBOLS",
    "RefGraph",
    "RepoMap",
    "RepoMapEntry",
    "build_repo_map",
    "fit_entries",
    "render_entries",
]

MAX_SYMBOLS: Final = 8
"""Symbols listed per file at most."""
DAMPING: Final = 0.85
FOCUS_SHARE: Final = 0.9
"""Share of the restart mass on the focus files when there are any (the rest is uniform)."""
_MAX_ITERATIONS: Final = 100
_TOLERANCE: Final = 1e-10
_IMPORT_WEIGHT: Final = 1.0
_PRIVATE_NAME_WEIGHT: Final = 0.1
_CONTAINERS: Final = frozenset(
    {"class", "interface", "struct", "trait", "impl", "enum", "module", "namespace"}
)
_KIND_ORDER: Final = {
    "class": 0,
    "interface": 0,
    "struct": 0,
    "trait": 0,
    "enum": 0,
    "type": 0,
    "function": 1,
    "macro": 1,
    "constructor": 2,
    "method": 2,
    "property": 2,
    "constant": 3,
}
_USED_ONLY: Final = frozenset({"variable", "field"})
"""Kinds listed only when some file uses the name."""
_STOPWORDS: Final = frozenset(
    str.split(
        "a an and are as at be by do does for from has have if in into is it its not of on or "
        "so than that the then this to was were when which while will with"
    )
)
"""Query words too common to say which files a query is about."""


@dataclass(frozen=True, slots=True)
class RepoMapEntry:
    """One file of a map.

    Attributes:
        path: Repository-relative path.
        symbols: Up to :data:`MAX_SYMBOLS` names, most important first (members as
            ``Type.member``).
    """

    path: str
    symbols: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        """The entry as the map renders it: ``path: sym1, sym2`` (or the bare path)."""
        return f"{self.path}: {', '.join(self.symbols)}" if self.symbols else self.path


@dataclass(frozen=True, slots=True)
class RepoMap:
    """A ranked map of a repository's files, within a token budget.

    Attributes:
        repo_id: The repository.
        entries: The files listed, most important first.
        token_count: Exact tokens of :attr:`text` (never more than ``budget_tokens``).
        budget_tokens: The budget asked for.
        files: Files that were ranked (excluded ones not counted).
        truncated: True when some ranked file was left out for the budget.
    """

    repo_id: str
    entries: tuple[RepoMapEntry, ...]
    token_count: int
    budget_tokens: int
    files: int
    truncated: bool

    @property
    def text(self) -> str:
        """The rendered map, one line per entry (what :attr:`token_count` counts)."""
        return render_entries(self.entries)


@dataclass(frozen=True, slots=True)
class _FileSymbols:
    """The listable symbols of one file: display name, bare name, kind, size, first line."""

    items: tuple[tuple[str, str, str, int, int], ...]


class RefGraph:
    """A repository's files, their listable symbols and the links between them, read once."""

    def __init__(
        self,
        paths: Sequence[str],
        symbols: Mapping[str, _FileSymbols],
        edges: Mapping[tuple[str, str], float],
        users: Mapping[str, int],
    ) -> None:
        """Hold what :meth:`load` read (``paths`` sorted; ``edges``: source, target -> weight)."""
        self.paths = list(paths)
        self._index = {path: i for i, path in enumerate(self.paths)}
        self._symbols = symbols
        self._users = users
        known = [(s, t, w) for (s, t), w in edges.items() if s in self._index and t in self._index]
        self._src = np.array([self._index[s] for s, _, _ in known], dtype=np.int64)
        self._dst = np.array([self._index[t] for _, t, _ in known], dtype=np.int64)
        self._weight = np.array([w for _, _, w in known], dtype=np.float64)
        self._postings: dict[str, list[int]] | None = None

    @classmethod
    def load(cls, store: Store, repo_id: str) -> RefGraph:
        """Read the file nodes, ``out:`` links and ``name:`` counts of ``repo_id`` once each.

        Raises:
            NotFoundError: The repository is not registered.
        """
        if read_repo(store, repo_id) is None:
            raise NotFoundError(f"no repository {repo_id[:200]!r} is registered")
        symbols = _read_symbols(store, repo_id)
        return cls(
            sorted(symbols), symbols, _read_edges(store, repo_id), _read_users(store, repo_id)
        )

    def ranking(
        self, query: str | None = None, focus: Collection[str] = (), *, damping: float = DAMPING
    ) -> list[str]:
        """Every file, most important first (by :meth:`scores`; ties in path order)."""
        scores = self.scores(query, focus, damping=damping)
        return sorted(self.paths, key=lambda p: (-round(scores[p], 12), p))

    def scores(
        self, query: str | None = None, focus: Collection[str] = (), *, damping: float = DAMPING
    ) -> dict[str, float]:
        """Each file's PageRank (they sum to 1; see the module docstring for the walk)."""
        count = len(self.paths)
        if not count:
            return {}
        restart = self._restart(query, focus)
        out_weight = np.bincount(self._src, weights=self._weight, minlength=count)
        dangling = out_weight == 0
        share = self._weight / out_weight[self._src]  # every source has out_weight > 0
        rank = restart.copy()
        for _ in range(_MAX_ITERATIONS):
            flow = np.bincount(self._dst, weights=rank[self._src] * share, minlength=count)
            lost = float(rank[dangling].sum())
            updated = damping * flow + (damping * lost + (1.0 - damping)) * restart
            updated /= updated.sum()
            done = float(np.abs(updated - rank).sum()) < _TOLERANCE
            rank = updated
            if done:
                break
        return dict(zip(self.paths, rank.tolist(), strict=True))

    def entry(self, path: str, query: str | None = None) -> RepoMapEntry:
        """The map entry of ``path``: its best :data:`MAX_SYMBOLS` symbols."""
        wanted = set(_query_terms(query))
        ranked: list[tuple[tuple[int, int, int, int, int], str]] = []
        for display, bare, kind, size, line in self._symbols[path].items:
            used = self._users.get(bare, 0)
            if kind in _USED_ONLY and not used:
                continue
            matches = len(wanted.intersection(terms(display))) if wanted else 0
            order = (-matches, -used, _KIND_ORDER.get(kind, 4), -size, line)
            ranked.append((order, display))
        chosen = dict.fromkeys(display for _, display in sorted(ranked))
        return RepoMapEntry(path, tuple(list(chosen)[:MAX_SYMBOLS]))

    def _restart(self, query: str | None, focus: Collection[str]) -> npt.NDArray[np.float64]:
        count = len(self.paths)
        uniform = np.full(count, 1.0 / count)
        scores = self._query_scores(query) if query else np.zeros(count)
        top = float(scores.max()) if scores.size else 0.0
        for path in focus:
            if path in self._index:
                scores[self._index[path]] = max(top, 1.0)
        total = float(scores.sum())
        if total <= 0:
            return uniform
        result: npt.NDArray[np.float64] = (
            FOCUS_SHARE * scores / total + (1.0 - FOCUS_SHARE) * uniform
        )
        return result

    def _query_scores(self, query: str) -> npt.NDArray[np.float64]:
        if self._postings is None:
            self._postings = {}
            for i, path in enumerate(self.paths):
                for term in self._file_terms(path):
                    self._postings.setdefault(term, []).append(i)
        count = len(self.paths)
        scores = np.zeros(count)
        for term in _query_terms(query):
            hits = self._postings.get(term)
            if hits:
                scores[hits] += math.log((count + 1) / len(hits))
        return scores

    def _file_terms(self, path: str) -> set[str]:
        names = " ".join(item[0] for item in self._symbols[path].items)
        return {*terms(path), *terms(names)}


def build_repo_map(
    store: Store,
    repo_id: str,
    budget_tokens: int,
    *,
    exclude: Iterable[str] = (),
    query: str | None = None,
    encoding: str = DEFAULT_ENCODING,
) -> RepoMap:
    """Build the map of ``repo_id`` (see the module docstring) within ``budget_tokens``.

    ``exclude`` paths are left out of the map; they still take part in the ranking, as focus
    files (their neighbours rank higher). A budget too small for the first entry gives an
    empty map with ``truncated`` set; a repository not indexed yet gives an empty map.

    Raises:
        InvalidInputError: ``budget_tokens`` is below 1.
        NotFoundError: The repository is not registered.
    """
    if budget_tokens < 1:
        raise InvalidInputError(
            f"budgetTokens must be at least 1, got {budget_tokens}",
            hint="Ask for a few hundred tokens or more.",
        )
    left_out = {_normal(path) for path in exclude}
    graph = RefGraph.load(store, repo_id)
    ranked = [p for p in graph.ranking(query, left_out) if p not in left_out]
    entries, used = fit_entries((graph.entry(p, query) for p in ranked), budget_tokens, encoding)
    return RepoMap(
        repo_id=repo_id,
        entries=entries,
        token_count=used,
        budget_tokens=budget_tokens,
        files=len(ranked),
        truncated=len(entries) < len(ranked),
    )


def fit_entries(
    entries: Iterable[RepoMapEntry], budget_tokens: int, encoding: str = DEFAULT_ENCODING
) -> tuple[tuple[RepoMapEntry, ...], int]:
    """The longest prefix of ``entries`` whose rendering fits ``budget_tokens``, and its count.

    Lines are counted one at a time (a line and its newline cost about the sum of their
    tokens); the text is then counted whole, so the count returned is exact, and the end
    adjusted where the estimate was off.
    """
    taken: list[RepoMapEntry] = []
    estimate = 0
    for entry in entries:
        cost = count_tokens(entry.line, encoding) + (1 if taken else 0)
        over = estimate + cost > budget_tokens
        if over and count_tokens(render_entries([*taken, entry]), encoding) > budget_tokens:
            break
        taken.append(entry)
        estimate += cost
    used = count_tokens(render_entries(taken), encoding)
    while taken and used > budget_tokens:
        taken.pop()
        used = count_tokens(render_entries(taken), encoding)
    return tuple(taken), used


def render_entries(entries: Iterable[RepoMapEntry]) -> str:
    """The text of a map: one :attr:`RepoMapEntry.line` per entry, newline-separated."""
    return "\n".join(entry.line for entry in entries)


def _read_symbols(store: Store, repo_id: str) -> dict[str, _FileSymbols]:
    """The listable symbols of every text file (one pass over the file nodes)."""
    symbols: dict[str, _FileSymbols] = {}
    wanted = frozenset({"path", "symbols", "binary"})
    for _, node in store.iter_fields(STRUCTURAL, family_prefix(repo_id, "file"), wanted):
        path, wires = node.get("path"), node.get("symbols")
        if isinstance(path, str) and not node.get("binary"):
            symbols[path] = _FileSymbols(tuple(_listable(wires) if isinstance(wires, list) else ()))
    return symbols


def _read_edges(store: Store, repo_id: str) -> dict[tuple[str, str], float]:
    """(source, target) -> link weight, from every ``out:`` record (one pass)."""
    edges: dict[tuple[str, str], float] = {}
    prefix = family_prefix(repo_id, "xref", "out:")
    for key, record in store.iter_fields(XREF, prefix, frozenset({"imports", "references"})):
        source = decode_component(key[len(prefix) :])
        for link in links_of_out_record(source, record):
            if link.target != source:
                pair = (source, link.target)
                edges[pair] = edges.get(pair, 0.0) + _link_weight(link.kind, link.names)
    return edges


def _read_users(store: Store, repo_id: str) -> dict[str, int]:
    """Bare name -> how many files use it, from every ``name:`` record (one pass)."""
    users: dict[str, int] = {}
    prefix = family_prefix(repo_id, "xref", "name:")
    for key, record in store.iter_fields(XREF, prefix, frozenset({"count"})):
        count = record.get("count")
        if isinstance(count, int):
            users[decode_component(key[len(prefix) :])] = count
    return users


def _listable(wires: Iterable[Any]) -> Iterator[tuple[str, str, str, int, int]]:
    """The symbols a map may list: (display name, bare name, kind, size, first line)."""
    pending: list[tuple[str, Any]] = [("", wire) for wire in reversed(list(wires))]
    while pending:
        owner, wire = pending.pop()
        symbol = symbol_from_wire(wire)
        if not _private(symbol.name):
            display = f"{owner}.{symbol.name}" if owner else symbol.name
            size = symbol.end_line - symbol.start_line + 1
            yield display, symbol.name, symbol.kind, size, symbol.start_line
            if symbol.kind in _CONTAINERS and not owner:  # members, not locals or nested types
                pending.extend((symbol.name, child) for child in reversed(wire.get("children", ())))


def _private(name: str) -> bool:
    return len(name) < 2 or name.startswith("_")


def _link_weight(kind: str, names: Sequence[str]) -> float:
    if kind == "import":
        return _IMPORT_WEIGHT
    return sum(_PRIVATE_NAME_WEIGHT if _private(n) else 1.0 for n in names) or _IMPORT_WEIGHT


def _query_terms(query: str | None) -> list[str]:
    return [t for t in unique_terms(query or "") if t not in _STOPWORDS]


def _normal(path: str) -> str:
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    return "/".join(parts)
