"""The durable CRDT store: named trees, typed records, TTL, change feed, archive.

On LMDB by default, or on PostgreSQL (``store_url``) when several servers share one store.

Public surface::

    Store.open(data_dir, store_url=None) -> Store   LMDB, or PostgreSQL for a postgresql:// URL
    store.get / scan / count / iter_records       reads (tombstones and expired hidden)
    store.put / merge_fields / set_flag / delete  writes, acknowledged once durable
    store.apply_update / export_update            CRDT exchange with other replicas
    store.batch(commit_every=N)                   bulk writes, acknowledged per commit
    store.changes / feed_floor / cursor / ...     the change feed (trimmed by the sweep)
    store.sweep() / Sweeper                       TTL expiry, tombstone compaction, feed trim
    export_archive / import_archive               atomic archive files
    read_repo / read_embed_status                 a repository's records, typed
    StoreMemo                                     values kept until the store changes
"""

from repocontext.store.archive import ArchiveReport, export_archive, import_archive
from repocontext.store.backend import Backend, BackendStats, ReadTxn, WriteTxn
from repocontext.store.batch import Batch
from repocontext.store.clock import Clock, SystemClock, iso_utc
from repocontext.store.document import DocPatch, DocState
from repocontext.store.memo import StoreMemo
from repocontext.store.records import Value
from repocontext.store.repos import (
    MEMORY_DEFAULT_TTL_FIELD,
    EmbedStatus,
    RepoRecord,
    read_embed_status,
    read_repo,
    stored_repo_value,
)
from repocontext.store.store import DEFAULT_MAX_VALUE_BYTES, Store
from repocontext.store.sweeper import Sweeper
from repocontext.store.trees import (
    CONTENT,
    MEMORY,
    SESSION,
    STRUCTURAL,
    SYMBOL,
    TREES,
    VECTOR_MEMBERSHIP,
    VECTOR_METADATA,
    VECTOR_PAYLOAD,
    XREF,
    MergeMode,
    TreeSpec,
)
from repocontext.store.urls import redact_url
from repocontext.store.view import Change, Page, Record, StoreStats, SweepReport

__all__ = [
    "CONTENT",
    "DEFAULT_MAX_VALUE_BYTES",
    "MEMORY",
    "MEMORY_DEFAULT_TTL_FIELD",
    "SESSION",
    "STRUCTURAL",
    "SYMBOL",
    "TREES",
    "VECTOR_MEMBERSHIP",
    "VECTOR_METADATA",
    "VECTOR_PAYLOAD",
    "XREF",
    "ArchiveReport",
    "Backend",
    "BackendStats",
    "Batch",
    "Change",
    "Clock",
    "DocPatch",
    "DocState",
    "EmbedStatus",
    "MergeMode",
    "Page",
    "ReadTxn",
    "Record",
    "RepoRecord",
    "Store",
    "StoreMemo",
    "StoreStats",
    "SweepReport",
    "Sweeper",
    "SystemClock",
    "TreeSpec",
    "Value",
    "WriteTxn",
    "export_archive",
    "import_archive",
    "iso_utc",
    "read_embed_status",
    "read_repo",
    "redact_url",
    "stored_repo_value",
]
