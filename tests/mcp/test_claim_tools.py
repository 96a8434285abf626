"""Claim tools through the real MCP client: grants, fence errors, backlog."""

import pytest
from mcp import Client

from repocontext.mcp import build_server
from repocontext.store.keys import file_key
from repocontext.testing import tool_error as error
from repocontext.testing import tool_ok as ok

pytestmark = pytest.mark.anyio


async def test_claim_write_with_token_and_fence_errors(workspace):
    async with Client(build_server(workspace, workspace.settings)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"repocontext_claim", "repocontext_claim_status", "repocontext_claim_next"} <= names
        key = ok(
            await client.call_tool(
                "repocontext_remember", {"repoId": "proj", "topic": "backlog", "title": "job"}
            )
        )["key"]
        got = ok(await client.call_tool("repocontext_claim", {"key": key, "owner": "w1"}))
        assert got["granted"] is True and got["fencingToken"] == 1
        denied = ok(await client.call_tool("repocontext_claim", {"key": key, "owner": "w2"}))
        assert denied == {
            "key": key,
            "granted": False,
            "fencingToken": None,
            "owner": None,
            "leaseExpiresAt": None,
            "reason": "contended",
        }
        refused = error(
            await client.call_tool("repocontext_update", {"key": key, "fields": {"body": "x"}})
        )
        assert refused["code"] == "claim.required" and refused["hint"]
        assert (
            error(
                await client.call_tool(
                    "repocontext_update",
                    {"key": key, "fields": {"body": "x"}, "fencingToken": 9},
                )
            )["code"]
            == "claim.unissued_token"
        )
        done = ok(
            await client.call_tool(
                "repocontext_update",
                {"key": key, "fields": {"status": "done"}, "fencingToken": 1},
            )
        )
        assert done["fields"]["status"] == "done" and done["claim"]["owner"] == "w1"
        status = ok(await client.call_tool("repocontext_claim_status", {"key": key}))
        assert status["isHeld"] is True and status["authoritative"] is False
        released = ok(
            await client.call_tool("repocontext_release_claim", {"key": key, "fencingToken": 1})
        )
        assert released["released"] is True
        empty = ok(
            await client.call_tool(
                "repocontext_claim_next", {"repoId": "proj", "topic": "backlog", "owner": "w3"}
            )
        )
        assert empty["granted"] is False and empty["reason"] == "empty"
        renewed = ok(
            await client.call_tool("repocontext_renew_claim", {"key": key, "fencingToken": 1})
        )
        assert renewed["granted"] is False and renewed["reason"] == "superseded"
        wrong = error(
            await client.call_tool(
                "repocontext_claim", {"key": file_key("proj", "core.py"), "owner": "w"}
            )
        )
        assert wrong["code"] == "memory.wrong_family"
        bad = error(
            await client.call_tool(
                "repocontext_claim", {"key": key, "owner": "", "leaseSeconds": 5}
            )
        )
        assert bad["code"] == "input.invalid"


async def test_claim_write_tools_need_the_write_grant(workspace):
    read_only = workspace.settings.model_copy(update={"enable_writes": False})
    async with Client(build_server(workspace, read_only)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert "repocontext_claim_status" in names
    assert not {
        n for n in names if n.startswith("repocontext_claim") and n != "repocontext_claim_status"
    }
    assert "repocontext_release_claim" not in names and "repocontext_renew_claim" not in names
