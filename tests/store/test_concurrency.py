import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from repocontext.store import MEMORY, STRUCTURAL, DocPatch
from repocontext.store.keys import file_key, mem_key

WORKER = str(Path(__file__).with_name("store_worker.py"))


@pytest.fixture
def target(tmp_path, backend, request):
    """What a worker process opens: the data directory (LMDB) or the store URL."""
    if backend == "postgresql":
        return request.getfixturevalue("pg_url")
    return str(tmp_path / "data")


def spawn(*args):
    return subprocess.Popen(
        [sys.executable, WORKER, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.timeout(180)
@pytest.mark.parametrize("pad", [0, 20_000])
def test_four_processes_writing_disjoint_fields_lose_no_field(target, open_store, backend, pad):
    open_store(map_bytes=1 << 20).close()
    records = 150
    workers = [spawn("fields", target, w, records, pad) for w in range(4)]
    for proc in workers:
        _out, err = proc.communicate(timeout=170)
        assert proc.returncode == 0, err
    with open_store() as store:
        for i in range(records):
            doc = store.get(MEMORY, mem_key("r", "shared", f"e{i}")).doc
            assert doc.fields == {f"w{w}": i for w in range(4)}
            assert doc.sets["tags"] == {f"t{w}" for w in range(4)}
        assert store.last_seq() == 4 * records * (2 if pad else 1)
        if pad:
            assert store.count(STRUCTURAL, "repo/r/file/pad/") == 4 * records
            assert backend == "postgresql" or store.stats().map_bytes > 1 << 20


@pytest.mark.timeout(120)
def test_threads_sharing_one_store_converge_without_lost_updates(open_store):
    with open_store(map_bytes=1 << 20) as store:
        start = threading.Barrier(6)
        errors = []

        def writer(n):
            try:
                start.wait(timeout=30)
                for i in range(100):
                    key = mem_key("r", "t", f"e{i % 10}")
                    store.merge_fields(MEMORY, key, DocPatch(add={"tags": [f"{n}-{i}"]}))
                    store.put(STRUCTURAL, file_key("r", f"{n}/{i}"), "x" * 2000)
                    store.get(STRUCTURAL, file_key("r", f"{n}/{i}"))
            except Exception as exc:  # collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=100)
        assert not errors
        tags = set()
        for i in range(10):
            tags |= store.get(MEMORY, mem_key("r", "t", f"e{i}")).doc.sets["tags"]
        assert len(tags) == 600
        assert store.count(STRUCTURAL) == 600


@pytest.mark.timeout(120)
def test_sigkill_mid_batch_keeps_every_acknowledged_write(target, open_store):
    proc = spawn("batches", target, 250)
    acked = []
    for line in proc.stdout:
        if line.startswith("ACK"):
            acked.append(line.split())
        if len(acked) >= 6:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    last_acked = acked[-1][2]
    with open_store() as store:
        assert store.get(STRUCTURAL, last_acked) is not None
        count = store.count(STRUCTURAL)
        assert count >= 6 * 250
        assert count % 250 == 0  # whole commits only: no partial batch survived
        for i in range(0, count, 97):
            assert store.get(STRUCTURAL, file_key("r", f"f{i:08}")).value["i"] == i


def test_an_exclusive_lock_excludes_other_processes_and_dies_with_its_holder(
    tmp_path, target, open_store, run_lock_holder
):
    open_store().close()
    url = target if "://" in target else ""
    with run_lock_holder(tmp_path / "data", "demo", store_url=url) as holder, open_store() as store:
        with store.exclusive("index:demo") as held:
            assert held is False  # another process holds it
        with store.exclusive("index:other") as held:
            assert held is True  # locks are per name
        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
        with store.exclusive("index:demo") as held:
            assert held is True  # the kernel (or the database) dropped it with the killed holder
