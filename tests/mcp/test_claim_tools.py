"""Claim tools through the real MCP client: grants, fence errors, backlog, waiting."""

import time

import anyio
import pytest
from mcp import Client

from repocontext.mcp import build_server
from repocontext.store import MEMORY
from repocontext.store.keys import file_key
from repocontext.testing import tool_error as error
from repocontext.testing import tool_ok as ok

pytestmark = pytest.mark.anyio

WORKER_THREADS = 40
"""anyio's default limit of worker threads, which the SDK runs synchronous tools in."""


async def remember(client, topic: str, **fields) -> str:
    args = {"repoId": "proj", "topic": topic, "title": "item", **fields}
    return ok(await client.call_tool("repocontext_remember", args))["key"]


async def queued_at_least(workspace, key: str, count: int) -> None:
    """Return once ``count`` waiters are queued on ``key`` (bounded: fails after 20 s)."""
    started = time.monotonic()
    while len(workspace.store.get(MEMORY, key).doc.sets.get("waiters", ())) < count:
        assert time.monotonic() - started < 20, f"fewer than {count} waiters ever queued"
        await anyio.sleep(0.01)


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


@pytest.mark.timeout(120)
async def test_waiting_claims_hold_no_worker_thread_so_other_calls_answer_meanwhile(workspace):
    """More claims wait than the server has worker threads; an unrelated call still answers.

    Before the fix each waiting claim held a worker thread while it polled: with 45 waiters
    (40 threads) list_topics answered only once the first waiters gave up, and the last 5
    waiters started their 5 s wait only then (~10 s). Now list_topics answers while every
    waiter still waits (ordered by events, not timed), and each waiter gives up about 5 s
    after its call, with 3 s of slack for a loaded machine (before: ~10 s).
    """
    waiters, wait = WORKER_THREADS + 5, 5.0
    async with Client(build_server(workspace, workspace.settings)) as client:
        key = await remember(client, "contended")
        holder = {"key": key, "owner": "holder", "leaseSeconds": 120}
        assert ok(await client.call_tool("repocontext_claim", holder))["granted"]
        finished: list[tuple[str, float]] = []

        async def waiter(i: int) -> None:
            args = {"key": key, "owner": f"w{i}", "maxWaitSeconds": wait}
            started = time.monotonic()
            result = ok(await client.call_tool("repocontext_claim", args))
            finished.append((result["reason"], time.monotonic() - started))

        async with anyio.create_task_group() as group:
            for i in range(waiters):
                group.start_soon(waiter, i)
            await queued_at_least(workspace, key, WORKER_THREADS)
            topics = ok(await client.call_tool("repocontext_list_topics", {"repoId": "proj"}))
            assert topics["topics"] == [{"topic": "contended", "count": 1}]
            assert finished == []  # answered while every waiter still waits
        assert [reason for reason, _ in finished] == ["timeout"] * waiters
        assert max(seconds for _, seconds in finished) < wait + 3


@pytest.mark.timeout(120)
async def test_a_cancelled_waiting_claim_leaves_the_queue_and_is_never_granted(workspace):
    """A caller gives up on a claim that waits 60 s: the server stops waiting for it.

    Before the fix the call went on waiting in its worker thread (here the cancelling caller
    was held until the wait ended) and took the claim once it was free. Now it leaves the
    queue at once (bounded by 10 s of the 60 s asked for) and no token is issued to it.
    """
    server = build_server(workspace, workspace.settings)
    async with Client(server) as holder, Client(server) as impatient, Client(server) as other:
        key = await remember(holder, "cancel")
        held = ok(await holder.call_tool("repocontext_claim", {"key": key, "owner": "holder"}))
        args = {"key": key, "owner": "impatient", "maxWaitSeconds": 60, "leaseSeconds": 120}
        async with anyio.create_task_group() as group:
            group.start_soon(impatient.call_tool, "repocontext_claim", args)
            await queued_at_least(workspace, key, 1)
            cancelled = time.monotonic()
            group.cancel_scope.cancel()  # the agent gives up
        while workspace.store.get(MEMORY, key).doc.sets.get("waiters"):
            assert time.monotonic() - cancelled < 10, "the cancelled waiter is still queued"
            await anyio.sleep(0.01)
        assert time.monotonic() - cancelled < 10, "the cancelled call went on waiting"
        release = {"key": key, "fencingToken": held["fencingToken"]}
        assert ok(await holder.call_tool("repocontext_release_claim", release))["released"]
        got = ok(await other.call_tool("repocontext_claim", {"key": key, "owner": "other"}))
        assert got["granted"] is True
        assert got["fencingToken"] == 2  # no token was issued to the cancelled waiter


async def test_claim_next_refuses_a_bad_topic_or_an_unknown_repository(workspace):
    async with Client(build_server(workspace, workspace.settings)) as client:
        await remember(client, "decisions")  # not a work item of any backlog asked for below
        for topic in ("", "a b", "../decisions"):
            args = {"repoId": "proj", "topic": topic, "owner": "w"}
            refused = error(await client.call_tool("repocontext_claim_next", args))
            assert refused["code"] == "input.invalid", topic
        args = {"repoId": "nope", "topic": "decisions", "owner": "w"}
        refused = error(await client.call_tool("repocontext_claim_next", args))
        assert refused["code"] == "repo.not_found"
        status = await client.call_tool("repocontext_list_topics", {"repoId": "proj"})
        assert ok(status)["topics"] == [{"topic": "decisions", "count": 1}]


async def test_renew_and_release_refuse_a_token_never_issued(workspace):
    async with Client(build_server(workspace, workspace.settings)) as client:
        key = await remember(client, "backlog")
        never = {"key": key, "fencingToken": 5}
        renew = error(await client.call_tool("repocontext_renew_claim", never))
        assert renew["code"] == "claim.unissued_token"  # before the fix: superseded
        ok(await client.call_tool("repocontext_claim", {"key": key, "owner": "w"}))
        release = error(await client.call_tool("repocontext_release_claim", never))
        assert release["code"] == "claim.unissued_token"  # before the fix: stale
        missing = {"key": key.rsplit("/", 1)[0] + "/nope", "fencingToken": 1}
        gone = ok(await client.call_tool("repocontext_renew_claim", missing))
        assert (gone["granted"], gone["reason"]) == (False, "missing")
