"""Search over one store: keyword indexes kept in step with the store, ranking, reasons.

Freshness: before answering, the keyword index applies the store's change feed since the
sequence it last reflected (file and content records of that repository only), or rebuilds
from the file nodes when it is new, unreadable or far behind. So a search reflects the store
as of the call; the store reflects the working tree as of the last index pass or reconcile,
which ``freshness`` reports.

Reasons, in this fixed order (the vocabulary of DESIGN.md section 5): ``path-name-match``
(a query term is a term of the path), ``symbol:<fq>`` (up to three defined symbols whose name
shares a term with the query, best first), ``content-match`` (a query term occurs in the
text), ``semantic`` (semantic retrieval found it), then ``chunk:symbol`` when the hit is
anchored on a symbol (its ``lines``) or ``chunk:file``. Memory entries (scopes ``memory`` and
``all``) have ``tag:<t>``, ``topic-match``, ``content-match``, ``key-match`` and ``semantic``
(:mod:`repocontext.search.memory_search`); keyword and vector rankings of the entries are
fused like those of files, and ``all`` interleaves them with the code hits by reciprocal rank.
"""

from __future__ import annotations

import dataclasses
import functools
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Literal

from repocontext.errors import (
    FeedTrimmedError,
    InvalidInputError,
    NotFoundError,
    StoreFullError,
)
from repocontext.index.files.nodes import (
    ParsedNodes,
    file_text,
    iter_symbols,
    node_of,
    read_file_node,
)
from repocontext.index.model import FileNode
from repocontext.index.projections.xref_records import linked_paths
from repocontext.search.filters import FileFilter
from repocontext.search.hits import (
    FileEntry,
    Freshness,
    NoteEntry,
    SearchHit,
    SearchResult,
    SymbolMatch,
)
from repocontext.search.keyword import KeywordDoc, KeywordIndex, MemoryDoc
from repocontext.search.memory_search import MemoryHit, memory_doc, rank_memory
from repocontext.search.memory_vectors import memory_key_of
from repocontext.search.modes import SearchMode, fallback_path, nearest_chunks, warnings_of
from repocontext.search.ranking import (
    DEFAULT_RANKING,
    MAX_QUERY_TERMS,
    QueryPlan,
    Ranking,
    definition_share,
    file_prior,
    fuse,
    plan_query,
)
from repocontext.search.semantic import SemanticService
from repocontext.search.terms import terms
from repocontext.search.vectors import ChunkHit
from repocontext.store import MEMORY, STRUCTURAL, RepoRecord, Store, read_repo
from repocontext.store.keys import family_prefix, file_key, repo_key

__all__ = [
    "MAX_QUERY_TERMS",
    "FileEntry",
    "Freshness",
    "NoteEntry",
    "SearchHit",
    "SearchResult",
    "SearchScope",
    "SearchService",
    "SymbolMatch",
]

SearchScope = Literal["code", "memory", "all"]
REBUILD_ABOVE: Final = 2000
"""Changed files above which a sync rebuilds instead of applying the feed."""
MAX_SYMBOL_REASONS: Final = 3
_CANDIDATES: Final = 3  # keyword candidates fetched per requested hit, for reranking
SEMANTIC_CHUNKS: Final = 5  # nearest chunks fetched per requested hit (several per file)
RRF_K: Final = 20
"""The rank offset of reciprocal rank fusion (memory entries, and code with memory)."""
SEMANTIC_WEIGHT: Final = 0.2
"""Weight of the semantic ranking of memory entries in their fusion (keyword: 1); code
hits have their own constants (:class:`~repocontext.search.ranking.Ranking`)."""
_DEFINITION_KINDS: Final = frozenset(
    {"class", "function", "method", "interface", "struct", "enum", "trait", "type", "module"}
)


class SearchService:
    """Keyword (and, when present, semantic) retrieval over the repositories of one store."""

    def __init__(
        self, store: Store, directory: Path, semantic: SemanticService | None = None
    ) -> None:
        """Keep the per-repository indexes under ``directory``; fuse ``semantic`` when ready."""
        self.store = store
        self.semantic = semantic
        self.directory = directory
        self._lock = threading.Lock()
        self._indexes: dict[str, KeywordIndex] = {}
        self._sync_locks: dict[str, threading.Lock] = {}
        self._nodes = ParsedNodes(store)
        self.ranking: Ranking = DEFAULT_RANKING
        """The ranking constants (``repocontext.search.ranking``); benchmarks sweep them."""

    def close(self) -> None:
        """Close every open index."""
        with self._lock:
            for index in self._indexes.values():
                index.close()
            self._indexes.clear()

    def keyword_index(self, repo_id: str) -> KeywordIndex:
        """Return the open keyword index of a repository (created empty when new)."""
        with self._lock:
            index = self._indexes.get(repo_id)
            if index is None:
                index = KeywordIndex(self._index_path(repo_id))
                self._indexes[repo_id] = index
            return index

    def drop(self, repo_id: str) -> None:
        """Close and delete a repository's keyword index (a projection: the next sync rebuilds).

        Waits for a sync of that repository in progress; a search that runs afterwards
        starts from an empty index and rebuilds it from the store.
        """
        with self._lock:
            lock = self._sync_locks.setdefault(repo_id, threading.Lock())
        with lock:
            with self._lock:
                index = self._indexes.pop(repo_id, None)
            if index is not None:
                index.close()
            path = self._index_path(repo_id)
            for suffix in ("", "-wal", "-shm", "-journal"):
                path.with_name(path.name + suffix).unlink(missing_ok=True)

    def _index_path(self, repo_id: str) -> Path:
        return self.directory / (repo_key(repo_id).replace("/", "_") + ".fts")

    def sync(self, repo_id: str) -> int:
        """Bring the keyword index up to the store's head; return the files (re)indexed."""
        if self._at_head(repo_id):
            return 0  # no lock taken: concurrent searches of a settled index do not queue
        with self._lock:
            lock = self._sync_locks.setdefault(repo_id, threading.Lock())
        with lock, _disk_errors(repo_id):
            index = self.keyword_index(repo_id)  # under the lock: drop() may replace it
            # The file's sequence before the store's head: another process sharing the file
            # may advance it meanwhile, and it must not then read as ahead of the store.
            seq = index.seq
            head = self.store.last_seq()
            if seq == 0 or seq > head:
                return self._rebuild(repo_id, index, head)
            changed = self._changed_since(repo_id, seq)
            if changed is None:
                return self._rebuild(repo_id, index, head)
            paths, entries, after = changed
            if after == seq:
                return 0
            docs, gone = [], []
            for path in sorted(paths):
                doc = self._doc(repo_id, path)
                (docs.append(doc) if doc is not None else gone.append(path))
            notes: list[MemoryDoc] = []
            forgotten: list[str] = []
            for key in sorted(entries):
                record = self.store.get(MEMORY, key)
                note = memory_doc(record) if record is not None else None
                (notes.append(note) if note is not None else forgotten.append(key))
            return index.apply(docs, gone, after, notes, forgotten, base=seq)

    def _changed_since(self, repo_id: str, seq: int) -> tuple[set[str], set[str], int] | None:
        """The file paths and memory keys the feed names after ``seq``, and its last sequence.

        ``None`` when a rebuild is due: more than :data:`REBUILD_ABOVE` files changed, or the
        events after ``seq`` were trimmed from the feed.
        """
        files = family_prefix(repo_id, "file")
        contents = family_prefix(repo_id, "content")
        memory = family_prefix(repo_id, "mem")
        paths: set[str] = set()
        entries: set[str] = set()
        after = seq
        try:
            while batch := self.store.changes(after=after, limit=5000):
                for change in batch:
                    if change.key.startswith(files):
                        paths.add(change.key[len(files) :])
                    elif change.key.startswith(contents):
                        paths.add(change.key[len(contents) :])
                    elif change.key.startswith(memory):
                        entries.add(change.key)
                after = batch[-1].seq
                if len(paths) > REBUILD_ABOVE:
                    return None
        except FeedTrimmedError:  # fell behind the feed's retention: read the records
            return None
        return paths, entries, after

    def _at_head(self, repo_id: str) -> bool:
        with self._lock:
            current = self._indexes.get(repo_id)
        try:
            return current is not None and 0 < current.seq == self.store.last_seq()
        except sqlite3.ProgrammingError:  # dropped meanwhile: the locked path reopens it
            return False

    def search(
        self,
        repo_id: str,
        query: str,
        k: int = 10,
        scope: SearchScope = "code",
        *,
        retrieval: SearchMode | None = None,
        files: FileFilter | None = None,
    ) -> SearchResult:
        """Rank the repository's files for ``query`` and explain each hit.

        ``retrieval``: the mode asked for (:mod:`repocontext.search.modes`; ``None``: hybrid
        when vectors can answer, else keyword). ``files``: rank only the files it keeps.

        Raises:
            NotFoundError: No repository ``repo_id`` is registered.
            InvalidInputError: The query is empty.
            VectorsUnavailableError: ``retrieval`` asked for vectors and none can answer.
        """
        self._repo(repo_id)
        if not query.strip():
            raise InvalidInputError("the query is empty", hint="Describe what you look for.")
        self.sync(repo_id)
        # Read after the sync, so the run that wrote what the index now holds is reported
        # (its repository record is written just after its files: it may trail by one run).
        repo = self._repo(repo_id)
        freshness = _freshness(repo, self.keyword_index(repo_id).seq)
        ranking = self.ranking
        plan = plan_query(query, ranking)  # (the first terms only: a pasted log can't stall us)
        query_terms = list(plan.terms)
        index = self.keyword_index(repo_id)
        within = None if files is None else index.paths_where(files)
        nearest = nearest_chunks(
            self.semantic,
            repo_id,
            query,
            max(k * SEMANTIC_CHUNKS, ranking.chunks),
            retrieval,
            within,
        )
        semantic: dict[str, ChunkHit] = {}
        similar_notes: list[str] = []  # memory keys the vectors found, best first
        for chunk in nearest or []:
            note = memory_key_of(chunk.path)
            if note is not None:
                similar_notes.append(note)
            else:
                semantic.setdefault(chunk.path, chunk)  # best chunk per file (best first)
        if scope == "memory":
            notes = self._memory_hits(repo_id, query, query_terms, k, similar_notes, retrieval)
            mode, path_kind = self._memory_mode(repo_id, nearest, notes, similar_notes, retrieval)
            warnings = warnings_of(self.semantic, repo_id, path_kind)
            return SearchResult(mode, path_kind, tuple(notes), freshness, warnings)
        # (semantic mode: the vectors alone find candidates)
        candidates = max(k * _CANDIDATES, ranking.candidates)
        found = [] if retrieval == "semantic" else index.search(plan.weighted, candidates, within)
        keyword = {hit.path: hit.score for hit in found}
        if nearest is None:
            scores, path_kind = keyword, self._fallback_path(repo_id, retrieval)
        else:
            file_chunks = [chunk for chunk in nearest if memory_key_of(chunk.path) is None]
            scores = fuse(keyword, file_chunks, ranking)
            plane = "approximate" if self._approximate(repo_id) else "exact"
            kind = "hybrid" if keyword and semantic else "semantic" if semantic else "keyword"
            path_kind = f"{kind}.{plane}"
        pool = sorted(scores, key=lambda p: -scores[p])[:candidates]
        query_set = set(query_terms)
        bonus = ranking.rerank_share * (scores[pool[0]] if pool else 0.0)
        if nearest is None:
            bonus = max(1.0, bonus)
        if retrieval == "semantic":
            bonus = 0.0  # the vectors alone rank: no bonus for naming a symbol's words
        explained = [
            self._explain(repo_id, p, scores[p], plan, bonus, semantic.get(p)) for p in pool
        ]
        ranked = self._graph_boost(
            repo_id,
            sorted((h for h in explained if h is not None), key=lambda h: (-h.score, h.path)),
        )
        hits = [self._with_content_reason(repo_id, h, query_set) for h in ranked[:k]]
        mode = path_kind.split(".")[0] if hits else "empty"
        if scope == "all":
            notes = self._memory_hits(repo_id, query, query_terms, k, similar_notes, retrieval)
            memory_mode, _ = self._memory_mode(repo_id, nearest, notes, similar_notes, retrieval)
            mode = _combined_mode(mode, memory_mode)
            if nearest is not None and mode != "empty":
                path_kind = f"{mode}.{path_kind.split('.')[1]}"
            hits = _interleave(hits, notes, k)
        warnings = warnings_of(self.semantic, repo_id, path_kind)
        return SearchResult(mode, path_kind, tuple(hits), freshness, warnings)

    def _memory_hits(
        self,
        repo_id: str,
        query: str,
        query_terms: list[str],
        k: int,
        similar: list[str],
        retrieval: SearchMode | None,
    ) -> list[SearchHit]:
        index = self.keyword_index(repo_id)
        fusion = (SEMANTIC_WEIGHT, RRF_K)
        by_words = retrieval != "semantic"  # (semantic mode: the vectors alone rank entries)
        ranked = rank_memory(
            self.store, index, query, query_terms, k, similar, fusion, by_words=by_words
        )
        return [_memory_search_hit(hit) for hit in ranked]

    def _memory_mode(
        self,
        repo_id: str,
        nearest: list[ChunkHit] | None,
        notes: list[SearchHit],
        similar: list[str],
        retrieval: SearchMode | None = None,
    ) -> tuple[str, str]:
        """``mode`` and ``retrievalPath`` of a memory-scope answer."""
        if nearest is None:
            return ("keyword" if notes else "empty"), self._fallback_path(repo_id, retrieval)
        plane = "approximate" if self._approximate(repo_id) else "exact"
        by_words = any(reason != "semantic" for hit in notes for reason in hit.reasons)
        kind = "hybrid" if similar and by_words else "semantic" if similar else "keyword"
        return (kind if notes else "empty"), f"{kind}.{plane}"

    def _graph_boost(self, repo_id: str, ranked: list[SearchHit]) -> list[SearchHit]:
        """Lift the candidates the top hits import, below those hits (a graph signal)."""
        seeds = self.ranking.graph_seeds
        if len(ranked) <= seeds:
            return ranked
        related: set[str] = set()
        for hit in ranked[:seeds]:
            for links in self.ranking.graph_links:
                related.update(linked_paths(self.store, repo_id, f"out:{hit.path}", links))
        lift = self.ranking.graph_share * ranked[0].score
        tail = [
            dataclasses.replace(hit, score=round(hit.score + lift, 4))
            if hit.path in related
            else hit
            for hit in ranked[seeds:]
        ]
        # The seeds keep their places: the signal reorders what follows them.
        return ranked[:seeds] + sorted(tail, key=lambda h: (-h.score, h.path))

    def _fallback_path(self, repo_id: str, retrieval: SearchMode | None) -> str:
        return fallback_path(self.semantic, repo_id, retrieval)

    def _approximate(self, repo_id: str) -> bool:
        plane = self.semantic.ready_plane(repo_id) if self.semantic else None
        return bool(plane and plane.approximate)

    # -- internals ---------------------------------------------------------------------

    def _rebuild(self, repo_id: str, index: KeywordIndex, head: int) -> int:
        # One transaction (emptied, then every row): no other process reads a half index.
        docs, notes = self._all_docs(repo_id), self._all_memory_docs(repo_id)
        return index.apply(docs, (), head, notes, rebuild=True)

    def _all_memory_docs(self, repo_id: str) -> Iterator[MemoryDoc]:
        for record in self.store.iter_records(MEMORY, family_prefix(repo_id, "mem")):
            note = memory_doc(record)
            if note is not None:
                yield note

    def _all_docs(self, repo_id: str) -> Iterator[KeywordDoc]:
        prefix = family_prefix(repo_id, "file")
        for record in self.store.iter_records(STRUCTURAL, prefix, page_size=1000):
            if isinstance(record.value, dict):
                node = node_of(record.value)
                yield _doc_of(node, self._text(repo_id, node.path))

    def _doc(self, repo_id: str, path: str) -> KeywordDoc | None:
        node = read_file_node(self.store, repo_id, path)
        return _doc_of(node, self._text(repo_id, path)) if node is not None else None

    def _text(self, repo_id: str, path: str) -> str | None:
        return file_text(self.store, repo_id, path)

    def _explain(
        self,
        repo_id: str,
        path: str,
        score: float,
        plan: QueryPlan,
        bonus: float,
        nearest: ChunkHit | None = None,
    ) -> SearchHit | None:
        """Explain one candidate and rerank it: BM25 plus a bonus for defining what was asked.

        The bonus (``bonus`` times :func:`~repocontext.search.ranking.definition_share`) lets
        a file that defines the named symbol outrank one that only mentions it: symbol
        definitions over mentions. Then the file's prior (code, tests, prose) scales it.
        """
        query = set(plan.terms)
        key = file_key(repo_id, path)
        node = self._nodes.read(key)
        if node is None:
            return None  # deleted since the index was read
        reasons: list[str] = []
        path_overlap = len(query & _name_terms(path))
        if path_overlap:
            reasons.append("path-name-match")
        symbols = _symbol_matches(node, query)
        reasons += [f"symbol:{s.fq_name}" for s in symbols[:MAX_SYMBOL_REASONS]]
        best = symbols[0] if symbols else None
        if nearest is not None:
            reasons.append("semantic")
        lines = (best.start_line, best.end_line) if best else None
        if lines is None and nearest is not None and nearest.kind == "symbol":
            lines = (nearest.start_line, nearest.end_line)
        reasons.append("chunk:symbol" if lines else "chunk:file")
        names = [s.fq_name.rsplit(".", 1)[-1] for s in symbols]
        score += bonus * definition_share(path, names, plan, self.ranking)
        score *= file_prior(node, plan, self.ranking)  # code over tests, docs and changelogs
        entry = FileEntry(node.language, node.token_count, node.lines, node.is_test)
        return SearchHit(
            key, path, round(score, 4), tuple(reasons), entry, lines, tuple(symbols), node
        )

    def _with_content_reason(self, repo_id: str, hit: SearchHit, query: set[str]) -> SearchHit:
        """``hit`` with its text (read once, here: a bundle renders it) and ``content-match``."""
        text = self._text(repo_id, hit.path) if hit.path is not None else None
        reasons = hit.reasons
        if text is not None and _mentions(text, query):
            # The fixed order: path-name-match, symbol, content-match, semantic, chunk:*.
            at = next(
                (i for i, r in enumerate(reasons) if r == "semantic" or r.startswith("chunk:")),
                len(reasons),
            )
            reasons = (*reasons[:at], "content-match", *reasons[at:])
        # (built directly: dataclasses.replace costs more than the rest of this per hit)
        return SearchHit(
            hit.key, hit.path, hit.score, reasons, hit.entry, hit.lines, hit.symbols, hit.node, text
        )

    def _repo(self, repo_id: str) -> RepoRecord:
        repo = read_repo(self.store, repo_id)
        if repo is None:
            raise NotFoundError(f"no repository {repo_id!r} is registered")
        return repo


def _memory_search_hit(hit: MemoryHit) -> SearchHit:  # (no node, no text: not a file)
    return SearchHit(hit.key, None, hit.score, hit.reasons, hit.entry)


@contextmanager
def _disk_errors(repo_id: str) -> Iterator[None]:
    """SQLite's "database or disk is full" as the store's own ``store.full``."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if "full" not in str(exc):
            raise
        raise StoreFullError(
            f"the keyword index of {repo_id!r} cannot grow: {exc}",
            hint="Free disk space; the index catches up with the next search.",
        ) from exc


def _combined_mode(code: str, memory: str) -> str:
    """The mode of a code-and-memory answer: hybrid when the two sides answered differently."""
    if "empty" in (code, memory) or code == memory:
        return memory if code == "empty" else code
    return "hybrid"


def _interleave(code: list[SearchHit], notes: list[SearchHit], k: int) -> list[SearchHit]:
    """Merge code and memory hits by reciprocal rank (their scores are not comparable)."""
    ranked = [(1 / (RRF_K + i), 0, i, hit) for i, hit in enumerate(code, 1)]
    ranked += [(1 / (RRF_K + i), 1, i, hit) for i, hit in enumerate(notes, 1)]
    ranked.sort(key=lambda item: (-item[0], item[1], item[2]))
    return [hit for *_, hit in ranked[:k]]


def _doc_of(node: FileNode, text: str | None) -> KeywordDoc:
    names: list[str] = []
    for symbol in iter_symbols(node.symbols):
        names += [symbol.name, symbol.fq_name]
    return KeywordDoc(
        path=node.path,
        blob=node.blob_id,
        path_terms=" ".join(terms(node.path)),
        symbol_terms=" ".join(terms(" ".join(names))),
        content_terms=" ".join(terms(text)) if text else "",
        language=node.language,
    )


@functools.lru_cache(maxsize=65536)
def _name_terms(name: str) -> frozenset[str]:
    # Symbol names and candidate paths repeat across queries (every candidate is explained
    # by its path and its symbols): split once.
    return frozenset(terms(name))


def _symbol_matches(node: FileNode, query: set[str]) -> list[SymbolMatch]:
    found: list[tuple[int, int, int, SymbolMatch]] = []
    for symbol in iter_symbols(node.symbols):
        overlap = len(query & _name_terms(symbol.name))
        if overlap:
            match = SymbolMatch(
                fq_name=symbol.fq_name,
                kind=symbol.kind,
                start_line=symbol.start_line or 1,
                end_line=symbol.end_line or 1,
                overlap=overlap,
            )
            definition = 0 if match.kind in _DEFINITION_KINDS else 1
            found.append((-overlap, definition, match.start_line, match))
    return [match for *_, match in sorted(found, key=lambda item: item[:3])]


def _mentions(text: str, query: set[str]) -> bool:
    lowered = text.lower()
    return any(term in lowered for term in query)


def _freshness(repo: RepoRecord, seq: int) -> Freshness:
    """The :class:`Freshness` of a repository record, for this view."""
    return Freshness(
        indexed_at=repo.indexed_at,
        last_ingested_at=repo.last_ingested_at,
        indexed_commit=repo.indexed_commit,
        indexing=repo.indexing,
        store_seq=seq,
    )
