from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from repocontext.mcp import build_server
from repocontext.settings import Settings
from repocontext.testing import make_repo
from repocontext.testing import tool_error as error
from repocontext.testing import tool_ok as ok
from repocontext.workspace import Workspace

pytestmark = pytest.mark.anyio

ADMIN = ("repocontext_add_repo", "repocontext_remove_repo", "repocontext_reset_index")
TREES = (
    "structural",
    "symbol",
    "content",
    "xref",
    "memory",
    "session",
    "vector-membership",
    "vector-payload",
    "vector-metadata",
)


FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": (
        "def compute(x):\n    return x * 2\n\n\nclass Engine:\n    def start(self):\n"
        "        return compute(1)\n"
    ),
}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Workspace, Path]]:
    repo = make_repo(tmp_path / "ws" / "proj", FILES)
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_root=tmp_path / "ws",
        enable_writes=True,
        reconcile="off",
        embedder="off",
    )
    with Workspace.open(settings) as workspace:
        yield workspace, repo


async def add_and_wait(client: Client, path: Path) -> dict[str, Any]:
    started = ok(await client.call_tool("repocontext_add_repo", {"path": str(path)}))
    assert started["repoId"] == "proj"
    with anyio.fail_after(60):
        while True:
            status = ok(await client.call_tool("repocontext_index_status", {"repoId": "proj"}))
            if status["status"] in ("completed", "failed"):
                return status
            await anyio.sleep(0.05)


async def test_the_admin_tools_are_offered_in_workspace_mode_and_annotated(
    served: tuple[Workspace, Path],
) -> None:
    workspace, _ = served
    async with Client(build_server(workspace, workspace.settings)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(ADMIN) <= set(tools)
    assert "repocontext_bootstrap" not in tools  # the single-repo counterpart
    hints = {}
    for name in ADMIN:
        annotations = tools[name].annotations
        assert annotations is not None and annotations.read_only_hint is False
        hints[name] = annotations.destructive_hint
    assert hints == {
        "repocontext_add_repo": False,
        "repocontext_remove_repo": True,
        "repocontext_reset_index": True,
    }


@pytest.mark.parametrize("mode", ["writes-disabled", "single-repo"])
async def test_the_admin_tools_are_withheld_without_writes_or_outside_workspace_mode(
    tmp_path: Path, mode: str
) -> None:
    repo = make_repo(tmp_path / "ws" / "proj", FILES)
    data = tmp_path / "data"
    if mode == "single-repo":
        settings = Settings(data_dir=data, repo=repo, enable_writes=True)
    else:
        settings = Settings(data_dir=data, workspace_root=repo.parent, enable_writes=False)
    with Workspace.open(settings) as workspace:
        async with Client(build_server(workspace, settings)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            refused = error(await client.call_tool("repocontext_reset_index", {"repoId": "proj"}))
    assert names.isdisjoint(ADMIN)
    # The refusal says why: what the operator would change, not a token the caller lacks.
    assert refused["code"] == "auth.tool_forbidden"
    expected = "--enable-writes" if mode == "writes-disabled" else "--workspace-root"
    assert expected in refused["hint"] and "curator" not in refused["hint"]


@pytest.mark.timeout(120)
async def test_add_reset_readd_and_remove_through_the_client(
    served: tuple[Workspace, Path],
) -> None:
    workspace, repo = served
    async with Client(build_server(workspace, workspace.settings)) as client:
        assert (await add_and_wait(client, repo))["status"] == "completed"
        outline = ok(
            await client.call_tool("repocontext_outline", {"repoId": "proj", "path": "pkg/core.py"})
        )
        note = ok(
            await client.call_tool(
                "repocontext_remember",
                {"repoId": "proj", "topic": "decisions", "title": "Engine stays pure"},
            )
        )

        reset = ok(await client.call_tool("repocontext_reset_index", {"repoId": "proj"}))
        assert reset["repoId"] == "proj" and reset["memoryPreserved"] is True
        assert reset["entriesDeleted"] == sum(reset["removed"].values()) > 0
        assert reset["treesSwept"] == [t for t in TREES if t not in ("memory", "session")]
        assert reset["elapsedMs"] >= 0
        gone = ok(
            await client.call_tool("repocontext_outline", {"repoId": "proj", "path": "pkg/core.py"})
        )
        assert gone["exists"] is False
        kept = ok(await client.call_tool("repocontext_recall", {"key": note["key"]}))
        assert kept["exists"] is True
        health = ok(await client.call_tool("repocontext_health", {"repoId": "proj"}))
        assert health["repository"]["verdict"] == "building"

        assert (await add_and_wait(client, repo))["status"] == "completed"
        again = ok(
            await client.call_tool("repocontext_outline", {"repoId": "proj", "path": "pkg/core.py"})
        )
        assert again == outline

        removed = ok(await client.call_tool("repocontext_remove_repo", {"repoId": "proj"}))
        assert removed["repoId"] == "proj" and removed["existed"] is True
        assert list(removed["removed"]) == list(TREES)
        assert removed["removed"]["memory"] == 1
        assert removed["totalRemoved"] == sum(removed["removed"].values())
        listed = ok(await client.call_tool("repocontext_list_repos", {}))
        assert listed["repos"] == []
        recalled = ok(await client.call_tool("repocontext_recall", {"key": note["key"]}))
        assert recalled["exists"] is False
    assert (repo / "pkg" / "core.py").exists()


async def test_unknown_ids_are_a_no_op_or_not_found_and_outside_paths_are_refused(
    served: tuple[Workspace, Path], tmp_path: Path
) -> None:
    workspace, _ = served
    outside = make_repo(tmp_path / "outside", FILES)
    (tmp_path / "ws" / "link").symlink_to(outside, target_is_directory=True)
    async with Client(build_server(workspace, workspace.settings)) as client:
        removed = ok(await client.call_tool("repocontext_remove_repo", {"repoId": "nope"}))
        assert removed["existed"] is False and removed["totalRemoved"] == 0
        assert removed["removed"] == dict.fromkeys(TREES, 0)
        missing = error(await client.call_tool("repocontext_reset_index", {"repoId": "nope"}))
        assert missing["code"] == "repo.not_found"
        for path in (tmp_path / "ws" / "link", tmp_path / "ws" / ".." / "outside"):
            refused = error(await client.call_tool("repocontext_add_repo", {"path": str(path)}))
            assert refused["code"] == "path.outside_workspace"
        listed = ok(await client.call_tool("repocontext_list_repos", {}))
        assert listed["repos"] == []
