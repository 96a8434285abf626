"""How a code search scores files: the query plan, fusion, the definition bonus, file priors.

The pieces of :meth:`SearchService.search <repocontext.search.service.SearchService.search>`
that decide an order, as pure functions over one :class:`Ranking` (the constants, chosen by
the sweep in ``docs/retrieval.md``, "Ranking"):

* :func:`plan_query` reads a query, often a whole commit-style message, into the terms to
  search: trailers, addresses and issue numbers dropped, identifier-like words (backticked,
  snake_case, camelCase, dotted, called) kept whole and weighted up;
* :func:`fuse` combines the keyword scores with the semantic chunks, per file;
* :func:`definition_share` is how much of the definition bonus a file earns: the defined
  symbol that the query names, or most of whose name it spells;
* :func:`file_prior` keeps changelogs, docs and tests from outranking the source files.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from repocontext.index.model import FileNode
from repocontext.index.parsing.languages import is_documentation_path
from repocontext.search.terms import terms, unique_terms
from repocontext.search.vectors import ChunkHit

__all__ = [
    "DEFAULT_RANKING",
    "QueryPlan",
    "Ranking",
    "definition_share",
    "file_prior",
    "fuse",
    "plan_query",
]

MAX_QUERY_TERMS: Final = 256
"""Distinct query terms searched (the first ones): 100,000 took 7 s per keyword search."""

_NOISE: Final = re.compile(
    r"(?:co-authored-by|signed-off-by|reviewed-by|acked-by|tested-by|reported-by)"
    r":[^<>\n]*(?:<[^>\s]*>)?"
    r"|https?://\S+|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b|(?<![\w#])#\d+\b|\bgh-\d+\b",
    re.IGNORECASE,
)
"""Trailers, links, addresses and issue numbers: words of a message that name no code."""
_TICKED: Final = re.compile(r"`([^`\n]{1,200})`")
_WORD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(\(\))?")
_TEST_WORDS: Final = frozenset({"tests", "testing", "testcase", "pytest", "unittest"})
"""Words of a query that ask for tests (not ``test``: a test client, a Jinja test)."""
_DOC_WORDS: Final = frozenset(
    {"doc", "docs", "documentation", "example", "examples", "demo", "demos", "sample", "samples"}
    | {"tutorial", "sphinx", "readme", "docstring", "docstrings"}
)
"""Words of a query that ask for the documentation or the examples."""
_CAMEL: Final = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")


@dataclass(frozen=True, slots=True)
class Ranking:
    """The constants of the code ranking (defaults: :data:`DEFAULT_RANKING`).

    Attributes:
        fusion: ``rrf`` (weighted reciprocal rank) or ``score`` (max-normalized scores, the
            semantic side scaled over the candidates' cosine range).
        rrf_k: The rank offset of reciprocal rank fusion.
        semantic_weight: Weight of the semantic side (keyword: 1).
        chunk_top: Chunks per file whose similarities make its semantic score (the best one
            counts fully, the next ones ``chunk_decay`` times less each).
        chunk_decay: Weight of each further chunk of a file relative to the one before.
        identifier_weight: How many times an identifier-like query word's terms count.
        strip_noise: Drop trailers, links, addresses and issue numbers from the query.
        rerank_share: The definition bonus as a share of the best fused score.
        symbol_mode: ``overlap`` (shared terms over query terms, the old bonus) or ``named``
            (the symbol the query names, or most of whose name parts it has).
        path_share: Weight of the path (file stem) in the bonus, relative to the symbol's.
        prose_factor: Score multiplier of files without a parsed language.
        test_factor: Score multiplier of test files (1 when the query asks for tests).
        tests_asked: Tests keep their score when the query names tests.
        docs_factor: Score multiplier of code in the documentation or the examples
            (:func:`~repocontext.index.parsing.languages.is_documentation_path`; 1 when the
            query asks for docs or examples).
        stem_parts: A file stem of one run-together word (``asyncfilters``) matches the
            query terms it is made of.
        plurals: Also search each query term's plural or singular (``filter``/``filters``).
        graph_share: What a file the top hits import gains, as a share of the top score.
        graph_seeds: How many top hits lend that lift (and keep their places).
        graph_links: The link lists of the seeds that lift: ``imports``, ``references``
            (the files defining names the seeds use).
        candidates: Keyword candidates reranked, at least (3 per requested hit above).
        chunks: Nearest chunks fetched, at least (5 per requested hit above): with the
            floors, the first hits do not depend on how many were asked for.
    """

    fusion: Literal["rrf", "score"] = "score"
    rrf_k: int = 20
    semantic_weight: float = 0.6
    chunk_top: int = 1
    chunk_decay: float = 0.5
    identifier_weight: int = 2
    strip_noise: bool = True
    rerank_share: float = 0.3
    symbol_mode: Literal["overlap", "named"] = "named"
    path_share: float = 1.0
    prose_factor: float = 0.2
    test_factor: float = 0.5
    tests_asked: bool = True
    docs_factor: float = 0.5
    stem_parts: bool = True
    plurals: bool = False
    graph_share: float = 0.15
    graph_seeds: int = 3
    graph_links: tuple[str, ...] = ("imports",)
    candidates: int = 150
    chunks: int = 250


DEFAULT_RANKING: Final = Ranking()


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """What a query searches for.

    Attributes:
        terms: The distinct terms, first seen first (reasons and the definition bonus).
        weighted: The terms as the keyword index gets them: an identifier's terms repeated,
            so each repeat adds its BM25 share again.
        identifiers: Identifier-like words of the query, lowercased, whole (each dotted part).
    """

    terms: tuple[str, ...]
    weighted: tuple[str, ...]
    identifiers: frozenset[str]


def plan_query(query: str, ranking: Ranking = DEFAULT_RANKING) -> QueryPlan:
    """Read ``query`` into the terms to search (see the module doc)."""
    text = _NOISE.sub(" ", query) if ranking.strip_noise else query
    found = unique_terms(text)[:MAX_QUERY_TERMS] or unique_terms(query)[:MAX_QUERY_TERMS]
    names = _identifiers(text)
    boosted: set[str] = set()
    for name in names:
        boosted.update(terms(name))
    repeats = max(1, ranking.identifier_weight)
    weighted = [t for t in found for _ in range(repeats if t in boosted else 1)]
    if ranking.plurals:
        known = set(found)
        weighted += [v for t in found if (v := _number_variant(t)) and v not in known]
    identifiers = frozenset(part.lower() for name in names for part in name.split("."))
    return QueryPlan(tuple(found), tuple(weighted), identifiers)


def _number_variant(term: str) -> str | None:
    """The plural of a singular word term, or the singular of a plural (``None``: neither)."""
    if len(term) < 4 or not term.isalpha() or term.endswith(("ss", "us", "is")):
        return None
    return term[:-1] if term.endswith("s") else term + "s"


def _identifiers(text: str) -> list[str]:
    """Words of ``text`` that look like code: backticked, snake/camel case, dotted, called."""
    found: list[str] = []
    for span in _TICKED.findall(text):
        found += [m.group().rstrip("()") for m in _WORD.finditer(span)]
    for match in _WORD.finditer(text):
        word = match.group()
        bare = word.rstrip("()")
        if match.group(1) or "." in bare or "_" in bare.strip("_") or _CAMEL.search(bare):
            found.append(bare)
    return list(dict.fromkeys(found))


def fuse(
    keyword: Mapping[str, float], chunks: Sequence[ChunkHit], ranking: Ranking
) -> dict[str, float]:
    """Fused score per file of the keyword scores (best first) and the nearest chunks."""
    semantic = _chunk_scores(chunks, ranking)
    if ranking.fusion == "rrf":
        order = sorted(semantic, key=lambda p: -semantic[p])
        return _rrf([(list(keyword), 1.0), (order, ranking.semantic_weight)], ranking.rrf_k)
    fused: dict[str, float] = {}
    top = max(keyword.values(), default=0.0)
    for path, score in keyword.items():
        fused[path] = score / top if top > 0 else 0.0
    if semantic:
        low, high = min(semantic.values()), max(semantic.values())
        span = (high - low) or 1.0
        for path, score in semantic.items():
            lift = ranking.semantic_weight * (score - low) / span
            fused[path] = fused.get(path, 0.0) + lift
    return fused


def _chunk_scores(chunks: Sequence[ChunkHit], ranking: Ranking) -> dict[str, float]:
    """Per file, its best chunk's similarity plus decayed shares of its next best ones."""
    seen: dict[str, list[float]] = {}
    for chunk in chunks:
        seen.setdefault(chunk.path, []).append(chunk.score)
    scores: dict[str, float] = {}
    for path, values in seen.items():
        values.sort(reverse=True)
        scores[path] = sum(
            v * ranking.chunk_decay**i for i, v in enumerate(values[: max(1, ranking.chunk_top)])
        )
    return scores


def _rrf(rankings: Iterable[tuple[list[str], float]], k: int) -> dict[str, float]:
    """Weighted reciprocal rank fusion: a list adds ``weight / (k + rank)`` to a path."""
    fused: dict[str, float] = {}
    for ranking, weight in rankings:
        for rank, path in enumerate(ranking, start=1):
            fused[path] = fused.get(path, 0.0) + weight / (k + rank)
    return fused


def definition_share(
    path: str, symbol_names: Sequence[str], plan: QueryPlan, ranking: Ranking
) -> float:
    """How much of the definition bonus a file earns (0 to ``1 + path_share``).

    ``symbol_names`` are the names of the file's symbols that share a term with the query,
    best first. ``overlap``: the best one's shared terms plus half the path's, over the
    query's terms. ``named``: 1 for a symbol the query names whole, else the share of the
    best symbol's name parts the query has (names of one part count half: common words);
    plus ``path_share`` times the same for the file's stem.
    """
    query = set(plan.terms)
    if not query:
        return 0.0
    if ranking.symbol_mode == "overlap":
        best = max((len(query & _name_terms(n)) for n in symbol_names[:1]), default=0)
        return (best + ranking.path_share * len(query & _name_terms(path))) / len(query)
    symbol = max((_named(n, query, plan.identifiers) for n in symbol_names), default=0.0)
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    named = _named(stem, query, plan.identifiers)
    if ranking.stem_parts and named < 1.0:
        named = max(named, _spelled(stem.lower(), query))
    return symbol + ranking.path_share * named


def _spelled(stem: str, query: set[str]) -> float:
    """The share of a run-together stem's letters that query terms (3+ letters) spell."""
    if "_" in stem or len(stem) < 6:
        return 0.0
    covered = [False] * len(stem)
    for term in query:
        if len(term) < 3 or len(term) >= len(stem):
            continue
        at = stem.find(term)
        while at >= 0:
            covered[at : at + len(term)] = [True] * len(term)
            at = stem.find(term, at + 1)
    share = sum(covered) / len(stem)
    return share if share >= 0.8 else 0.0


def _named(name: str, query: set[str], identifiers: frozenset[str]) -> float:
    if name.lower() in identifiers:
        return 1.0
    parts = _name_terms(name)
    if not parts:
        return 0.0
    share = len(query & parts) / len(parts)
    return share if len(parts) > 1 else share / 2


@functools.lru_cache(maxsize=65536)
def _name_terms(name: str) -> frozenset[str]:
    # Symbol names and candidate paths repeat across queries: split once.
    return frozenset(terms(name))


def file_prior(node: FileNode, plan: QueryPlan, ranking: Ranking) -> float:
    """The score multiplier of a file: code first, then tests and documentation code, then prose.

    Tests keep their full score when the query asks for tests (``tests``, ``testing``,
    ``pytest``, ...), and the code of the documentation and the examples when it asks for
    those (``docs``, ``examples``, ``tutorial``, ...): then they are what is looked for.
    """
    if not node.language:
        return ranking.prose_factor
    if node.is_test and not (ranking.tests_asked and not _TEST_WORDS.isdisjoint(plan.terms)):
        return ranking.test_factor
    if is_documentation_path(node.path) and _DOC_WORDS.isdisjoint(plan.terms):
        return ranking.docs_factor
    return 1.0
