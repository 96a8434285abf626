"""`repocontext serve --transport http --workers 2`: one port, two worker processes, one store.

A real server process (the supervisor) and the real MCP client over HTTP: calls are answered
by both workers (each response names its process in `X-RepoContext-Worker`), what one worker
writes the other finds, a worker killed with SIGKILL is replaced, and SIGTERM stops every
process.
"""

import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from repocontext.settings import Settings
from repocontext.testing import make_repo, start_http_server, tool_ok
from repocontext.workspace import Workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]

DEADLINE_S = 60.0


def word(number: int) -> str:
    """A distinct made-up word per number (letters only: one search term)."""
    letters = ""
    while True:
        number, digit = divmod(number, 26)
        letters += chr(ord("a") + digit)
        if not number:
            return f"zorb{letters}"


def children(pid: int) -> set[int]:
    """The live child processes of ``pid`` (from /proc)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text()
        found |= {int(child) for child in text.split()}
    return {child for child in found if _alive(child)}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def workers_of(pid: int) -> set[int]:
    """The worker processes of the supervisor ``pid`` (not multiprocessing's tracker)."""
    return {
        child
        for child in children(pid)
        if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()
    }


@asynccontextmanager
async def recording_client(url: str, seen: set[str]) -> AsyncIterator[Any]:
    """The real MCP client; the worker pid of every response it gets lands in ``seen``."""

    async def record(response: httpx2.Response) -> None:
        seen.add(response.headers.get("x-repocontext-worker", "none"))

    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(timeout=timeout, event_hooks={"response": [record]}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def round_trip(base: str, name: str, answered: set[str]) -> None:
    """Remember a note through one client; find, recall it and search code through another."""
    async with recording_client(f"{base}/mcp", answered) as writer:
        args = {"repoId": "proj", "topic": "notes", "title": f"{name} migration"}
        key = tool_ok(await writer.call_tool("repocontext_remember", args))["key"]
    async with recording_client(f"{base}/mcp", answered) as reader:
        query = {"repoId": "proj", "query": name, "scope": "memory"}
        hits = tool_ok(await reader.call_tool("repocontext_search", query))["hits"]
        assert [hit["key"] for hit in hits] == [key], hits
        recalled = tool_ok(await reader.call_tool("repocontext_recall", {"key": key}))
        assert recalled["fields"]["title"] == f"{name} migration"
        code = {"repoId": "proj", "query": "compute total"}
        found = tool_ok(await reader.call_tool("repocontext_search", code))["hits"]
        assert found[0]["path"] == "app/core.py"


async def live_pid(base: str) -> str:
    """The worker that answers ``/health/live`` on a new connection."""
    async with httpx2.AsyncClient(timeout=5) as http:
        response = await http.get(f"{base}/health/live")
    return str(response.headers["X-RepoContext-Worker"])


@pytest.fixture
def served(tmp_path: Path) -> Any:
    root = make_repo(
        tmp_path / "ws" / "proj", {"app/core.py": "def compute_total():\n    return 1\n"}
    )
    data = tmp_path / "data"
    with Workspace.open(Settings(data_dir=data, workspace_root=root.parent)) as workspace:
        workspace.bootstrap(root, "proj", background=False)
    log = tmp_path / "server.log"
    server, base = start_http_server(data, root.parent, workers=2, stderr=log)
    try:
        yield server, base, log
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(30)


async def test_two_workers_answer_mcp_calls_share_one_store_and_stop_together(
    served: Any,
) -> None:
    server, base, log = served
    assert "workers:      2 processes" in log.read_text()
    async with httpx2.AsyncClient(timeout=10) as http:
        assert (await http.get(f"{base}/health/ready")).status_code == 200
    answered: set[str] = set()
    started = time.monotonic()
    rounds = 0
    # Each client is new connections the kernel hands to either worker; clients in flight
    # together keep one worker busy while the other accepts. Write through one client and
    # read through another, until both workers have answered.
    while len(answered) < 2:
        assert time.monotonic() - started < DEADLINE_S, f"only workers {answered} answered"
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(round_trip, base, word(rounds), answered)
                rounds += 1
    workers = workers_of(server.pid)
    assert {str(pid) for pid in workers} == answered and len(workers) == 2

    victim = next(iter(workers))
    os.kill(victim, signal.SIGKILL)
    while True:  # the supervisor starts another worker in its place
        assert time.monotonic() - started < 2 * DEADLINE_S, "the killed worker was not replaced"
        now = workers_of(server.pid)
        if victim not in now and len(now) == 2:
            break
        await anyio.sleep(0.05)
    replacement = (now - workers).pop()
    while await live_pid(base) != str(replacement):  # and it serves the port
        assert time.monotonic() - started < 2 * DEADLINE_S, "the replacement never answered"

    server.send_signal(signal.SIGTERM)
    assert server.wait(60) == 0
    assert not any(_alive(pid) for pid in now), "a worker outlived the supervisor"
    assert "starting it again" in log.read_text()
    with pytest.raises(httpx2.ConnectError):  # nothing is left to answer the port
        await live_pid(base)


@pytest.mark.timeout(120)
def test_a_worker_that_cannot_start_stops_the_server_with_its_own_error_before_the_banner(
    tmp_path: Path,
) -> None:
    archive = tmp_path / "archive"
    archive.mkdir()
    (archive / "memory.rcarch").write_bytes(b"RCARCH01 cut short")
    cli = str(Path(sys.executable).parent / "repocontext")
    args = [cli, "serve", "--transport", "http", "--port", "0", "--workers", "2"]
    args += ["--data-dir", str(tmp_path / "data"), "--workspace-root", str(tmp_path)]
    env = {**os.environ, "REPOCONTEXT_EMBEDDER": "off", "REPOCONTEXT_ARCHIVE_DIR": str(archive)}
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=90)
    assert done.returncode == 1, done.stderr
    assert "error [archive.corrupt]" in done.stderr  # worker 0's error, not a generic one
    assert "MCP endpoint" not in done.stderr
