"""repocontext_map through the real MCP client: ranked entries, exact budget, schema limits."""

import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from repocontext.auth import Grant
from repocontext.mcp import build_server
from repocontext.settings import Settings
from repocontext.testing import tool_error, tool_ok
from repocontext.tokens import count_tokens
from repocontext.workspace import Workspace


def make_repo(root: Path) -> Path:
    (root / "app").mkdir(parents=True)
    (root / "app" / "models.py").write_text(
        "class Record:\n    def save(self):\n        return 1\n\n\ndef load(key):\n    return key\n"
    )
    for name in ("views", "admin", "api"):
        (root / "app" / f"{name}.py").write_text(
            f"from app.models import Record, load\n\n\ndef {name}_page():\n"
            "    return Record().save() + load(1)\n"
        )
    (root / "scripts").mkdir()
    (root / "scripts" / "backup_tool.py").write_text("def run_backup():\n    return 0\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("map-tool")
    repo = make_repo(tmp / "ws" / "site")
    settings = Settings(
        data_dir=tmp / "data", workspace_root=tmp / "ws", reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, "site", background=False)
        yield workspace


def call(workspace: Workspace, arguments: dict, grant: Grant | None = None) -> CallToolResult:
    async def run() -> CallToolResult:
        server = build_server(workspace, workspace.settings, grant=grant)
        async with Client(server) as client:
            return await client.call_tool("repocontext_map", arguments)

    return anyio.run(run)


def rendered(wire: dict) -> str:
    return "\n".join(
        f"{e['path']}: {', '.join(e['symbols'])}" if e["symbols"] else e["path"]
        for e in wire["entries"]
    )


def test_the_map_lists_the_most_referenced_module_first_with_its_symbols(served):
    wire = tool_ok(call(served, {"repoId": "site"}))
    assert set(wire) == {"repoId", "budgetTokens", "tokenCount", "files", "truncated", "entries"}
    assert wire["entries"][0] == {
        "path": "app/models.py",
        "symbols": ["Record", "load", "Record.save"],
    }
    assert wire["budgetTokens"] == 1024
    assert wire["files"] == len(wire["entries"]) == 5
    assert not wire["truncated"]
    assert wire["tokenCount"] == count_tokens(rendered(wire))


def test_the_map_is_cut_at_its_budget_and_says_so(served):
    full = tool_ok(call(served, {"repoId": "site"}))
    wire = tool_ok(call(served, {"repoId": "site", "budgetTokens": 64}))
    assert wire["tokenCount"] <= 64
    assert wire["tokenCount"] == count_tokens(rendered(wire))
    assert wire["entries"] == full["entries"][: len(wire["entries"])]
    if len(wire["entries"]) < full["files"]:
        assert wire["truncated"]


def test_query_and_exclude_steer_the_map(served):
    wire = tool_ok(call(served, {"repoId": "site", "query": "backup", "exclude": ["app/views.py"]}))
    paths = [e["path"] for e in wire["entries"]]
    assert paths[0] == "scripts/backup_tool.py"
    assert "app/views.py" not in paths
    assert wire["files"] == 4


def test_the_tool_is_read_only_and_declares_its_budget_range(served):
    async def run():
        async with Client(build_server(served, served.settings)) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    tool = anyio.run(run)["repocontext_map"]
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    budget = tool.input_schema["properties"]["budgetTokens"]
    assert (budget["minimum"], budget["maximum"], budget["default"]) == (64, 16000, 1024)


@pytest.mark.parametrize("budget", [0, 63, 16001])
def test_a_budget_out_of_range_is_refused_with_input_invalid(served, budget):
    error = tool_error(call(served, {"repoId": "site", "budgetTokens": budget}))
    assert error["code"] == "input.invalid"
    assert "budgetTokens" in error["message"]


def test_an_unknown_or_ungranted_repository_is_refused(served):
    assert tool_error(call(served, {"repoId": "nope"}))["code"] == "repo.not_found"
    reader = Grant.of("reader", "reader", ["other"])
    assert tool_error(call(served, {"repoId": "site"}, reader))["code"] == "auth.repo_forbidden"
