"""A repository's stored records are parsed once into typed values (store/repos.py)."""

from repocontext.store import (
    STRUCTURAL,
    VECTOR_METADATA,
    EmbedStatus,
    RepoRecord,
    read_embed_status,
    read_repo,
    stored_repo_value,
)
from repocontext.store.keys import repo_key, vec_key

STORED = {
    "root": "/work/demo",
    "registeredAt": "2026-01-02T03:04:05Z",
    "files": 12,
    "indexedAt": "2026-01-02T03:05:00Z",
    "vectors": 40,
    "lastIngestedAt": "2026-01-02T03:05:00Z",
    "indexedCommit": "abc123",
    "filters": {"includeGlobs": ["*.py"], "maxFileBytes": 1000},
    "index": {"status": "running", "pid": 7},
    "memoryDefaultTtlSeconds": 3600,
    "projectionsEpoch": 3,
}


def test_a_stored_registration_record_reads_as_a_typed_repo_record(store):
    store.put(STRUCTURAL, repo_key("demo"), STORED)

    assert read_repo(store, "demo") == RepoRecord(
        repo_id="demo",
        root="/work/demo",
        registered_at="2026-01-02T03:04:05Z",
        files=12,
        indexed_at="2026-01-02T03:05:00Z",
        vectors=40,
        last_ingested_at="2026-01-02T03:05:00Z",
        indexed_commit="abc123",
        filters={"includeGlobs": ["*.py"], "maxFileBytes": 1000},
        run={"status": "running", "pid": 7},
        memory_default_ttl_seconds=3600.0,
    )
    assert read_repo(store, "demo").indexing


def test_a_fresh_registration_reads_with_no_run_no_filters_and_no_ttl(store):
    store.put(
        STRUCTURAL,
        repo_key("demo"),
        {"root": "/r", "registeredAt": "t", "files": 0, "indexedAt": None, "vectors": 0},
    )

    repo = read_repo(store, "demo")

    assert repo == RepoRecord(repo_id="demo", root="/r", registered_at="t")
    assert not repo.indexing and repo.filters is None and repo.memory_default_ttl_seconds is None


def test_fields_of_the_wrong_type_read_as_their_defaults(store):
    store.put(
        STRUCTURAL,
        repo_key("demo"),
        {"root": "/r", "files": "12", "vectors": True, "indexedAt": 5, "index": "x"},
    )

    repo = read_repo(store, "demo")

    assert (repo.files, repo.vectors, repo.indexed_at, repo.run) == (0, 0, None, None)


def test_an_unregistered_or_unkeyable_id_reads_as_no_record(store):
    assert read_repo(store, "missing") is None
    assert read_repo(store, "") is None
    assert stored_repo_value(store, "bad\x00id") is None


def test_writers_get_the_stored_value_unchanged_to_put_back(store):
    store.put(STRUCTURAL, repo_key("demo"), STORED)

    value = stored_repo_value(store, "demo")
    value["files"] = 13
    store.put(STRUCTURAL, repo_key("demo"), value)

    assert store.get(STRUCTURAL, repo_key("demo")).value == {**STORED, "files": 13}


def test_no_embedding_pass_reads_as_an_unrecorded_status(store):
    status = read_embed_status(store, "demo")

    assert status == EmbedStatus()
    assert not status.recorded and not status.planes_complete


def test_a_running_embedding_pass_reads_typed_and_serves_only_planes_of_a_completed_one(store):
    running = {
        "status": "running",
        "pid": 42,
        "space": "hash-256",
        "chunksDone": 3,
        "chunksTotal": 9,
        "servable": True,
        "vectors": 20,
    }
    store.put(VECTOR_METADATA, vec_key("demo", "status"), running)

    status = read_embed_status(store, "demo")

    assert status == EmbedStatus("running", "hash-256", 3, 9, 20, None, True, 42)
    assert status.recorded and status.planes_complete
    store.put(VECTOR_METADATA, vec_key("demo", "status"), {**running, "servable": False})
    assert not read_embed_status(store, "demo").planes_complete
    store.put(VECTOR_METADATA, vec_key("demo", "status"), {"status": "failed"})
    failed = read_embed_status(store, "demo")
    assert failed.recorded and not failed.planes_complete and failed.pid is None
