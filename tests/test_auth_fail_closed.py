"""Grants fail closed: no call runs without an established grant; the servers set theirs."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from repocontext.auth import FULL_ACCESS, Grant, check_key, check_repo, granted, visible
from repocontext.errors import GrantMissingError
from repocontext.mcp import build_server
from repocontext.mcp.client import http_client
from repocontext.mcp.server import TOOLS
from repocontext.settings import Settings
from repocontext.store.keys import file_key
from repocontext.testing import start_http_server, tool_error, tool_ok
from repocontext.workspace import Workspace

pytestmark = pytest.mark.anyio


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    repo = tmp_path / "ws" / "proj"
    repo.mkdir(parents=True)
    (repo / "core.py").write_text("def compute(x):\n    return x * 2\n")
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_root=tmp_path / "ws",
        enable_writes=True,
        embedder="off",
    )
    with Workspace.open(settings) as opened:  # library use: no grant needed
        opened.bootstrap(repo, "proj", background=False)
        assert [repo.repo_id for repo in opened.list_repos()] == ["proj"]
        yield opened


def _bare_server(workspace: Workspace) -> MCPServer:
    """Every repocontext tool on a plain SDK server: nothing establishes a grant."""
    server = MCPServer("bare")
    for factory in TOOLS:
        made = factory(workspace)
        for spec in made if isinstance(made, list) else [made]:
            server.add_tool(spec.fn, name=spec.name, structured_output=True)
    return server


@pytest.mark.timeout(60)
async def test_a_tool_reached_without_an_established_grant_is_refused_and_does_not_run(
    workspace: Workspace,
) -> None:
    async with Client(_bare_server(workspace)) as client:
        listing = await client.call_tool("repocontext_list_repos", {})
        search = await client.call_tool(
            "repocontext_search", {"repoId": "proj", "query": "compute"}
        )
        remember = await client.call_tool(
            "repocontext_remember", {"repoId": "proj", "topic": "decisions", "title": "leak"}
        )
    for refused in (listing, search, remember):
        body = tool_error(refused)
        assert body["code"] == "auth.no_grant"
        assert "granted" in body["hint"]
    # The refused write wrote nothing (read back through a server that sets its grant).
    async with Client(build_server(workspace, workspace.settings)) as client:
        topics = tool_ok(await client.call_tool("repocontext_list_topics", {"repoId": "proj"}))
    assert topics["topics"] == []


def test_grant_checks_without_a_grant_raise_instead_of_allowing() -> None:
    key = file_key("proj", "core.py")
    for check in (lambda: check_repo("proj"), lambda: check_key(key), lambda: visible(key)):
        with pytest.raises(GrantMissingError) as caught:
            check()
        assert caught.value.code == "auth.no_grant"
    with granted(FULL_ACCESS):  # a library caller that wants everything says so
        check_repo("proj")
        assert visible(key)
    with granted(Grant.of("ro", "reader", ["other"])):
        assert not visible(key)


@pytest.mark.timeout(120)
async def test_stdio_serves_every_tool_under_its_explicit_local_grant(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "core.py").write_text("def compute(x):\n    return x * 2\n")
    args = ["-m", "repocontext", "serve", "--transport", "stdio", "--enable-writes"]
    args += ["--data-dir", str(tmp_path / "data"), "--repo", str(repo), "--embedder", "off"]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(tmp_path))
    async with Client(params) as client:
        listing = tool_ok(await client.call_tool("repocontext_list_repos", {}))
        note = await client.call_tool(
            "repocontext_remember", {"repoId": "proj", "topic": "decisions", "title": "kept"}
        )
    assert [entry["repoId"] for entry in listing["repos"]] == ["proj"]
    assert tool_ok(note)["topic"] == "decisions"


@pytest.mark.timeout(120)
async def test_http_without_tokens_serves_every_tool_under_the_local_grant(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws" / "proj").mkdir(parents=True)
    (tmp_path / "ws" / "proj" / "core.py").write_text("def compute(x):\n    return x * 2\n")
    server, base = start_http_server(tmp_path / "data", tmp_path / "ws")
    try:
        async with http_client(f"{base}/mcp") as client:
            added = tool_ok(await client.call_tool("repocontext_add_repo", {"path": "proj"}))
            listing = tool_ok(await client.call_tool("repocontext_list_repos", {}))
            note = await client.call_tool(
                "repocontext_remember", {"repoId": "proj", "topic": "decisions", "title": "kept"}
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert added["repoId"] == "proj"
    assert [entry["repoId"] for entry in listing["repos"]] == ["proj"]
    assert tool_ok(note)["topic"] == "decisions"
