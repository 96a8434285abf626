"""The keyword index: BM25 with field weights over SQLite FTS5, one file per repository.

A rebuildable projection of the store (file nodes and content): it lives next to the store
(``<data_dir>/search/<repo>.fts``), records the last store sequence it reflects in the same
SQLite transaction as the rows, and can be deleted at any time — the next search rebuilds it.

Rows are files with three columns of pre-split terms (:mod:`repocontext.search.terms`): the
path, the defined symbol names (with their qualified names), and the content. Memory entries
have their own table, with the title, the tags and topic, and the body (weights
:data:`MEMORY_WEIGHTS`), and their ids for exact lookups. FTS5's own
tokenizer only splits those terms on spaces (``_`` is a token character), so the identifier
rules are ours and the same for documents and queries. Ranking is FTS5's ``bm25()`` with
column weights :data:`WEIGHTS`. Why FTS5 rather than postings of our own: see
``docs/retrieval.md`` ("Keyword engine"). Each file's row also records its language, so a
search filtered by language or glob (:class:`~repocontext.search.filters.FileFilter`) ranks
only the matching rows inside the query (``within``), before the limit.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from repocontext.search.filters import FileFilter

__all__ = ["MEMORY_WEIGHTS", "WEIGHTS", "KeywordDoc", "KeywordHit", "KeywordIndex", "MemoryDoc"]

WEIGHTS: Final = (4.0, 3.0, 1.0)
"""BM25 column weights: path, symbols, content."""
MEMORY_WEIGHTS: Final = (3.0, 3.0, 1.0)
"""BM25 column weights of memory entries: title, tags and topic, body."""

_SCHEMA: Final = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5("
    "path_terms, symbol_terms, content_terms, tokenize=\"unicode61 tokenchars '_'\")",
    "CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, "
    "blob TEXT, language TEXT)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS memdocs USING fts5("
    "title_terms, tag_terms, body_terms, tokenize=\"unicode61 tokenchars '_'\")",
    "CREATE TABLE IF NOT EXISTS mems (id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, "
    "entry_id TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS mems_entry_id ON mems (entry_id)",
)
_TABLES: Final = ("docs", "files", "meta", "memdocs", "mems")
BUSY_TIMEOUT_S: Final = 60.0
"""How long a write waits for another process's write transaction on the same file."""
_FORMAT: Final = "3"  # 3: files.language (query-time language filters)


@dataclass(frozen=True, slots=True)
class KeywordDoc:
    """One file as the keyword index stores it (terms space-joined)."""

    path: str
    blob: str | None
    path_terms: str
    symbol_terms: str
    content_terms: str
    language: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryDoc:
    """One memory entry as the keyword index stores it (terms space-joined)."""

    key: str
    entry_id: str
    title_terms: str
    tag_terms: str
    body_terms: str


@dataclass(frozen=True, slots=True)
class KeywordHit:
    """A file (or, from :meth:`KeywordIndex.search_memory`, a memory key) with its BM25 score.

    Higher is better.
    """

    path: str
    score: float


class KeywordIndex:
    """One repository's FTS5 index; thread-safe (one connection behind a lock)."""

    def __init__(self, path: Path) -> None:
        """Open (creating) the index file; a file of another format is started afresh."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._kept: tuple[tuple[str | None, FileFilter], frozenset[str]] | None = None
        # Several serving processes share the file (``serve --workers N``): a writer waits
        # for another's transaction (a rebuild of a large repository) instead of failing.
        self._db = sqlite3.connect(
            str(path), check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_S
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._create()
        if self._meta("format") not in (None, _FORMAT):
            # Another layout (a column more or less): start afresh, the next sync rebuilds.
            for table in _TABLES:
                self._db.execute(f"DROP TABLE IF EXISTS {table}")
            self._create()
        self._set_meta("format", _FORMAT)

    def _create(self) -> None:
        for statement in _SCHEMA:
            self._db.execute(statement)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    # -- state -------------------------------------------------------------------------

    @property
    def seq(self) -> int:
        """The store sequence the index reflects (0: never built)."""
        value = self._meta("seq")
        return int(value) if value is not None else 0

    def count(self) -> int:
        """How many files are indexed."""
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM files").fetchone()[0])

    def blobs(self) -> dict[str, str | None]:
        """Path -> blob id of every indexed file."""
        with self._lock:
            return dict(self._db.execute("SELECT path, blob FROM files"))

    # -- writes ------------------------------------------------------------------------

    def apply(
        self,
        upserts: Iterable[KeywordDoc],
        deletes: Iterable[str],
        seq: int,
        memory_upserts: Iterable[MemoryDoc] = (),
        memory_deletes: Iterable[str] = (),
        *,
        base: int = 0,
        rebuild: bool = False,
    ) -> int:
        """Replace and delete rows, and record ``seq``, in one transaction; return rows written.

        Several processes may apply the same feed to one file; the sequence on disk decides,
        inside the transaction, so an index never skips changes and work is not redone:

        * the changes of the feed after ``base`` up to ``seq`` are applied only when the
          file reflects at least ``base`` and less than ``seq``; otherwise another process
          got there first (or emptied the file) and nothing is written;
        * ``rebuild`` (every row): the file is emptied first, in the same transaction (no
          reader sees half an index), unless it reflects exactly ``seq`` already.
        """
        written = 0
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                current = self._seq_in_transaction()
                done = current == seq if rebuild else (current >= seq or current < base)
                if done:
                    self._db.execute("ROLLBACK")
                    return 0
                if rebuild:
                    self._clear_rows()
                for path in deletes:
                    self._delete(path)
                for doc in upserts:
                    self._insert(doc)
                    written += 1
                for key in memory_deletes:
                    self._delete_memory(key)
                for mem in memory_upserts:
                    self._insert_memory(mem)
                    written += 1
                self._db.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('seq', ?)", (str(seq),)
                )
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # (SQLite ends it itself on a full disk)
                    self._db.execute("ROLLBACK")
                raise
        return written

    def _seq_in_transaction(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()
        return int(row[0]) if row is not None else 0

    def _insert(self, doc: KeywordDoc) -> None:
        self._delete(doc.path)
        cursor = self._db.execute(
            "INSERT INTO files (path, blob, language) VALUES (?, ?, ?)",
            (doc.path, doc.blob, doc.language),
        )
        self._db.execute(
            "INSERT INTO docs (rowid, path_terms, symbol_terms, content_terms) VALUES (?, ?, ?, ?)",
            (cursor.lastrowid, doc.path_terms, doc.symbol_terms, doc.content_terms),
        )

    def _insert_memory(self, mem: MemoryDoc) -> None:
        self._delete_memory(mem.key)
        cursor = self._db.execute(
            "INSERT INTO mems (key, entry_id) VALUES (?, ?)", (mem.key, mem.entry_id)
        )
        self._db.execute(
            "INSERT INTO memdocs (rowid, title_terms, tag_terms, body_terms) VALUES (?, ?, ?, ?)",
            (cursor.lastrowid, mem.title_terms, mem.tag_terms, mem.body_terms),
        )

    def clear(self) -> None:
        """Drop every row (the next sync rebuilds)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            self._clear_rows()
            self._db.execute("DELETE FROM meta WHERE key = 'seq'")
            self._db.execute("COMMIT")

    def _clear_rows(self) -> None:
        for table in ("docs", "files", "memdocs", "mems"):
            self._db.execute(f"DELETE FROM {table}")

    def _delete(self, path: str) -> None:
        row = self._db.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
        if row is not None:
            self._db.execute("DELETE FROM docs WHERE rowid = ?", (row[0],))
            self._db.execute("DELETE FROM files WHERE id = ?", (row[0],))

    def _delete_memory(self, key: str) -> None:
        row = self._db.execute("SELECT id FROM mems WHERE key = ?", (key,)).fetchone()
        if row is not None:
            self._db.execute("DELETE FROM memdocs WHERE rowid = ?", (row[0],))
            self._db.execute("DELETE FROM mems WHERE id = ?", (row[0],))

    # -- reads -------------------------------------------------------------------------

    def search_memory(self, query_terms: Sequence[str], limit: int) -> list[KeywordHit]:
        """Return up to ``limit`` memory keys matching any of the terms, best first."""
        return self._bm25("memdocs", "mems", "key", MEMORY_WEIGHTS, query_terms, limit)

    def memory_keys_of(self, entry_ids: Iterable[str]) -> list[str]:
        """Return the keys of the indexed memory entries with one of these ids."""
        ids = sorted(set(entry_ids))
        if not ids:
            return []
        marks = ", ".join("?" for _ in ids)
        with self._lock:
            rows = self._db.execute(
                f"SELECT key FROM mems WHERE entry_id IN ({marks}) ORDER BY key", ids
            ).fetchall()
        return [str(row[0]) for row in rows]

    def search(
        self, query_terms: Sequence[str], limit: int, within: Set[str] | None = None
    ) -> list[KeywordHit]:
        """Return up to ``limit`` files matching any of the terms, best first.

        ``within``: only these paths are ranked (the best ``limit`` of them, not those of
        the overall best that happen to be in it).
        """
        return self._bm25("docs", "files", "path", WEIGHTS, query_terms, limit, within)

    def paths_where(self, files: FileFilter) -> frozenset[str]:
        """The indexed paths the filter keeps.

        The last answer is kept until the index changes: a benchmark asks the same filter
        of query after query, and matching every path against globs is the costly part.
        """
        languages = sorted(files.languages)
        where = f" WHERE language IN ({', '.join('?' for _ in languages)})" if languages else ""
        with self._lock:
            seq = self._db.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()
            key = (seq[0] if seq else None, files)
            if self._kept is not None and self._kept[0] == key:
                return self._kept[1]
            rows = self._db.execute(f"SELECT path, language FROM files{where}", languages)
            kept = frozenset(path for path, language in rows if files.keeps(path, language))
            self._kept = (key, kept)
        return kept

    def _bm25(
        self,
        table: str,
        rows_of: str,
        name: str,
        weights: Sequence[float],
        query_terms: Sequence[str],
        limit: int,
        within: Set[str] | None = None,
    ) -> list[KeywordHit]:
        """Rank the rows of an FTS5 ``table`` (names in ``rows_of.name``) by weighted BM25.

        ``within``: only rows whose name is in it, filtered inside the query (before the
        limit), so the answer is the best ``limit`` of them.
        """
        if not query_terms or limit <= 0 or (within is not None and not within):
            return []
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in query_terms)
        columns = ", ".join(str(w) for w in weights)
        kept = f" AND rc_within({rows_of}.{name})" if within is not None else ""
        sql = (
            f"SELECT {rows_of}.{name}, bm25({table}, {columns}) AS rank FROM {table} "
            f"JOIN {rows_of} ON {rows_of}.id = {table}.rowid WHERE {table} MATCH ?{kept} "
            f"ORDER BY rank, {rows_of}.{name} LIMIT ?"
        )
        with self._lock:
            if within is not None:  # (one connection, under the lock: this call's set)
                self._db.create_function("rc_within", 1, within.__contains__, deterministic=True)
            rows = self._db.execute(sql, (match, limit)).fetchall()
        return [KeywordHit(found, -float(rank)) for found, rank in rows]

    def _meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
