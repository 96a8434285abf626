"""What only the PostgreSQL backend has to prove: its URL, its schema, writers of many
processes, fencing across processes, and a database killed mid-write and restarted."""

import subprocess
import sys
import threading
from pathlib import Path

import httpx2
import psycopg
import pytest

from repocontext.errors import (
    InvalidInputError,
    StaleTokenError,
    StoreNotFoundError,
    StoreUnavailableError,
)
from repocontext.http import create_app
from repocontext.mcp import build_server
from repocontext.memory import MemoryService
from repocontext.settings import Settings
from repocontext.store import MEMORY, STRUCTURAL, Store
from repocontext.store.keys import file_key, repo_key
from repocontext.testing_pg import PostgresCluster
from repocontext.workspace import Workspace

WORKER = str(Path(__file__).with_name("store_worker.py"))


def test_a_store_url_of_another_scheme_is_refused_with_a_hint(tmp_path):
    for url in ("mysql://u:secret@h/db", "sqlite:///x.db", "postgresql-ish"):
        with pytest.raises(InvalidInputError) as info:
            Store.open(tmp_path, store_url=url)
        assert info.value.code == "input.invalid"
        assert "postgresql://" in info.value.hint
        assert "secret" not in info.value.message
    assert not (tmp_path / "store").exists()


def test_a_bad_table_prefix_is_refused(tmp_path, pg_cluster):
    with pytest.raises(InvalidInputError, match="table_prefix"):
        Store.open(tmp_path, store_url=f"{pg_cluster.url}?table_prefix=Robert');DROP")


def test_tables_of_a_newer_schema_are_refused_and_left_alone(tmp_path, pg_url):
    Store.open(tmp_path, store_url=pg_url).close()
    prefix = pg_url.rsplit("table_prefix=", 1)[1]
    with psycopg.connect(pg_url.split("?")[0], autocommit=True) as conn:
        conn.execute(f"UPDATE {prefix}schema SET version = 99")
    with pytest.raises(StoreUnavailableError, match="schema version 99") as info:
        Store.open(tmp_path, store_url=pg_url)
    assert "Upgrade" in info.value.hint


def test_a_read_only_open_of_an_empty_database_creates_nothing(tmp_path, pg_url):
    assert Store.exists(tmp_path, pg_url) is False
    with pytest.raises(StoreNotFoundError, match="tables are missing"):
        Store.open(tmp_path, store_url=pg_url, read_only=True)
    with psycopg.connect(pg_url.split("?")[0]) as conn:
        prefix = pg_url.rsplit("table_prefix=", 1)[1]
        found = conn.execute("SELECT to_regclass(%s)", (f"{prefix}kv",)).fetchone()
    assert found == (None,)
    Store.open(tmp_path, store_url=pg_url).close()
    assert Store.exists(tmp_path, pg_url) is True


def test_two_stores_on_one_database_share_records_feed_and_replica(tmp_path, pg_url):
    with (
        Store.open(tmp_path / "a", store_url=pg_url) as a,
        Store.open(tmp_path / "b", store_url=pg_url) as b,
    ):
        a.put(STRUCTURAL, file_key("r", "x"), 1)
        assert b.get(STRUCTURAL, file_key("r", "x")).value == 1
        b.put(STRUCTURAL, file_key("r", "y"), 2)
        assert [c.key for c in a.changes()] == [file_key("r", "x"), file_key("r", "y")]
        assert a.replica == b.replica  # one store, one replica id: the HLC is shared too
        assert a.get(STRUCTURAL, file_key("r", "y")).hlc > a.get(STRUCTURAL, file_key("r", "x")).hlc


@pytest.mark.timeout(180)
def test_claims_issue_every_fencing_token_once_across_processes(tmp_path, pg_url):
    with Store.open(tmp_path, store_url=pg_url) as store:
        store.put(STRUCTURAL, repo_key("r"), {"repoId": "r", "root": "/nowhere"})
        key = MemoryService(store).remember("r", "todo", title="shared").key
    workers = [
        subprocess.Popen(
            [sys.executable, WORKER, "claims", pg_url, str(w), "15", key],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(4)
    ]
    tokens = []
    for proc in workers:
        out, err = proc.communicate(timeout=170)
        assert proc.returncode == 0, err
        tokens += [int(line.split()[1]) for line in out.splitlines() if line.startswith("TOKEN")]
    # Each claim got the token one above the highest ever issued: 60 claims, tokens 1..60.
    assert sorted(tokens) == list(range(1, 61))
    with Store.open(tmp_path, store_url=pg_url) as store:
        doc = store.get(MEMORY, key).doc
        assert doc.maxima["fence"] == 60
        assert doc.fields["body"].endswith("token 60")  # the last write came with the newest token
        with pytest.raises(StaleTokenError):
            MemoryService(store).update(key, fields={"body": "late"}, fencing_token=59)


@pytest.fixture
def own_cluster():
    """A cluster of this test alone (it gets killed)."""
    with PostgresCluster() as cluster:
        yield cluster


class Writer(threading.Thread):
    """Writes one record after another, keeping what was acknowledged and what failed."""

    def __init__(self, store: Store) -> None:
        super().__init__(daemon=True)
        self.store = store
        self.acked: list[int] = []
        self.errors: list[StoreUnavailableError] = []
        self.stop = threading.Event()
        self.progress = threading.Condition()

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            try:
                self.store.put(STRUCTURAL, file_key("r", f"f{i:06}"), i)
                self.acked.append(i)
            except StoreUnavailableError as exc:
                self.errors.append(exc)
            i += 1
            with self.progress:
                self.progress.notify_all()

    def wait_for(self, predicate, timeout: float = 60) -> None:
        with self.progress:
            assert self.progress.wait_for(predicate, timeout=timeout)


@pytest.mark.timeout(180)
def test_a_killed_database_fails_writes_cleanly_and_recovers_with_every_acknowledged_write(
    tmp_path, own_cluster
):
    writes = Store.open(tmp_path, store_url=own_cluster.store_url("o_", retry_seconds=0.3))
    reads = Store.open(tmp_path, store_url=own_cluster.store_url("o_", retry_seconds=60))
    writer = Writer(writes)
    writer.start()
    try:
        writer.wait_for(lambda: len(writer.acked) >= 30)
        own_cluster.kill()  # SIGKILL mid-write: no shutdown, no checkpoint
        writer.wait_for(lambda: len(writer.errors) >= 2)
        acked_before_restart = len(writer.acked)
        assert {e.code for e in writer.errors} == {"store.unavailable"}
        # A read during the outage waits (retries) and answers once the database is back.
        answer: list[object] = []
        reader = threading.Thread(
            target=lambda: answer.append(reads.get(STRUCTURAL, file_key("r", "f000000")))
        )
        reader.start()
        own_cluster.restart()
        reader.join(timeout=60)
        assert answer and answer[0].value == 0
        # The backend reconnects by itself: writes are acknowledged again.
        writer.wait_for(lambda: len(writer.acked) >= acked_before_restart + 30)
    finally:
        writer.stop.set()
        writer.join(timeout=60)
    # Nothing acknowledged was lost, and no failed write half-landed in the feed.
    keys = set(reads.keys(STRUCTURAL, "repo/r/"))
    assert {file_key("r", f"f{i:06}") for i in writer.acked} <= keys
    assert reads.last_seq() == len(keys)
    writes.close()
    reads.close()


@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_readiness_is_503_while_the_database_is_down_and_200_again_after(
    tmp_path, own_cluster
):
    settings = Settings(
        data_dir=tmp_path / "data",
        store_url=own_cluster.store_url("h_", retry_seconds=0.5),
        embedder="off",
    )
    with Workspace.open(settings) as workspace:
        app = create_app(workspace, build_server(workspace, settings))
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            up = await http.get("/health/ready")
            assert up.status_code == 200
            assert up.json()["store"]["engine"] == "postgresql"
            assert up.json()["store"]["reachable"] is True
            own_cluster.kill()
            down = await http.get("/health/ready")
            assert down.status_code == 503
            assert down.json()["code"] == "store.unavailable"
            assert down.json()["store"] == {
                "engine": "postgresql",
                "reachable": False,
                "latencyMs": None,
            }
            own_cluster.restart()
            again = await http.get("/health/ready")
            assert again.status_code == 200
            assert again.json()["store"]["reachable"] is True
