from pathlib import Path

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


FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": (
        "def compute(x):\n    return x * 2\n\n\nclass Engine:\n    def start(self):\n"
        "        return compute(1)\n"
    ),
    "tests/test_core.py": (
        "from pkg.core import compute\n\n\ndef test_compute():\n    assert compute(2) == 4\n"
    ),
}


@pytest.fixture
def served(tmp_path: Path):
    repo = make_repo(tmp_path / "ws" / "proj", FILES)
    # Single-repository mode (serve --repo): the mode that offers repocontext_bootstrap.
    settings = Settings(data_dir=tmp_path / "data", repo=repo, enable_writes=True)
    with Workspace.open(settings) as workspace:
        yield workspace, repo


async def bootstrap(client: Client, repo: Path) -> dict:
    started = ok(await client.call_tool("repocontext_bootstrap", {"repoRoot": str(repo)}))
    assert started["repoId"] == "proj"
    for _ in range(1200):
        status = ok(await client.call_tool("repocontext_index_status", {"repoId": "proj"}))
        if status["status"] in ("completed", "failed"):
            return status
        await anyio.sleep(0.05)
    raise AssertionError("index did not finish")


@pytest.mark.timeout(120)
async def test_bootstrap_then_outline_related_scan_recall_and_changed(served):
    workspace, repo = served
    async with Client(build_server(workspace, workspace.settings)) as client:
        status = await bootstrap(client, repo)
        assert status["status"] == "completed"
        assert status["counters"]["filesAdded"] == 3
        outline = ok(
            await client.call_tool("repocontext_outline", {"repoId": "proj", "path": "pkg/core.py"})
        )
        assert outline["language"] == "python"
        assert outline["tokenCount"] > 0
        assert outline["syntaxErrors"] is False
        assert [s["name"] for s in outline["symbols"]] == ["compute", "Engine"]
        assert outline["symbols"][1]["children"][0]["fullyQualifiedName"] == "pkg.core.Engine.start"
        related = ok(
            await client.call_tool("repocontext_related", {"repoId": "proj", "path": "pkg/core.py"})
        )
        assert [t["path"] for t in related["coveringTests"]] == ["tests/test_core.py"]
        files = ok(
            await client.call_tool(
                "repocontext_scan", {"repoId": "proj", "scope": "files", "pageSize": 2}
            )
        )
        assert len(files["entries"]) == 2 and files["continuationToken"]
        rest = ok(
            await client.call_tool(
                "repocontext_scan",
                {
                    "repoId": "proj",
                    "scope": "files",
                    "pageSize": 2,
                    "continuationToken": files["continuationToken"],
                },
            )
        )
        assert [e["path"] for e in files["entries"] + rest["entries"]] == [
            "pkg/__init__.py",
            "pkg/core.py",
            "tests/test_core.py",
        ]
        symbol = ok(
            await client.call_tool(
                "repocontext_recall", {"key": "repo/proj/symbol/pkg.core.compute"}
            )
        )
        assert symbol["exists"] and symbol["kind"] == "symbol"
        assert symbol["fields"]["defs"][0]["path"] == "pkg/core.py"
        file_entry = ok(
            await client.call_tool("repocontext_recall", {"key": "repo/proj/file/pkg/core.py"})
        )
        assert file_entry["fields"]["symbolsCount"] == 2
        (repo / "pkg" / "core.py").write_text("def compute(x):\n    return x\n")
        changed = ok(await client.call_tool("repocontext_changed", {"repoId": "proj"}))
        assert changed["updated"] == ["pkg/core.py"]
        assert [i["path"] for i in changed["impacted"]] == ["tests/test_core.py"]


@pytest.mark.timeout(60)
async def test_index_tools_refuse_bad_input_with_stable_codes(served, tmp_path):
    workspace, repo = served
    async with Client(build_server(workspace, workspace.settings)) as client:
        outside = error(
            await client.call_tool("repocontext_bootstrap", {"repoRoot": str(tmp_path)})
        )
        assert outside["code"] == "path.outside_workspace"
        missing = error(await client.call_tool("repocontext_index_status", {"repoId": "nope"}))
        assert missing["code"] == "repo.not_found"
        await bootstrap(client, repo)
        scope = error(
            await client.call_tool("repocontext_changed", {"repoId": "proj", "path": "../.."})
        )
        assert scope["code"] == "path.outside_workspace"
        bad_scope = error(
            await client.call_tool("repocontext_scan", {"repoId": "proj", "scope": "everything"})
        )
        assert bad_scope["code"] == "input.invalid"
        bad_key = error(await client.call_tool("repocontext_recall", {"key": "nonsense"}))
        assert bad_key["code"] == "store.invalid_key"
        absent = ok(
            await client.call_tool("repocontext_outline", {"repoId": "proj", "path": "nope.py"})
        )
        assert absent["exists"] is False
        unknown = error(await client.call_tool("repocontext_nope", {}))
        assert unknown["code"] == "input.invalid" and "no tool named" in unknown["message"]
        empty = error(await client.call_tool("repocontext_scan", {"repoId": "", "scope": "files"}))
        assert empty["code"] == "input.invalid"  # as from every tool that takes a repoId
        # Arguments that do not fit the input schema: the same {code, message, hint} body.
        for arguments in ({"repoId": "proj"}, {"repoId": "proj", "path": 123}):
            schema = error(await client.call_tool("repocontext_outline", arguments))
            assert schema["code"] == "input.invalid" and schema["message"].count("path: ") == 1
            assert "input schema" in schema["hint"]


@pytest.mark.timeout(120)
async def test_a_bootstrap_naming_no_filter_keeps_the_repositorys_filters(served):
    workspace, repo = served
    async with Client(build_server(workspace, workspace.settings)) as client:
        ok(
            await client.call_tool(
                "repocontext_bootstrap", {"repoRoot": str(repo), "includeGlobs": ["pkg/**"]}
            )
        )
        assert await wait_done(client) == 2  # pkg/__init__.py, pkg/core.py
        ok(await client.call_tool("repocontext_bootstrap", {"repoRoot": str(repo)}))
        assert await wait_done(client) == 2  # the kept filter applied again
        ok(
            await client.call_tool(
                "repocontext_bootstrap", {"repoRoot": str(repo), "includeGlobs": []}
            )
        )
        assert await wait_done(client) == 3  # dropped: tests/test_core.py too


async def wait_done(client: Client) -> int:
    """Wait for the run to end; return how many files it saw."""
    for _ in range(1200):
        status = ok(await client.call_tool("repocontext_index_status", {"repoId": "proj"}))
        if status["status"] in ("completed", "failed"):
            assert status["status"] == "completed", status
            return int(status["counters"]["filesSeen"])
        await anyio.sleep(0.05)
    raise AssertionError("index did not finish")


@pytest.mark.timeout(60)
async def test_bootstrap_is_not_offered_without_writes_or_a_workspace_root(tmp_path):
    for settings in (
        Settings(data_dir=tmp_path / "a", workspace_root=tmp_path),
        Settings(data_dir=tmp_path / "b", enable_writes=True),
    ):
        with Workspace.open(settings) as workspace:
            async with Client(build_server(workspace, settings)) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                refused = error(
                    await client.call_tool("repocontext_bootstrap", {"repoRoot": str(tmp_path)})
                )
        assert "repocontext_bootstrap" not in names
        assert {"repocontext_outline", "repocontext_scan", "repocontext_index_status"} <= names
        assert refused["code"] == "auth.tool_forbidden"
        if settings.enable_writes:  # writes on, but neither --repo nor --workspace-root
            assert "--repo PATH" in refused["hint"] and "--workspace-root" in refused["hint"]


@pytest.mark.timeout(120)
async def test_an_outline_of_a_generated_file_is_bounded(tmp_path):
    repo = make_repo(tmp_path / "ws" / "proj", FILES)
    body = "".join(f"class C{i}:\n    def m(self):\n        pass\n\n\n" for i in range(1500))
    (repo / "pkg" / "generated.py").write_text(body)  # 3,000 symbols
    settings = Settings(data_dir=tmp_path / "data", repo=repo, enable_writes=True)
    with Workspace.open(settings) as workspace:
        async with Client(build_server(workspace, settings)) as client:
            await bootstrap(client, repo)
            call = {"repoId": "proj", "path": "pkg/generated.py"}
            default = ok(await client.call_tool("repocontext_outline", call))
            few = ok(await client.call_tool("repocontext_outline", {**call, "maxSymbols": 3}))
    assert (default["symbolCount"], default["truncated"]) == (3000, True)
    assert len(default["symbols"]) == 1000  # 1,000 classes holding one method each: 2,000
    assert [s["name"] for s in few["symbols"]] == ["C0", "C1"]
    assert "children" not in few["symbols"][1]  # C1 kept, its method past the budget
