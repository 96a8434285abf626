"""repocontext_read through the real MCP client: pages, blob ids, budgets and refusals."""

import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from repocontext.auth import Grant
from repocontext.mcp import build_server
from repocontext.testing import tool_error, tool_ok
from repocontext.tokens import count_tokens
from repocontext.workspace import Workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

UTIL = "".join(f"def step_{i}(value):\n    return value + {i}\n\n" for i in range(60))


@pytest.fixture
def served(workspace: Workspace) -> Workspace:
    """The `proj` repository of the conftest (core.py) as a git repository with more files."""
    info = workspace.get_repo("proj")
    assert info is not None
    root = Path(info.root)
    (root / "util.py").write_text(UTIL)
    (root / "windows.txt").write_bytes(b"one\r\ntwo\r\nthree")
    (root / ".gitignore").write_text("*.log\n")
    (root / "debug.log").write_text("password=1\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    workspace._index.reindex("proj")
    return workspace


async def read(workspace: Workspace, grant: Grant | None = None, **arguments: Any) -> Any:
    async with Client(build_server(workspace, workspace.settings, grant=grant)) as client:
        return await client.call_tool("repocontext_read", arguments)


def hash_object(workspace: Workspace, path: str) -> str:
    info = workspace.get_repo("proj")
    assert info is not None
    done = subprocess.run(
        ["git", "-C", info.root, "hash-object", path], capture_output=True, check=True, text=True
    )
    return done.stdout.strip()


async def test_read_returns_the_whole_file_with_its_git_blob_id(served):
    page = tool_ok(await read(served, repoId="proj", path="windows.txt"))
    assert page == {
        "path": "windows.txt",
        "startLine": 1,
        "endLine": 3,
        "text": "one\r\ntwo\r\nthree",
        "blobId": hash_object(served, "windows.txt"),
        "tokenCount": count_tokens("one\r\ntwo\r\nthree"),
        "fresh": True,
        "continuation": None,
    }


async def test_read_returns_a_line_range_and_clamps_its_end(served):
    page = tool_ok(await read(served, repoId="proj", path="util.py", startLine=4, endLine=5))
    assert page["text"] == "def step_1(value):\n    return value + 1\n"
    assert (page["startLine"], page["endLine"]) == (4, 5)
    tail = tool_ok(await read(served, repoId="proj", path="util.py", startLine=179, endLine=900))
    assert (tail["endLine"], tail["text"]) == (180, "    return value + 59\n\n")


async def test_a_budget_cuts_at_whole_lines_and_continuation_pages_rebuild_the_file(served):
    texts, start = [], 1
    while start is not None:
        page = tool_ok(
            await read(served, repoId="proj", path="util.py", startLine=start, budgetTokens=150)
        )
        assert page["tokenCount"] <= 150
        assert page["tokenCount"] == count_tokens(page["text"])
        texts.append(page["text"])
        start = page["continuation"]
    assert len(texts) > 3
    assert "".join(texts) == UTIL


async def test_a_first_line_over_the_budget_is_refused_with_the_budget_it_needs(served):
    error = tool_error(await read(served, repoId="proj", path="util.py", budgetTokens=2))
    assert error["code"] == "input.invalid"
    assert f"at least {count_tokens('def step_0(value):' + chr(10))} tokens" in error["hint"]


async def test_a_changed_file_is_reindexed_and_read_fresh(served):
    info = served.get_repo("proj")
    assert info is not None
    (Path(info.root) / "core.py").write_text("def compute(x):\n    return x * 10\n")
    page = tool_ok(await read(served, repoId="proj", path="core.py"))
    assert page["fresh"] is True
    assert page["blobId"] == hash_object(served, "core.py")
    assert served._index.content("proj", "core.py") == page["text"]


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("../outside.py", "path.outside_workspace"),
        ("debug.log", "path.outside_workspace"),
        ("nowhere.py", "path.not_found"),
    ],
)
async def test_paths_the_workspace_does_not_serve_are_refused_with_codes(served, path, code):
    error = tool_error(await read(served, repoId="proj", path=path))
    assert error["code"] == code
    assert "password" not in error["message"]


@pytest.mark.parametrize(
    "arguments",
    [
        {"startLine": 0},
        {"endLine": 0},
        {"budgetTokens": 0},
        {"budgetTokens": 10**12},
        {"path": "x" * 5000},
    ],
)
async def test_arguments_out_of_their_schema_range_are_refused(served, arguments):
    error = tool_error(await read(served, **{"repoId": "proj", "path": "core.py", **arguments}))
    assert error["code"] == "input.invalid"


async def test_a_range_starting_past_the_end_is_refused_naming_it(served):
    error = tool_error(await read(served, repoId="proj", path="core.py", startLine=50))
    assert error["code"] == "input.invalid"
    assert "lines 50-" in error["message"]


async def test_a_repository_outside_the_grant_is_refused(served):
    grant = Grant.of("other", "reader", ["other"])
    error = tool_error(await read(served, grant, repoId="proj", path="core.py"))
    assert error["code"] == "auth.repo_forbidden"


async def test_read_is_listed_read_only_with_its_ranges_in_the_schema(served):
    async with Client(build_server(served, served.settings)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    tool = tools["repocontext_read"]
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    properties = tool.input_schema["properties"]
    assert properties["startLine"]["minimum"] == 1
    assert "continuation" in (tool.output_schema or {}).get("properties", {})
