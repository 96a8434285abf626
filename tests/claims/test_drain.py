"""Eight worker processes drain a 1,000-item backlog through the real HTTP MCP server while the
test kills some of them mid-item: every item ends done, and never by a superseded holder."""

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from repocontext.settings import Settings
from repocontext.store import MEMORY
from repocontext.store.keys import family_prefix
from repocontext.testing import start_http_server
from repocontext.workspace import Workspace

ITEMS = 1000
WORKERS = 8
KILLED = 3


@pytest.mark.timeout(600)
def test_eight_workers_drain_a_backlog_through_kills_and_takeovers(tmp_path: Path):
    repo = tmp_path / "ws" / "proj"
    repo.mkdir(parents=True)
    (repo / "a.py").write_text("x = 1\n")
    data = tmp_path / "data"
    settings = Settings(data_dir=data, workspace_root=repo.parent, embedder="off")
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, "proj", background=False)
        for i in range(ITEMS):
            workspace.remember("proj", "backlog", title=f"item {i}")
    server, base = start_http_server(data, repo.parent)
    worker = Path(__file__).with_name("drain_worker.py")
    workers = []
    try:
        workers.extend(
            subprocess.Popen(
                [sys.executable, str(worker), f"{base}/mcp", f"w{i}", "40"],
                stdout=subprocess.PIPE,
                text=True,
            )
            for i in range(WORKERS)
        )
        # Kill some workers once each holds an item (it printed a claim and nothing after).
        killed = []
        for proc in workers[:KILLED]:
            line = proc.stdout.readline()
            assert "claimed" in line, line
            proc.send_signal(signal.SIGKILL)
            killed.append(json.loads(line)["claimed"])
        reports = []
        for proc in workers[KILLED:]:
            out, _ = proc.communicate(timeout=540)
            assert proc.returncode == 0, out
            reports.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in workers:
            if proc.poll() is None:
                proc.kill()
        server.terminate()
        server.wait(30)
    with Workspace.open(settings) as workspace:
        records = list(
            workspace.store.iter_records(MEMORY, family_prefix("proj", "mem", "backlog"))
        )
        assert len(records) == ITEMS
        takeovers = 0
        for record in records:
            doc = record.doc
            fence = doc.maxima["fence"]
            assert doc.fields.get("status") == "done", record.key
            # The result was written by the newest holder: a superseded one's write never lands.
            assert doc.fields["body"].endswith(f"token {fence}"), (record.key, doc.fields, fence)
            takeovers += fence > 1
    claims = sum(r["claims"] for r in reports)
    refused = sum(r["refused"] for r in reports)
    print(
        f"\ndrain: items {ITEMS}, workers {WORKERS} ({KILLED} killed mid-item), claims {claims}"
        f" by survivors, takeovers {takeovers}, refused stale writes {refused}"
    )
    assert takeovers >= KILLED  # the killed workers' items were taken over
    assert refused >= 1  # stalled workers came back late and were refused
    # No item is finished twice: a done item is never handed out again.
    assert sum(r["done"] for r in reports) <= ITEMS
