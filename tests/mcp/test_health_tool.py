import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from repocontext.auth import FULL_ACCESS, granted
from repocontext.errors import NoWorkspaceRootError
from repocontext.mcp import build_server, error_text, map_errors
from repocontext.settings import Settings
from repocontext.testing import make_repo
from repocontext.workspace import Workspace

pytestmark = pytest.mark.anyio


FILES = {"app.py": "print('hi')\n"}


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    settings = Settings(data_dir=tmp_path / "data", workspace_root=tmp_path)
    with Workspace.open(settings) as ws:
        yield ws


def _structured(result: CallToolResult) -> dict[str, object]:
    assert not result.is_error
    content = result.structured_content
    assert isinstance(content, dict)
    return content


def _error(result: object) -> dict[str, str]:
    assert isinstance(result, CallToolResult) and result.is_error
    [block] = result.content
    assert isinstance(block, TextContent)
    body = json.loads(block.text)
    assert isinstance(body, dict)
    return body


# -- in memory ---------------------------------------------------------------------------


@pytest.mark.timeout(60)
async def test_health_with_no_repository_reports_nothing_registered(
    workspace: Workspace,
) -> None:
    async with Client(build_server(workspace, workspace.settings)) as client:
        health = _structured(await client.call_tool("repocontext_health", {}))
    assert health == {
        "available": True,
        "group": "repocontext",
        "status": "ok",
        "retrievalReady": True,
        "retrievalPhase": "nothing_registered",
        "repositories": 0,
        "repository": None,
    }


@pytest.mark.timeout(60)
async def test_health_of_a_registered_repo_reports_building(
    workspace: Workspace, tmp_path: Path
) -> None:
    workspace.register_repo(make_repo(tmp_path / "proj", FILES))
    async with Client(build_server(workspace, workspace.settings)) as client:
        health = _structured(await client.call_tool("repocontext_health", {"repoId": "proj"}))
    assert (health["retrievalPhase"], health["retrievalReady"]) == ("building", False)
    assert health["repository"] == {
        "verdict": "building",
        "reason": "registered; its first index pass has not finished",
        "files": 0,
        "vectorsIndexed": 0,
        "indexedAt": None,
    }


@pytest.mark.timeout(60)
async def test_health_of_an_unknown_repo_is_a_clean_result(workspace: Workspace) -> None:
    async with Client(build_server(workspace, workspace.settings)) as client:
        health = _structured(await client.call_tool("repocontext_health", {"repoId": "nope"}))
    repository = health["repository"]
    assert isinstance(repository, dict)
    assert repository["verdict"] == "unknown"


@pytest.mark.timeout(60)
async def test_read_tools_are_listed_read_only_with_an_output_schema(
    workspace: Workspace,
) -> None:
    async with Client(build_server(workspace, workspace.settings)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {
        "repocontext_health",
        "repocontext_list_repos",
        "repocontext_index_status",
        "repocontext_outline",
        "repocontext_related",
        "repocontext_changed",
        "repocontext_search",
        "repocontext_context",
        "repocontext_stats",
        "repocontext_read",
        "repocontext_symbol",
        "repocontext_grep",
        "repocontext_map",
        "repocontext_recall",
        "repocontext_scan",
        "repocontext_list_topics",
        "repocontext_neighbors",
        "repocontext_claim_status",
    }
    for name, tool in tools.items():
        writes = name == "repocontext_context"  # with a session: the receipts it sent
        assert tool.annotations is not None and tool.annotations.read_only_hint is not writes
        assert tool.output_schema is not None
        assert tool.description
    assert "Next:" in (tools["repocontext_health"].description or "")
    assert "repoId" in tools["repocontext_health"].input_schema["properties"]


@pytest.mark.timeout(60)
async def test_list_repos_returns_registered_repos_in_id_order(
    workspace: Workspace, tmp_path: Path
) -> None:
    workspace.register_repo(make_repo(tmp_path / "zeta", FILES))
    workspace.register_repo(make_repo(tmp_path / "alpha", FILES))
    async with Client(build_server(workspace, workspace.settings)) as client:
        listing = _structured(await client.call_tool("repocontext_list_repos", {}))
    assert listing["repos"] == [
        {
            "repoId": name,
            "root": str((tmp_path / name).resolve()),
            "files": 0,
            "lastIngestedAt": None,
            "indexedCommit": None,
            "vectors": 0,
        }
        for name in ("alpha", "zeta")
    ]


@pytest.mark.timeout(60)
async def test_a_closed_store_reaches_the_model_as_a_coded_tool_error(
    workspace: Workspace,
) -> None:
    server = build_server(workspace, workspace.settings)
    workspace.close()
    async with Client(server) as client:
        body = _error(await client.call_tool("repocontext_health", {}))
    assert body["code"] == "store.unavailable"
    assert set(body) == {"code", "message", "hint"}


def test_map_errors_turns_our_errors_into_json_code_message_hint() -> None:
    def refuse() -> None:
        raise NoWorkspaceRootError("no root")

    with granted(FULL_ACCESS):
        assert _error(map_errors(refuse)()) == NoWorkspaceRootError("no root").to_dict()


def test_map_errors_hides_unexpected_failures_behind_internal_error() -> None:
    def crash() -> None:
        raise KeyError("secret")

    with granted(FULL_ACCESS):
        body = _error(map_errors(crash)())
    assert body["code"] == "internal.error"
    assert "secret" not in body["message"]


def test_map_errors_passes_results_through() -> None:
    with granted(FULL_ACCESS):
        assert map_errors(lambda: 42)() == 42
    assert error_text("a", "b", "c") == '{"code": "a", "message": "b", "hint": "c"}'


# -- stdio -------------------------------------------------------------------------------


def _stdio(tmp_path: Path, *extra: str) -> StdioServerParameters:
    args = ["-m", "repocontext", "serve", "--transport", "stdio"]
    return StdioServerParameters(
        command=sys.executable,
        args=[*args, "--data-dir", str(tmp_path / "data"), *extra],
        cwd=str(tmp_path),
    )


@pytest.mark.timeout(90)
async def test_health_over_stdio_reports_nothing_registered(tmp_path: Path) -> None:
    async with Client(_stdio(tmp_path)) as client:
        health = _structured(await client.call_tool("repocontext_health", {}))
    assert health["retrievalPhase"] == "nothing_registered"


@pytest.mark.timeout(90)
async def test_health_over_stdio_moves_from_building_to_keyword_only_after_repo_flag(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "proj", FILES)
    async with Client(_stdio(tmp_path, "--repo", str(repo))) as client:
        phases = []
        for _ in range(600):
            health = _structured(await client.call_tool("repocontext_health", {"repoId": "proj"}))
            phases.append(health["retrievalPhase"])
            if health["retrievalPhase"] in ("keyword_only", "serving"):
                break
            await anyio.sleep(0.05)
        listing = _structured(await client.call_tool("repocontext_list_repos", {}))
    # Indexed: keyword search at least. The embedding pass (the real model, loaded in the
    # background) may also have finished by the first poll after the index did, on a busy
    # machine: then the phase goes from building straight to serving.
    assert set(phases) <= {"building", "keyword_only", "serving"}
    assert phases[-1] in ("keyword_only", "serving")
    repository = health["repository"]
    assert isinstance(repository, dict) and repository["verdict"] == phases[-1]
    [entry] = listing["repos"]
    assert entry["repoId"] == "proj"
    assert entry["root"] == str(repo.resolve())
    assert entry["files"] == 1
    assert entry["lastIngestedAt"] is not None


# -- streamable HTTP -------------------------------------------------------------------


_SERVE_HTTP = (
    *(sys.executable, "-m", "repocontext", "serve", "--transport", "http", "--workers", "1"),
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class _HttpServer:
    """`repocontext serve --transport http` in a subprocess, gated on its startup line."""

    def __init__(self, tmp_path: Path, *extra: str, port: int | None = None) -> None:
        self.port = _free_port() if port is None else port
        self.stderr: list[str] = []
        self.proc = subprocess.Popen(
            [*_SERVE_HTTP, "--port", str(self.port), "--data-dir", str(tmp_path / "data"), *extra],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        started = threading.Event()
        self._drain = threading.Thread(target=self._read, args=(started,), daemon=True)
        self._drain.start()
        # Bounded: the test's timeout marker is the outer bound; this one gives a clear message.
        assert started.wait(60), "server did not start:\n" + "".join(self.stderr)
        assert self.proc.poll() is None, "server exited:\n" + "".join(self.stderr)
        # The URL the banner names (with --port 0, the port the system picked).
        banner = next(line for line in self.stderr if "MCP endpoint:" in line)
        self.url = banner.split("MCP endpoint: ", 1)[1].strip().removesuffix("/mcp")

    def _read(self, started: threading.Event) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)
            if "Application startup complete" in line:
                started.set()
        started.set()  # the process ended; the waiter checks poll()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=20)
        self._drain.join(timeout=20)


@pytest.mark.timeout(120)
def test_port_zero_serves_on_the_port_the_banner_names(tmp_path: Path) -> None:
    server = _HttpServer(tmp_path, port=0)
    try:
        assert not server.url.endswith(":0")
        _wait_live(server.url)
    finally:
        server.stop()


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[_HttpServer]:
    server = _HttpServer(tmp_path)
    yield server
    server.stop()


def _wait_live(url: str) -> None:
    with httpx2.Client(base_url=url, timeout=5) as http:
        for _ in range(50):
            try:
                if http.get("/health/live").status_code == 200:
                    return
            except httpx2.TransportError:
                continue
    raise AssertionError("/health/live never answered 200")


@pytest.mark.timeout(120)
async def test_health_over_streamable_http_reports_nothing_registered(
    http_server: _HttpServer,
) -> None:
    _wait_live(http_server.url)
    async with Client(f"{http_server.url}/mcp") as client:
        health = _structured(await client.call_tool("repocontext_health", {"repoId": "x"}))
    assert health["retrievalPhase"] == "nothing_registered"
    repository = health["repository"]
    assert isinstance(repository, dict) and repository["verdict"] == "unknown"


@pytest.mark.timeout(120)
async def test_health_over_streamable_http_after_repo_flag_reports_building(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "proj", FILES)
    server = _HttpServer(tmp_path, "--repo", str(repo))
    try:
        _wait_live(server.url)
        async with Client(f"{server.url}/mcp") as client:
            health = _structured(await client.call_tool("repocontext_health", {}))
        assert health["retrievalPhase"] in ("building", "keyword_only", "serving")
        assert health["repositories"] == 1
    finally:
        server.stop()
    banner = "".join(server.stderr)
    assert f"{server.url}/mcp" in banner
    assert f"claude mcp add --transport http repocontext {server.url}/mcp" in banner


@pytest.mark.timeout(120)
def test_mcp_endpoint_refuses_a_foreign_host_header(http_server: _HttpServer) -> None:
    _wait_live(http_server.url)
    with httpx2.Client(base_url=http_server.url, timeout=5) as http:
        response = http.post(
            "/mcp",
            headers={"Host": "evil.example:80", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        )
    assert response.status_code == 421
