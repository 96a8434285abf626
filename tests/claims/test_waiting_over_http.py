"""A waiting claim through the real HTTP MCP server (``repocontext serve --transport http``)."""

import time
from pathlib import Path

import anyio
import pytest

from repocontext.mcp.client import http_client
from repocontext.settings import Settings
from repocontext.store import MEMORY, Store
from repocontext.testing import start_http_server, tool_ok
from repocontext.workspace import Workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]


def waiters(store: Store, key: str) -> frozenset[str]:
    return store.get(MEMORY, key).doc.sets.get("waiters", frozenset())


async def test_a_cancelled_waiting_claim_over_http_leaves_the_queue_and_is_never_granted(
    tmp_path: Path,
):
    """The caller cancels a claim that waits 60 s; the server stops waiting for it.

    Before the fix the server went on waiting and, once the holder released, issued the
    claim (a new token, a 120 s lease) to the caller that had gone: everyone else got
    `contended`. Now the waiter leaves the queue within 10 s of the cancel (the call asked
    for 60 s) and the next claimant gets the next token.
    """
    repo = tmp_path / "ws" / "proj"
    repo.mkdir(parents=True)
    (repo / "a.py").write_text("x = 1\n")
    data = tmp_path / "data"
    with Workspace.open(Settings(data_dir=data, workspace_root=repo.parent)) as workspace:
        workspace.bootstrap(repo, "proj", background=False)
        key = workspace.remember("proj", "cancel", title="contended").key
    server, base = start_http_server(data, repo.parent)
    try:
        with Store.open(data, read_only=True) as store:
            async with (
                http_client(f"{base}/mcp") as holder,
                http_client(f"{base}/mcp") as impatient,
                http_client(f"{base}/mcp") as other,
            ):
                held = tool_ok(
                    await holder.call_tool("repocontext_claim", {"key": key, "owner": "holder"})
                )
                wait = {"key": key, "owner": "gone", "maxWaitSeconds": 60, "leaseSeconds": 120}
                async with anyio.create_task_group() as group:
                    group.start_soon(impatient.call_tool, "repocontext_claim", wait)
                    started = time.monotonic()
                    while not waiters(store, key):
                        assert time.monotonic() - started < 20, "the waiter never queued"
                        await anyio.sleep(0.01)
                    cancelled = time.monotonic()
                    group.cancel_scope.cancel()  # the agent gives up
                while waiters(store, key):
                    assert time.monotonic() - cancelled < 10, "the cancelled waiter is queued"
                    await anyio.sleep(0.01)
                release = {"key": key, "fencingToken": held["fencingToken"]}
                tool_ok(await holder.call_tool("repocontext_release_claim", release))
                got = tool_ok(
                    await other.call_tool("repocontext_claim", {"key": key, "owner": "other"})
                )
                assert (got["granted"], got["fencingToken"]) == (True, 2)
    finally:
        server.terminate()
        server.wait(30)
