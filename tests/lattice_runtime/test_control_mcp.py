"""Explicit control through the real MCP client: tools offered only in `always`, receipts."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from lattice_runtime.control import ExplicitControl
from lattice_runtime.mcp import LatticeTasks, build_server
from lattice_runtime.mcp.control_tools import CONTROL_TOOLS
from lattice_runtime.session import SessionStore
from tests.lattice_runtime.fixture_repos import PY_GOAL, SERVICE, make_repo, pytest_exit
from tests.lattice_runtime.mcp_support import fixture_patch, ok, refused

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

CONTRACT = {
    "summary": "Reset tokens must be single-use",
    "outcome": "A second reset with the same token is refused",
    "scope": ["src/resetkit/"],
    "criteria": ["the test suite passes"],
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


@pytest.fixture
def control(repo: Path, tmp_path: Path) -> ExplicitControl:
    return ExplicitControl(repo, state_dir=tmp_path / "user-state")


@pytest.fixture
async def client(repo: Path, control: ExplicitControl) -> AsyncIterator[Client]:
    tasks = LatticeTasks(repo, embedder="off")
    async with Client(build_server(tasks, mode="always", control=control)) as connected:
        yield connected


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return ok(await client.call_tool(tool, arguments))


async def passed_task(client: Client) -> str:
    started = await call(client, "lattice_begin", {"task": PY_GOAL})
    task = started["taskId"]
    response = fixture_patch(started["pages"])
    verdict = await call(client, "lattice_propose", {"taskId": task, "response": response})
    assert verdict["state"] == "PASSED"
    return str(task)


@pytest.mark.parametrize("mode", ["auto", "off"])
async def test_the_control_tools_are_not_listed_outside_explicit_mode(
    repo: Path, mode: str
) -> None:
    server = build_server(LatticeTasks(repo, embedder="off"), mode=mode)  # type: ignore[arg-type]
    async with Client(server) as connected:
        names = {tool.name for tool in (await connected.list_tools()).tools}
        assert names.isdisjoint(CONTROL_TOOLS)
        answer = refused(await connected.call_tool("lattice_refresh_context", {}))
        assert answer["code"] == "lattice.input_invalid"


async def test_explicit_mode_lists_every_control_tool(client: Client) -> None:
    names = [tool.name for tool in (await client.list_tools()).tools]
    assert names[-len(CONTROL_TOOLS) :] == list(CONTROL_TOOLS)


async def test_apply_needs_a_receipt_that_works_exactly_once(client: Client, repo: Path) -> None:
    contract = await call(client, "lattice_intake", {"request": PY_GOAL, "contract": CONTRACT})
    assert contract["revision"] == 1 and contract["frontier"]["sequence"] == 1
    task = await passed_task(client)
    bare = refused(await client.call_tool("lattice_apply", {"taskId": task}))
    assert bare["code"] == "lattice.receipt_required"
    fresh = await call(client, "lattice_refresh_context", {"taskId": task})
    assert fresh["epoch"]["targets"][0]["path"] == SERVICE
    receipt = fresh["receipt"]
    applied = await call(client, "lattice_apply", {"taskId": task, "receipt": receipt})
    assert applied["applied"] is True and applied["files"] == [SERVICE]
    assert pytest_exit(repo) == 0
    again = refused(await client.call_tool("lattice_apply", {"taskId": task, "receipt": receipt}))
    assert again["code"] == "lattice.receipt_consumed"


async def test_a_new_human_message_stales_the_receipt_until_reviewed_and_refreshed(
    client: Client, repo: Path
) -> None:
    await call(client, "lattice_intake", {"request": PY_GOAL, "contract": CONTRACT})
    task = await passed_task(client)
    receipt = (await call(client, "lattice_refresh_context", {"taskId": task}))["receipt"]
    before = (repo / SERVICE).read_text()
    arguments = {"message": "wait: also log each reset", "decisions": ["log resets later"]}
    reviewed = await call(client, "lattice_review_input", arguments)
    assert reviewed["revision"] == 2 and reviewed["decisions"] == ["log resets later"]
    stale = refused(await client.call_tool("lattice_apply", {"taskId": task, "receipt": receipt}))
    assert stale["code"] == "lattice.authorization_stale"
    assert (repo / SERVICE).read_text() == before
    receipt = (await call(client, "lattice_refresh_context", {"taskId": task}))["receipt"]
    assert ok(await client.call_tool("lattice_apply", {"taskId": task, "receipt": receipt}))


async def test_a_target_changed_by_someone_else_refuses_the_apply_and_uses_the_receipt(
    client: Client, repo: Path
) -> None:
    await call(client, "lattice_intake", {"request": PY_GOAL, "contract": CONTRACT})
    task = await passed_task(client)
    receipt = (await call(client, "lattice_refresh_context", {"taskId": task}))["receipt"]
    (repo / SERVICE).write_text((repo / SERVICE).read_text() + "\n# edited by hand\n")
    stale = refused(await client.call_tool("lattice_apply", {"taskId": task, "receipt": receipt}))
    assert stale["code"] == "lattice.authorization_stale"
    again = refused(await client.call_tool("lattice_apply", {"taskId": task, "receipt": receipt}))
    assert again["code"] == "lattice.receipt_consumed"


async def test_a_handoff_or_resume_reported_by_the_journal_stales_the_receipt(
    client: Client, control: ExplicitControl
) -> None:
    await call(client, "lattice_intake", {"request": PY_GOAL, "contract": CONTRACT})
    task = await passed_task(client)
    for kind in ("handoff", "resume"):
        receipt = (await call(client, "lattice_refresh_context", {"taskId": task}))["receipt"]
        control.boundary(kind)  # type: ignore[arg-type]
        args = {"taskId": task, "receipt": receipt}
        assert refused(await client.call_tool("lattice_apply", args))["code"] == (
            "lattice.authorization_stale"
        )


async def test_the_plan_graph_through_the_tools(client: Client) -> None:
    await call(client, "lattice_intake", {"request": PY_GOAL, "contract": CONTRACT})
    plan = await call(client, "lattice_plan_add", {"title": "Single-use", "criteria": ["once"]})
    [node] = plan["nodes"]
    split = await call(
        client,
        "lattice_plan_split",
        {"nodeId": node["nodeId"], "parts": [{"title": "Fix"}, {"title": "Test"}]},
    )
    fix, test = (n["nodeId"] for n in split["nodes"][1:])
    await call(client, "lattice_plan_archive", {"nodeId": test})
    held = await call(
        client,
        "lattice_checkout",
        {"nodeId": fix, "owner": "agent-a", "generation": split["generation"]},
    )
    assert held["lease"]["owner"] == "agent-a"
    conflict = refused(
        await client.call_tool(
            "lattice_checkout",
            {"nodeId": fix, "owner": "agent-b", "generation": split["generation"]},
        )
    )
    assert conflict["code"] == "lattice.lease_conflict"
    reframed = await call(client, "lattice_reframe", {"contract": {"summary": "Also expire"}})
    assert reframed["reconciliationRequired"] == [fix]
    updated = await call(client, "lattice_plan_update", {"nodeId": fix, "criteria": ["expire"]})
    assert not any(n["reconciliationRequired"] for n in updated["nodes"])
    evidence = {
        "nodeId": fix,
        "generation": held["lease"]["generation"],
        "evidence": "mechanical: lattice_apply applied",
        "artifacts": [SERVICE],
        "complete": True,
    }
    no_proof = refused(await client.call_tool("lattice_checkpoint", evidence))
    assert no_proof["code"] == "lattice.evidence_required"
    evidence["evidence"] = "Tokens are marked consumed on first use; a second reset fails."
    done = await call(client, "lattice_checkpoint", evidence)
    assert next(n for n in done["nodes"] if n["nodeId"] == fix)["status"] == "done"


@pytest.mark.timeout(120)
async def test_lattice_mcp_control_always_serves_the_tools_and_anchors_outside_the_repo(
    repo: Path, tmp_path: Path
) -> None:
    state_home = tmp_path / "xdg-state"
    server = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from lattice_runtime.cli import main; main()", "mcp", "--control", "always"],
        env={**os.environ, "XDG_STATE_HOME": str(state_home)},  # PYTHONPATH: the code under test
        cwd=str(repo),
    )
    async with Client(server) as stdio:
        names = {tool.name for tool in (await stdio.list_tools()).tools}
        assert set(CONTROL_TOOLS) <= names
        await call(stdio, "lattice_intake", {"request": PY_GOAL, "contract": CONTRACT})
    [anchor] = state_home.rglob("anchor.json")
    assert anchor.parent.parent == state_home / "lattice"
    assert (repo / ".lattice" / "contract" / "r0001.json").is_file()


async def test_an_apply_of_an_unknown_task_still_uses_up_the_receipt(client: Client) -> None:
    await call(client, "lattice_intake", {"request": PY_GOAL, "contract": CONTRACT})
    receipt = (await call(client, "lattice_refresh_context", {"targets": [SERVICE]}))["receipt"]
    unknown = {"taskId": "task-000000000000", "receipt": receipt}
    assert refused(await client.call_tool("lattice_apply", unknown))["code"] == (
        "lattice.task_invalid"
    )
    task = await passed_task(client)
    again = refused(await client.call_tool("lattice_apply", {"taskId": task, "receipt": receipt}))
    assert again["code"] == "lattice.receipt_consumed"


async def test_the_journals_message_and_boundary_tools_stale_the_receipt(
    client: Client, repo: Path
) -> None:
    await call(client, "lattice_intake", {"request": PY_GOAL, "contract": CONTRACT})
    task = await passed_task(client)
    session = SessionStore(repo).current(create=False).id  # the session the run is in
    receipt = (await call(client, "lattice_refresh_context", {"taskId": task}))["receipt"]
    await call(client, "lattice_boundary", {"sessionId": session, "kind": "compaction"})
    args = {"taskId": task, "receipt": receipt}
    assert refused(await client.call_tool("lattice_apply", args))["code"] == (
        "lattice.authorization_stale"
    )
    receipt = (await call(client, "lattice_refresh_context", {"taskId": task}))["receipt"]
    message = {"sessionId": session, "kind": "human_message", "messageId": "m9", "text": "stop"}
    await call(client, "lattice_record", message)
    args = {"taskId": task, "receipt": receipt}
    code = refused(await client.call_tool("lattice_apply", args))["code"]
    assert code in {"lattice.authorization_stale", "lattice.input_unreviewed"}
