from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from repocontext.http import create_app
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
    assert response.json() == {
        "status": "ready",
        "retrievalReady": True,
        "retrievalPhase": "nothing_registered",
        "repositories": 0,
    }


async def test_ready_folds_in_a_registered_repo_still_building(
    http: httpx2.AsyncClient, workspace: Workspace, tmp_path: Path
) -> None:
    workspace.register_repo(tmp_path / "proj")
    body = (await http.get("/health/ready")).json()
    assert (body["retrievalPhase"], body["retrievalReady"], body["repositories"]) == (
        "building",
        False,
        1,
    )


async def test_ready_answers_503_when_the_store_cannot_be_read(
    http: httpx2.AsyncClient, workspace: Workspace
) -> None:
    workspace.close()
    response = await http.get("/health/ready")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
    assert response.json()["code"] == "store.unavailable"


async def test_live_stays_200_when_the_store_is_closed(
    http: httpx2.AsyncClient, workspace: Workspace
) -> None:
    workspace.close()
    assert (await http.get("/health/live")).status_code == 200
