"""Eight worker processes drain one backlog through two servers sharing a PostgreSQL store,
while the test SIGKILLs three workers mid-item and then one of the servers mid-drain: every
item ends done exactly once, every acknowledged write is in the store, and no write of a
superseded holder (an out-of-fence write) landed."""

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from repocontext.settings import Settings
from repocontext.store import MEMORY, Store
from repocontext.store.keys import family_prefix
from repocontext.testing import start_http_server
from repocontext.workspace import Workspace

ITEMS = 600
WORKERS = 8
KILLED = 3
PREFIX = family_prefix("proj", "mem", "backlog")


def _done(url: str, data: Path) -> int:
    with Store.open(data, store_url=url) as store:
        return sum(
            record.doc.fields.get("status") == "done"
            for record in store.iter_records(MEMORY, PREFIX)
        )


@pytest.mark.timeout(600)
def test_eight_workers_on_two_servers_drain_a_backlog_through_worker_and_server_kills(
    tmp_path: Path, pg_url: str
):
    repo = tmp_path / "ws" / "proj"
    repo.mkdir(parents=True)
    (repo / "a.py").write_text("x = 1\n")
    settings = Settings(
        data_dir=tmp_path / "seed", workspace_root=repo.parent, embedder="off", store_url=pg_url
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, "proj", background=False)
        for i in range(ITEMS):
            workspace.remember("proj", "backlog", title=f"item {i}")
    store_args = ["--store-url", pg_url]
    server_a, base_a = start_http_server(tmp_path / "a", repo.parent, extra_args=store_args)
    server_b, base_b = start_http_server(tmp_path / "b", repo.parent, extra_args=store_args)
    worker = Path(__file__).with_name("failover_drain_worker.py")
    # Half the workers start on each server; each falls back to the other one.
    routes = [f"{base_a}/mcp,{base_b}/mcp", f"{base_b}/mcp,{base_a}/mcp"]
    workers = [
        subprocess.Popen(
            [sys.executable, str(worker), routes[i % 2], f"w{i}", "40"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(WORKERS)
    ]
    try:
        for proc in workers[:KILLED]:  # killed once each holds an item
            line = proc.stdout.readline()
            assert "claimed" in line, line
            proc.send_signal(signal.SIGKILL)
        deadline = time.monotonic() + 300
        while _done(pg_url, tmp_path / "probe") < ITEMS // 3:
            assert time.monotonic() < deadline, "the drain made no progress"
            time.sleep(0.2)
        server_b.send_signal(signal.SIGKILL)  # mid-drain: its workers move to server A
        server_b.wait(30)
        reports = []
        for proc in workers[KILLED:]:
            out, _ = proc.communicate(timeout=400)
            assert proc.returncode == 0, out
            reports.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in [*workers, server_b]:
            if proc.poll() is None:
                proc.kill()
        server_a.terminate()
        server_a.wait(30)
    with Store.open(tmp_path / "probe", store_url=pg_url) as store:
        records = {r.key: r for r in store.iter_records(MEMORY, PREFIX)}
    assert len(records) == ITEMS
    stale = [
        key
        for key, record in records.items()
        if not record.doc.fields["body"].endswith(f"token {record.doc.maxima['fence']}")
    ]
    assert [k for k, r in records.items() if r.doc.fields.get("status") != "done"] == []
    assert stale == []  # every result was written by the item's newest holder
    acked = [(key, body) for report in reports for key, body in report["acked"].items()]
    lost = [key for key, body in acked if records[key].doc.fields["body"] != body]
    assert lost == []  # every acknowledged write is in the store, as acknowledged
    twice = [key for key, n in Counter(key for key, _ in acked).items() if n > 1]
    assert twice == []  # no item was finished twice
    failovers = sum(r["failovers"] for r in reports)
    refused = sum(r["refused"] for r in reports)
    takeovers = sum(r.doc.maxima["fence"] > 1 for r in records.values())
    print(
        f"\ntwo-server drain: items {ITEMS}, workers {WORKERS} ({KILLED} killed), server B "
        f"killed mid-drain, failovers {failovers}, takeovers {takeovers}, refused {refused}, "
        f"acknowledged {len(acked)}"
    )
    assert failovers >= 1  # the workers of server B moved to server A
    assert takeovers >= KILLED
