"""Bearer tokens and grants, driven through the real MCP client against a real server process."""

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from repocontext.mcp.client import http_client
from repocontext.settings import Settings
from repocontext.store.keys import file_key, mem_key
from repocontext.testing import free_port, start_http_server, tool_error, tool_ok
from repocontext.workspace import Workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

READER = "reader-secret-alpha"
CURATOR = "curator-secret-all"
ALPHA_CURATOR = "curator-secret-alpha"
WRITE_TOOLS = {"repocontext_remember", "repocontext_update", "repocontext_forget"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    tmp = tmp_path_factory.mktemp("auth")
    ws = tmp / "ws"
    for name in ("alpha", "beta"):
        (ws / name).mkdir(parents=True)
        (ws / name / f"{name}.py").write_text(f"def {name}_handler():\n    return 1\n")
    data = tmp / "data"
    with Workspace.open(Settings(data_dir=data, workspace_root=ws, embedder="off")) as workspace:
        for name in ("alpha", "beta"):
            workspace.bootstrap(ws / name, name, background=False)
        workspace.remember("beta", "secrets", title="beta only")
    tokens = tmp / "tokens.json"
    digest = hashlib.sha256(CURATOR.encode()).hexdigest()
    tokens.write_text(
        json.dumps(
            {
                "tokens": [
                    {"token": READER, "role": "reader", "repos": ["alpha"], "name": "ro"},
                    {"token": f"sha256:{digest}", "role": "curator", "repos": ["*"]},
                    {"token": ALPHA_CURATOR, "role": "curator", "repos": ["alpha"]},
                ]
            }
        )
    )
    log = tmp / "server.log"
    proc, base = start_http_server(data, ws, extra_args=["--auth-tokens", str(tokens)], stderr=log)
    try:
        yield base, ws, log
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_mcp_without_a_valid_token_gets_401_and_probes_stay_open(
    server: tuple[str, Path, Path],
) -> None:
    base, _, _ = server
    async with httpx2.AsyncClient(base_url=base) as http:
        missing = await http.post("/mcp", json={})
        wrong = await http.post("/mcp", json={}, headers={"Authorization": "Bearer nope"})
        assert missing.status_code == wrong.status_code == 401
        assert missing.json()["code"] == "auth.unauthorized"
        assert 'error="missing_token"' in missing.headers["www-authenticate"]
        assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
        for path in ("/health/live", "/health/ready"):
            assert (await http.get(path)).status_code == 200, path
        # Metrics name repositories and stats count every caller: any valid token, not none.
        for path in ("/metrics", "/stats"):
            refused = await http.get(path)
            assert refused.status_code == 401 and refused.json()["code"] == "auth.unauthorized"
            assert (
                await http.get(path, headers={"Authorization": "Bearer nope"})
            ).status_code == 401
            allowed = await http.get(path, headers={"Authorization": f"Bearer {READER}"})
            assert allowed.status_code == 200, path


async def test_a_reader_sees_no_write_tool_and_only_its_repositories(
    server: tuple[str, Path, Path],
) -> None:
    base, _, _ = server
    async with http_client(f"{base}/mcp", READER) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "repocontext_search" in names
        assert not names & (WRITE_TOOLS | {"repocontext_add_repo", "repocontext_claim"})
        repos = tool_ok(await client.call_tool("repocontext_list_repos", {}))["repos"]
        assert [repo["repoId"] for repo in repos] == ["alpha"]
        outline = await client.call_tool(
            "repocontext_outline", {"repoId": "alpha", "path": "alpha.py"}
        )
        assert tool_ok(outline)["exists"] is True

        refused = [
            await client.call_tool("repocontext_outline", {"repoId": "beta", "path": "beta.py"}),
            await client.call_tool("repocontext_recall", {"key": file_key("beta", "beta.py")}),
            await client.call_tool("repocontext_search", {"repoId": "beta", "query": "handler"}),
        ]
        assert [tool_error(r)["code"] for r in refused] == ["auth.repo_forbidden"] * 3


async def test_a_guessed_write_tool_is_refused_for_a_reader(
    server: tuple[str, Path, Path],
) -> None:
    base, _, _ = server
    async with http_client(f"{base}/mcp", READER) as client:
        result = await client.call_tool(
            "repocontext_remember", {"repoId": "alpha", "topic": "t", "title": "sneaky"}
        )
        assert tool_error(result)["code"] == "auth.tool_forbidden"
    async with http_client(f"{base}/mcp", CURATOR) as client:
        topics = tool_ok(await client.call_tool("repocontext_list_topics", {"repoId": "alpha"}))
        assert topics["topics"] == []


async def test_a_curator_token_given_as_a_digest_writes_in_every_repository(
    server: tuple[str, Path, Path],
) -> None:
    base, _, _ = server
    async with http_client(f"{base}/mcp", CURATOR) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names >= WRITE_TOOLS | {"repocontext_add_repo", "repocontext_remove_repo"}
        assert "repocontext_bootstrap" not in names  # workspace mode: add_repo instead
        entry = tool_ok(
            await client.call_tool(
                "repocontext_remember", {"repoId": "beta", "topic": "notes", "title": "ok"}
            )
        )
        assert entry["key"].startswith("repo/beta/mem/notes/")
        repos = tool_ok(await client.call_tool("repocontext_list_repos", {}))["repos"]
        assert [repo["repoId"] for repo in repos] == ["alpha", "beta"]


async def test_a_curator_scoped_to_one_repository_cannot_write_or_register_elsewhere(
    server: tuple[str, Path, Path],
) -> None:
    base, ws, _ = server
    async with http_client(f"{base}/mcp", ALPHA_CURATOR) as client:
        own = await client.call_tool(
            "repocontext_remember", {"repoId": "alpha", "topic": "notes", "title": "mine"}
        )
        assert tool_ok(own)["repoId"] == "alpha"
        other = [
            await client.call_tool(
                "repocontext_remember", {"repoId": "beta", "topic": "notes", "title": "no"}
            ),
            await client.call_tool("repocontext_forget", {"key": mem_key("beta", "secrets", "x")}),
            await client.call_tool("repocontext_add_repo", {"path": str(ws / "beta")}),
            # A granted id pointed at another repository, or at the whole workspace.
            await client.call_tool(
                "repocontext_add_repo", {"path": str(ws / "beta"), "repoId": "alpha"}
            ),
            await client.call_tool("repocontext_add_repo", {"path": ".", "repoId": "alpha"}),
        ]
        assert [tool_error(r)["code"] for r in other] == ["auth.repo_forbidden"] * 5
        # Its own directory under its own name still registers (an incremental run).
        again = await client.call_tool("repocontext_add_repo", {"path": "alpha"})
        assert tool_ok(again)["repoId"] == "alpha"


async def test_the_access_log_names_the_grant_and_never_the_token(
    server: tuple[str, Path, Path],
) -> None:
    base, _, log = server
    async with http_client(f"{base}/mcp", READER) as client:
        await client.call_tool("repocontext_list_repos", {})
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    mcp_lines = [line for line in lines if line.get("path") == "/mcp"]
    assert any(line["grant"] == "ro" and line["status"] == 200 for line in mcp_lines)
    assert {"at", "method", "path", "status", "ms", "client", "grant"} <= set(mcp_lines[0])
    text = log.read_text()
    assert READER not in text and CURATOR not in text


def test_a_malformed_tokens_file_stops_the_server_before_it_serves(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tokens": [{"token": "x", "role": "admin", "repos": ["*"]}]}))
    cli = str(Path(sys.executable).parent / "repocontext")
    args = [cli, "serve", "--transport", "http", "--port", str(free_port()), "--workers", "1"]
    args += ["--data-dir", str(tmp_path / "data"), "--auth-tokens", str(tokens)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "auth.config_invalid" in done.stderr
    assert "unknown role 'admin'" in done.stderr


async def test_metrics_count_tool_calls_by_outcome(server: tuple[str, Path, Path]) -> None:
    base, _, _ = server
    async with http_client(f"{base}/mcp", READER) as client:
        await client.call_tool("repocontext_list_repos", {})
        await client.call_tool("repocontext_outline", {"repoId": "beta", "path": "beta.py"})
        await client.call_tool("repocontext_not_a_tool", {})
    async with httpx2.AsyncClient(base_url=base) as http:
        text = (await http.get("/metrics", headers={"Authorization": f"Bearer {READER}"})).text
    assert 'repocontext_tool_calls_total{outcome="ok",tool="repocontext_list_repos"}' in text
    assert 'repocontext_tool_calls_total{outcome="forbidden",tool="repocontext_outline"}' in text
    assert 'repocontext_tool_calls_total{outcome="error",tool="unknown"}' in text
    assert (
        'repocontext_tool_latency_seconds_bucket{le="0.005",tool="repocontext_list_repos"}' in text
    )
