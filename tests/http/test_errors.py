"""HTTP refusals answer with the one JSON error shape {code, message, hint}."""

from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from repocontext.http import create_app
from repocontext.http.app import MAX_BODY_BYTES
from repocontext.mcp import build_server
from repocontext.settings import Settings
from repocontext.workspace import Workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

_MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture
async def http(tmp_path: Path) -> AsyncIterator[httpx2.AsyncClient]:
    with Workspace.open(Settings(data_dir=tmp_path / "data", workspace_root=tmp_path)) as ws:
        app = create_app(ws, build_server(ws, ws.settings), access_log=False)
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            yield client


def _refusal(response: httpx2.Response) -> dict[str, str]:
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"code", "message", "hint"}
    return dict(body)


async def test_a_body_over_the_limit_gets_a_json_413_naming_the_limit(
    http: httpx2.AsyncClient,
) -> None:
    response = await http.post("/mcp", content=b"x" * (MAX_BODY_BYTES + 1), headers=_MCP_HEADERS)
    assert response.status_code == 413
    body = _refusal(response)
    assert body["code"] == "input.invalid"
    assert "4 MiB" in body["message"] and str(MAX_BODY_BYTES) in body["hint"]


async def test_a_streamed_body_over_the_limit_without_a_length_gets_the_same_json_413(
    http: httpx2.AsyncClient,
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(5):
            yield b"x" * (1 << 20)

    response = await http.post("/mcp", content=chunks(), headers=_MCP_HEADERS)
    assert response.status_code == 413
    assert _refusal(response)["code"] == "input.invalid"
