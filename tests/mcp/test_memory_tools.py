"""Memory tools through the real MCP client: grants, views, errors, concurrent clients."""

import anyio
import pytest
from mcp import Client

from repocontext.mcp import build_server
from repocontext.store.keys import file_key, mem_key
from repocontext.testing import tool_error as error
from repocontext.testing import tool_ok as ok

pytestmark = pytest.mark.anyio

WRITES = {"repocontext_remember", "repocontext_update", "repocontext_forget"}
READS = {"repocontext_list_topics", "repocontext_neighbors", "repocontext_recall"}


async def test_write_tools_need_the_write_grant(workspace):
    read_only = workspace.settings.model_copy(update={"enable_writes": False})
    async with Client(build_server(workspace, read_only)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert names >= READS and not (WRITES & names)
    async with Client(build_server(workspace, workspace.settings)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools.keys() >= WRITES
    assert tools["repocontext_remember"].annotations.read_only_hint is False
    assert tools["repocontext_neighbors"].annotations.read_only_hint is True


async def test_remember_recall_update_neighbors_forget(workspace):
    async with Client(build_server(workspace, workspace.settings)) as client:
        target = file_key("proj", "core.py")
        made = ok(
            await client.call_tool(
                "repocontext_remember",
                {
                    "repoId": "proj",
                    "topic": "gotchas",
                    "title": "compute doubles",
                    "tags": ["math"],
                    "addLinks": {"anchoredTo": [target]},
                    "ttlSeconds": 3600,
                },
            )
        )
        key = made["key"]
        assert made["links"] == {"anchoredTo": [target]}
        assert made["stale"] is False and 3599 <= made["remainingSeconds"] <= 3600
        recalled = ok(await client.call_tool("repocontext_recall", {"key": key}))
        assert recalled["fields"]["title"] == "compute doubles"
        updated = ok(
            await client.call_tool(
                "repocontext_update",
                {"key": key, "fields": {"body": "see core.py"}, "addTags": ["core"]},
            )
        )
        assert updated["tags"] == ["core", "math"]
        topics = ok(await client.call_tool("repocontext_list_topics", {"repoId": "proj"}))
        assert topics == {"topics": [{"topic": "gotchas", "count": 1}]}
        walked = ok(await client.call_tool("repocontext_neighbors", {"key": key}))
        assert walked["nodes"] == [
            {
                "key": target,
                "exists": True,
                "depth": 1,
                "via": "anchoredTo",
                "from": key,
                "stale": False,
            }
        ]
        forgot = ok(await client.call_tool("repocontext_forget", {"key": key}))
        assert forgot == {"key": key, "forgotten": True, "lapsesAt": None}
        assert ok(await client.call_tool("repocontext_recall", {"key": key}))["exists"] is False


async def test_bad_input_is_a_tool_error_with_a_code(workspace):
    async with Client(build_server(workspace, workspace.settings)) as client:
        cases = [
            (
                "repocontext_remember",
                {"repoId": "proj", "topic": "a/b", "title": "t"},
                "input.invalid",
            ),
            (
                "repocontext_remember",
                {"repoId": "proj", "topic": "t", "ttlSeconds": -1},
                "input.invalid",
            ),
            ("repocontext_remember", {"repoId": "nope", "topic": "t"}, "repo.not_found"),
            (
                "repocontext_remember",
                {"repoId": "proj", "topic": "t", "body": "x" * 70_000},
                "input.invalid",
            ),
            ("repocontext_update", {"key": mem_key("proj", "t", "missing")}, "memory.not_found"),
            ("repocontext_update", {"key": file_key("proj", "core.py")}, "memory.wrong_family"),
            ("repocontext_neighbors", {"key": "garbage"}, "memory.wrong_family"),
        ]
        for tool, args, code in cases:
            body = error(await client.call_tool(tool, args))
            assert body["code"] == code, (tool, args, body)
            assert body["hint"]
        topics = ok(await client.call_tool("repocontext_list_topics", {"repoId": "proj"}))
        assert topics == {"topics": []}


async def test_eight_concurrent_clients_lose_nothing(workspace):
    key = mem_key("proj", "shared", "one")
    workspace.memory.remember("proj", "shared", entry_id="one", title="shared")

    async def client_writes(n: int) -> None:
        async with Client(build_server(workspace, workspace.settings)) as client:
            for r in range(5):
                ok(
                    await client.call_tool(
                        "repocontext_update",
                        {
                            "key": key,
                            "addTags": [f"c{n}-{r}"],
                            "addLinks": {"related": [mem_key("proj", "t", f"c{n}-{r}")]},
                        },
                    )
                )

    async with anyio.create_task_group() as group:
        for n in range(8):
            group.start_soon(client_writes, n)
    view = workspace.memory.recall(key)
    assert len(view["tags"]) == 40 and len(view["links"]["related"]) == 40
    assert view["fields"]["title"] == "shared"
