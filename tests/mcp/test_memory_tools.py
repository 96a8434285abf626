"""Memory tools through the real MCP client: grants, views, errors, concurrent clients."""

import anyio
import pytest
from mcp import Client

from repocontext.mcp import build_server
from repocontext.memory.service import MAX_TTL_SECONDS
from repocontext.store.keys import file_key, mem_key
from repocontext.testing import FakeClock
from repocontext.testing import tool_error as error
from repocontext.testing import tool_ok as ok
from repocontext.workspace import Workspace

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
            ("repocontext_neighbors", {"key": "garbage"}, "store.invalid_key"),  # as everywhere
        ]
        for tool, args, code in cases:
            body = error(await client.call_tool(tool, args))
            assert body["code"] == code, (tool, args, body)
            assert body["hint"]
        topics = ok(await client.call_tool("repocontext_list_topics", {"repoId": "proj"}))
        assert topics == {"topics": []}


async def test_eight_concurrent_clients_lose_nothing(workspace):
    key = mem_key("proj", "shared", "one")
    workspace.remember("proj", "shared", entry_id="one", title="shared")

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
    view = workspace.recall_note(key)
    assert len(view.tags) == 40 and len(view.links["related"]) == 40
    assert view.fields["title"] == "shared"


@pytest.fixture
def clocked(workspace):
    """The `proj` workspace reopened with a fake clock, so entries expire without sleeping."""
    clock = FakeClock()
    workspace.close()
    with Workspace.open(workspace.settings, clock=clock) as reopened:
        yield reopened, clock


async def test_remembering_an_expired_or_forgotten_id_makes_a_new_entry(clocked):
    workspace, clock = clocked
    async with Client(build_server(workspace, workspace.settings)) as client:

        async def call(tool, **args):
            return ok(await client.call_tool(tool, args))

        old = {"repoId": "proj", "topic": "t", "body": "OLD", "tags": ["old"], "ttlSeconds": 1}
        key = (await call("repocontext_remember", id="a", **old))["key"]
        clock.advance(2)
        new = await call("repocontext_remember", repoId="proj", topic="t", id="a", title="new")
        assert (new["fields"].get("body"), new["tags"], new["expiresAt"]) == (None, [], None)
        assert (await call("repocontext_recall", key=key))["exists"] is True
        topics = await call("repocontext_list_topics", repoId="proj")
        assert topics == {"topics": [{"topic": "t", "count": 1}]}
        assert (await call("repocontext_update", key=key, fields={"body": "b"}))["exists"]
        # Forgotten with a TTL ahead, then remembered without one: durable.
        await call("repocontext_update", key=key, ttlSeconds=30)
        assert (await call("repocontext_forget", key=key))["forgotten"] is True
        again = await call("repocontext_remember", repoId="proj", topic="t", id="a", title="x")
        assert (again["expiresAt"], again["fields"].get("body")) == (None, None)


async def test_huge_ttls_are_cut_null_status_clears_and_null_kind_is_refused(workspace):
    async with Client(build_server(workspace, workspace.settings)) as client:

        async def call(tool, **args):
            return await client.call_tool(tool, args)

        made = ok(await call("repocontext_remember", repoId="proj", topic="t", ttlSeconds=1e17))
        assert made["remainingSeconds"] == pytest.approx(MAX_TTL_SECONDS, abs=1)
        key = made["key"]
        updated = ok(await call("repocontext_update", key=key, ttlSeconds=1e300))
        assert updated["remainingSeconds"] == pytest.approx(MAX_TTL_SECONDS, abs=1)
        ok(await call("repocontext_update", key=key, fields={"status": "done"}))
        cleared = ok(await call("repocontext_update", key=key, fields={"status": None}))
        assert "status" not in cleared["fields"]
        refused = error(await call("repocontext_update", key=key, fields={"kind": None}))
        assert refused["code"] == "input.invalid" and refused["hint"]
        lapsed = ok(await call("repocontext_forget", key=key, lapse=True, lapseSeconds=1e300))
        assert lapsed["forgotten"] is True and lapsed["lapsesAt"] > 0


async def test_the_claim_view_keeps_the_highest_token_after_a_forget(workspace):
    async with Client(build_server(workspace, workspace.settings)) as client:
        key = mem_key("proj", "backlog", "item")
        made = {"repoId": "proj", "topic": "backlog", "id": "item", "title": "t"}
        ok(await client.call_tool("repocontext_remember", made))
        token = ok(await client.call_tool("repocontext_claim", {"key": key, "owner": "w1"}))[
            "fencingToken"
        ]
        ok(await client.call_tool("repocontext_forget", {"key": key, "fencingToken": token}))
        back = ok(await client.call_tool("repocontext_remember", made))
        assert back["claim"]["fencingToken"] == token and back["claim"]["claimed"] is False
        again = ok(await client.call_tool("repocontext_claim", {"key": key, "owner": "w2"}))
        assert again["fencingToken"] == token + 1
