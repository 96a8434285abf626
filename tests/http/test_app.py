from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from repocontext.http import LOCAL_HOSTS, create_app
from repocontext.mcp import build_server
from repocontext.settings import Settings
from repocontext.workspace import Workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "proj").mkdir()
    return Workspace.open(Settings(data_dir=tmp_path / "data", workspace_root=tmp_path))


@pytest.fixture
async def http(workspace: Workspace) -> AsyncIterator[httpx2.AsyncClient]:
    app = create_app(workspace, build_server(workspace, workspace.settings))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        yield client
    workspace.close()


async def test_live_answers_200(http: httpx2.AsyncClient) -> None:
    response = await http.get("/health/live")
    assert (response.status_code, response.json()) == (200, {"status": "live"})


async def test_ready_answers_200_with_retrieval_state_when_the_store_reads(
    http: httpx2.AsyncClient,
) -> None:
    response = await http.get("/health/ready")
    assert response.status_code == 200
    body = response.json()
    store = body.pop("store")
    assert body == {
        "status": "ready",
        "retrievalReady": True,
        "retrievalPhase": "nothing_registered",
        "repositories": 0,
        "servingRepositories": 0,
    }
    assert (store["engine"], store["reachable"]) == ("lmdb", True)
    assert store["latencyMs"] >= 0


async def test_ready_answers_503_while_every_repository_is_on_its_first_pass(
    http: httpx2.AsyncClient, workspace: Workspace, tmp_path: Path
) -> None:
    workspace.register_repo(tmp_path / "proj")
    response = await http.get("/health/ready")
    body = response.json()
    assert response.status_code == 503
    assert (body["status"], body["retrievalPhase"], body["retrievalReady"]) == (
        "building",
        "building",
        False,
    )


async def test_ready_answers_200_once_one_repository_serves_while_another_builds(
    http: httpx2.AsyncClient, workspace: Workspace, tmp_path: Path
) -> None:
    (tmp_path / "proj" / "a.py").write_text("x = 1\n")
    workspace.bootstrap(tmp_path / "proj", background=False)
    (tmp_path / "other").mkdir()
    workspace.register_repo(tmp_path / "other")
    response = await http.get("/health/ready")
    body = response.json()
    assert response.status_code == 200
    assert (body["status"], body["retrievalPhase"], body["servingRepositories"]) == (
        "ready",
        "building",
        1,
    )


async def test_metrics_expose_store_index_and_token_figures(
    http: httpx2.AsyncClient, workspace: Workspace, tmp_path: Path
) -> None:
    (tmp_path / "proj" / "a.py").write_text("def handler():\n    return 1\n")
    workspace.bootstrap(tmp_path / "proj", background=False)
    await http.get("/health/live")
    response = await http.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = response.text
    assert 'repocontext_index_files{repo="proj"} 1.0' in text
    assert 'repocontext_index_phase{phase="parsing",repo="proj"} 0.0' in text
    assert "repocontext_store_size_bytes " in text
    assert 'repocontext_store_records{tree="repo-context-structural"}' in text
    assert "repocontext_response_tokens_total 0.0" in text
    assert 'repocontext_http_requests_total{route="/health/live",status="200"} 1.0' in text


async def test_ready_answers_503_when_the_store_cannot_be_read(
    http: httpx2.AsyncClient, workspace: Workspace
) -> None:
    workspace.close()
    response = await http.get("/health/ready")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
    assert response.json()["code"] == "store.unavailable"
    assert response.json()["store"] == {"engine": "lmdb", "reachable": False, "latencyMs": None}


async def test_live_stays_200_when_the_store_is_closed(
    http: httpx2.AsyncClient, workspace: Workspace
) -> None:
    workspace.close()
    assert (await http.get("/health/live")).status_code == 200


async def test_the_mcp_endpoint_accepts_only_allowed_host_headers(workspace: Workspace) -> None:
    app = create_app(
        workspace,
        build_server(workspace, workspace.settings),
        allowed_hosts=(*LOCAL_HOSTS, "repocontext:*"),
    )
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"accept": "application/json, text/event-stream"}
    async with (
        app.router.lifespan_context(app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app)) as client,
    ):
        named = await client.post("http://repocontext:8080/mcp", json=body, headers=headers)
        other = await client.post("http://evil.example:8080/mcp", json=body, headers=headers)
        # Behind a TLS proxy: the Host carries no port, the page's origin is https.
        proxied = await client.post(
            "http://repocontext/mcp",
            json=body,
            headers={**headers, "origin": "https://repocontext"},
        )
        foreign = await client.post(
            "http://repocontext/mcp",
            json=body,
            headers={**headers, "origin": "https://evil.example"},
        )
    assert named.status_code != 421 and proxied.status_code not in (403, 421)
    assert other.status_code == 421 and foreign.status_code == 403
