"""Two servers sharing one PostgreSQL store, each with a data directory of its own.

What is written through server A is found through server B: by keyword at once, and
semantically once B's change-feed follower has embedded it into B's own planes. A server
killed in the middle of a first index pass leaves a run the other server resumes by itself.
"""

import itertools
import time
from pathlib import Path
from typing import Any

import httpx2
import psutil
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from repocontext.mcp.client import http_client
from repocontext.settings import Settings
from repocontext.testing import make_repo, start_http_server, tool_ok
from repocontext.workspace import Workspace

DEADLINE_S = 120.0
STATIC = {"REPOCONTEXT_EMBEDDER": "static", "HF_HUB_OFFLINE": "1"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "balancer-test", "version": "1"},
    },
}


async def _until(client: Any, tool: str, arguments: dict[str, Any], wanted: Any) -> dict[str, Any]:
    """Call ``tool`` until ``wanted`` accepts its result (errors meanwhile are retried)."""
    started = time.monotonic()
    while True:
        result = await client.call_tool(tool, arguments)
        content = None if result.is_error else result.structured_content
        if content is not None and wanted(content):
            return dict(content)
        assert time.monotonic() - started < DEADLINE_S, f"{tool} never answered as wanted"


def _seeded(tmp_path: Path, pg_url: str, *, indexed: bool) -> Path:
    """A repository ``demo`` registered (and ``indexed``) in the store at ``pg_url``."""
    repo = make_repo(tmp_path / "ws" / "demo", {"src/db.py": "def migrate(s):\n    return s\n"})
    seed = Settings(
        data_dir=tmp_path / "seed", workspace_root=repo.parent, embedder="off", store_url=pg_url
    )
    with Workspace.open(seed) as workspace:
        if indexed:
            workspace.bootstrap(repo, "demo", background=False)
        else:
            workspace.register_repo(repo, "demo")
    return repo


def _first(key: str, value: str) -> Any:
    return lambda content: bool(content["hits"]) and content["hits"][0][key] == value


@pytest.mark.anyio
@pytest.mark.timeout(300)
async def test_a_note_and_a_file_written_through_server_a_are_found_through_server_b(
    tmp_path: Path, pg_url: str
) -> None:
    repo = _seeded(tmp_path, pg_url, indexed=True)
    shared = ["--store-url", pg_url]
    server_a, base_a = start_http_server(tmp_path / "a", repo.parent, extra_args=shared, env=STATIC)
    server_b, base_b = start_http_server(tmp_path / "b", repo.parent, extra_args=shared, env=STATIC)
    try:
        async with http_client(f"{base_a}/mcp") as a, http_client(f"{base_b}/mcp") as b:
            note = tool_ok(
                await a.call_tool(
                    "repocontext_remember",
                    {"repoId": "demo", "topic": "gotchas", "title": "Eviction runs on every write"},
                )
            )
            memory = {"repoId": "demo", "query": "eviction", "scope": "memory", "mode": "keyword"}
            hits = tool_ok(await b.call_tool("repocontext_search", memory))["hits"]
            assert hits[0]["key"] == note["key"]  # at once: B's keyword index reads the feed
            (repo / "src" / "quokka.py").write_text("def quokka_handler():\n    return 2\n")
            tool_ok(await a.call_tool("repocontext_add_repo", {"path": "demo"}))  # re-index
            await _until(
                a,
                "repocontext_index_status",
                {"repoId": "demo"},
                lambda status: status["status"] == "completed" and status["attempt"] == 2,
            )
            code = {"repoId": "demo", "query": "quokka handler", "mode": "keyword"}
            hits = tool_ok(await b.call_tool("repocontext_search", code))["hits"]
            assert hits[0]["path"] == "src/quokka.py"
            # No word in common with the note: only vectors find it, and B answers only from
            # planes its own data directory holds (its follower embedded them).
            semantic = {**memory, "query": "purge stale cached items", "mode": "semantic"}
            found = await _until(b, "repocontext_search", semantic, _first("key", note["key"]))
            assert found["hits"][0]["reasons"] == ["semantic"]
            assert (tmp_path / "b" / "vectors").is_dir()
    finally:
        for server in (server_a, server_b):
            server.terminate()
            server.wait(60)


@pytest.mark.anyio
@pytest.mark.timeout(300)
async def test_one_mcp_session_works_through_two_servers_behind_a_round_robin_balancer(
    tmp_path: Path, pg_url: str
) -> None:
    repo = _seeded(tmp_path, pg_url, indexed=False)
    shared = ["--store-url", pg_url]
    server_a, base_a = start_http_server(tmp_path / "a", repo.parent, extra_args=shared)
    server_b, base_b = start_http_server(tmp_path / "b", repo.parent, extra_args=shared)
    ports = itertools.cycle([int(base_a.rsplit(":", 1)[1]), int(base_b.rsplit(":", 1)[1])])
    answered: set[str] = set()

    async def balance(request: httpx2.Request) -> None:  # each request to the next server
        request.url = request.url.copy_with(port=next(ports))

    async def record(response: httpx2.Response) -> None:
        answered.add(str(response.request.url.port))

    hooks = {"request": [balance], "response": [record]}
    headers = {"Accept": "application/json, text/event-stream"}
    try:
        async with httpx2.AsyncClient(timeout=30, headers=headers) as raw:
            # A session opened on A; a call of it sent to B is answered, not "Session not found".
            opened = await raw.post(f"{base_a}/mcp", json=INITIALIZE)
            session = {"mcp-session-id": opened.headers["mcp-session-id"]}
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
            call["params"] = {"name": "repocontext_list_repos", "arguments": {}}
            answer = await raw.post(f"{base_b}/mcp", json=call, headers=session)
            assert answer.status_code == 200 and '"repoId\\":\\"demo' in answer.text
        async with (
            httpx2.AsyncClient(timeout=30, event_hooks=hooks) as http,
            Client(streamable_http_client(f"{base_a}/mcp", http_client=http)) as client,
        ):
            for i in range(4):  # the session was opened on one server; calls land on both
                note = {"repoId": "demo", "topic": "t", "title": f"balanced note {i}"}
                key = tool_ok(await client.call_tool("repocontext_remember", note))["key"]
                found = tool_ok(await client.call_tool("repocontext_recall", {"key": key}))
                assert found["fields"]["title"] == f"balanced note {i}"
        assert len(answered) == 2
    finally:
        for server in (server_a, server_b):
            server.terminate()
            server.wait(60)


def _generated(count: int) -> dict[str, str]:
    files: dict[str, str] = {}
    for i in range(count):
        files[f"pkg{i % 20}/__init__.py"] = ""
        files[f"pkg{i % 20}/mod{i}.py"] = (
            f"from pkg{(i + 1) % 20} import mod{(i + 1) % count}\n\n\n"
            f"def func_{i}(x):\n    return x + {i}\n\n\nclass Thing{i}:\n"
            f"    def method(self):\n        return func_{i}(1)\n"
        )
    return files


@pytest.mark.anyio
@pytest.mark.timeout(300)
async def test_a_first_index_pass_whose_server_was_killed_is_resumed_by_the_other_server(
    tmp_path: Path, pg_url: str
) -> None:
    repo = make_repo(tmp_path / "ws" / "gen", _generated(800))
    shared = ["--store-url", pg_url]
    server_a, base_a = start_http_server(tmp_path / "a", repo.parent, extra_args=shared)
    server_b, base_b = start_http_server(tmp_path / "b", repo.parent, extra_args=shared)
    try:
        async with http_client(f"{base_a}/mcp") as a:
            tool_ok(await a.call_tool("repocontext_add_repo", {"path": "gen"}))
            await _until(
                a,
                "repocontext_index_status",
                {"repoId": "gen"},
                lambda status: status["counters"].get("filesRead", 0) >= 100,
            )
        # A dies mid-pass with its parser processes, as in a crash.
        doomed = [server_a, *psutil.Process(server_a.pid).children(recursive=True)]
        for process in doomed:
            process.kill()
        server_a.wait(30)
        async with http_client(f"{base_b}/mcp") as b:
            done = await _until(
                b,
                "repocontext_index_status",
                {"repoId": "gen"},
                lambda status: status["status"] == "completed",
            )
            assert done["attempt"] == 2  # B resumed A's run, not a run of its own from scratch
            assert done["counters"]["filesUnchanged"] > 0  # what A had written was kept
            hits = tool_ok(
                await b.call_tool("repocontext_search", {"repoId": "gen", "query": "func_777"})
            )["hits"]
            assert hits[0]["path"] == "pkg17/mod777.py"
    finally:
        for server in (server_a, server_b):
            if server.poll() is None:
                server.terminate()
                server.wait(60)
