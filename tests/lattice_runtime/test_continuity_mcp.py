"""The continuity tools through the real MCP client, and ``lattice session resume|boundary``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from lattice_runtime.cli import app
from lattice_runtime.mcp import LatticeTasks, build_server
from lattice_runtime.session import (
    GrantIssued,
    Journal,
    PatchProposed,
    SessionStore,
    TaskAccepted,
    VerificationOutcome,
    sha256_text,
)
from tests.lattice_runtime.fixture_repos import PY_GOAL, make_repo
from tests.lattice_runtime.mcp_support import fixture_patch, ok, refused

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

CONTINUITY = ["lattice_record", "lattice_boundary", "lattice_resume"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    return ok(await client.call_tool(tool, arguments))


async def test_the_continuity_tools_are_offered_in_auto_and_always_but_not_off(
    repo: Path,
) -> None:
    for mode, offered in (("auto", True), ("always", True), ("off", False)):
        async with Client(build_server(LatticeTasks(repo, embedder="off"), mode=mode)) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
        assert all((name in names) is offered for name in CONTINUITY), mode
        assert "lattice_begin" in names


async def test_recorded_messages_and_a_compaction_come_back_from_lattice_resume(
    repo: Path,
) -> None:
    sid = SessionStore(repo).new().id
    async with Client(build_server(LatticeTasks(repo, embedder="off"))) as client:
        first = await call(
            client, "lattice_record", sessionId=sid, kind="human_message", messageId="m-1",
            text="never change the public API",
        )  # fmt: skip
        assert first == {
            "sessionId": sid,
            "sequence": 1,
            "kind": "human_message",
            "childSessionId": None,
        }
        await call(client, "lattice_record", sessionId=sid, kind="plan_approved",
                   planId="p-1", text="1. read 2. patch")  # fmt: skip
        await call(client, "lattice_record", sessionId=sid, kind="todo_list", items=["patch"])
        await call(client, "lattice_record", sessionId=sid, kind="delegated_result",
                   prompt="check the tests", result="they pass")  # fmt: skip
        before = await call(client, "lattice_resume", sessionId=sid)
        assert before["boundary"] is None and before["sections"]["hiddenMessages"] == []
        boundary = await call(client, "lattice_boundary", sessionId=sid, kind="compaction")
        assert boundary["sequence"] == 5
        projection = await call(client, "lattice_resume", sessionId=sid)
    sections = projection["sections"]
    assert projection["boundary"] == {"kind": "compaction", "sequence": 5}
    assert sections["hiddenMessages"] == [
        {"id": "m-1", "digest": sha256_text("never change the public API"), "sequence": 1}
    ]
    assert sections["plan"]["id"] == "p-1" and sections["todos"] == ["patch"]
    assert sections["delegatedResults"][0]["result"] == "they pass"
    assert "never change" not in json.dumps(projection)
    assert projection["omitted"] == [] and 0 < projection["bytes"] <= 262_144


async def test_a_delegation_boundary_answers_a_child_whose_resume_anchors_its_first_message(
    repo: Path,
) -> None:
    sid = SessionStore(repo).new().id
    async with Client(build_server(LatticeTasks(repo, embedder="off"))) as client:
        made = await call(client, "lattice_boundary", sessionId=sid, kind="delegation",
                          messageId="m-4", text="review service.py")  # fmt: skip
        child = made["childSessionId"]
        projection = await call(client, "lattice_resume", sessionId=child)
    assert projection["parentSessionId"] == sid
    assert projection["sections"]["firstMessage"] == {
        "id": "m-4",
        "digest": sha256_text("review service.py"),
    }


async def test_missing_fields_and_unknown_sessions_are_coded_refusals(repo: Path) -> None:
    sid = SessionStore(repo).new().id
    async with Client(build_server(LatticeTasks(repo, embedder="off"))) as client:
        missing = refused(
            await client.call_tool(
                "lattice_record", {"sessionId": sid, "kind": "human_message", "messageId": "m"}
            )
        )
        unknown = refused(await client.call_tool("lattice_resume", {"sessionId": "s-000000000000"}))
        delegation = refused(
            await client.call_tool("lattice_boundary", {"sessionId": sid, "kind": "delegation"})
        )
        malformed = refused(await client.call_tool("lattice_resume", {"sessionId": "../x"}))
    assert missing["code"] == "lattice.session" and "text" in missing["message"]
    assert unknown["code"] == "lattice.session_not_found"
    assert delegation["code"] == "lattice.session"
    assert malformed["code"] == "lattice.input_invalid"


async def test_run_steps_are_journaled_when_the_tasks_have_a_journal(repo: Path) -> None:
    tasks = LatticeTasks(repo, embedder="off", journal=Journal(repo))
    async with Client(build_server(tasks)) as client:
        started = ok(await client.call_tool("lattice_begin", {"task": PY_GOAL}))
        patch = fixture_patch(started["pages"])
        verdict = ok(
            await client.call_tool(
                "lattice_propose", {"taskId": started["taskId"], "response": patch}
            )
        )
    assert verdict["state"] == "PASSED"
    sid = SessionStore(repo).current(create=False).id
    payloads = [entry.payload for entry in Journal(repo).entries(sid)]
    assert [type(p) for p in payloads] == [
        TaskAccepted,
        GrantIssued,
        PatchProposed,
        VerificationOutcome,
    ]
    accepted, granted, proposed, verified = payloads
    assert isinstance(accepted, TaskAccepted) and accepted.criteria
    assert isinstance(granted, GrantIssued)
    assert set(granted.handles) == {page["editHandle"] for page in started["pages"]}
    assert proposed == PatchProposed(started["runId"], sha256_text(json.dumps(patch)))
    assert verified == VerificationOutcome(started["runId"], "PASSED", True)


async def test_lattice_mcp_over_stdio_journals_runs_and_honours_control_off(
    repo: Path,
) -> None:
    sid = SessionStore(repo).new().id
    names: dict[str, list[str]] = {}
    for mode in ("auto", "off"):
        server = StdioServerParameters(
            command=sys.executable,
            args=["-c", "from lattice_runtime.cli import main; main()", "mcp", "--repo",
                  str(repo), "--embedder", "off", "--control", mode],
            env=dict(os.environ),  # PYTHONPATH: the code under test
        )  # fmt: skip
        async with Client(server) as client:
            names[mode] = [tool.name for tool in (await client.list_tools()).tools]
            if mode == "auto":
                ok(await client.call_tool("lattice_begin", {"task": PY_GOAL}))
                await call(client, "lattice_boundary", sessionId=sid, kind="resume")
                projection = await call(client, "lattice_resume", sessionId=sid)
    assert set(CONTINUITY) <= set(names["auto"])
    assert not set(CONTINUITY) & set(names["off"])
    kinds = [entry.payload.KIND for entry in Journal(repo).entries(sid)]
    assert kinds == ["task_accepted", "grant_issued", "boundary"]
    assert projection["boundary"] == {"kind": "resume", "sequence": 3}


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_lattice_session_boundary_and_resume_print_the_projection(repo: Path) -> None:
    sid = SessionStore(repo).new().id
    Journal(repo).record_message(sid, "m-1", "the request")
    code, out, _ = invoke("session", "resume", "--repo", str(repo))
    assert code == 0 and "No boundary yet" in out
    code, out, _ = invoke("session", "boundary", "compaction", sid, "--repo", str(repo))
    assert code == 0 and "#2" in out
    code, out, _ = invoke("session", "resume", sid, "--repo", str(repo), "--json")
    assert code == 0
    projection = json.loads(out)
    assert projection["sections"]["hiddenMessages"][0]["id"] == "m-1"
    code, text, _ = invoke("session", "resume", sid, "--repo", str(repo))
    assert "Boundary: compaction (#2)" in text and "hiddenMessages" in text


def test_lattice_session_record_feeds_the_journal_the_projection_reads(repo: Path) -> None:
    sid = SessionStore(repo).new().id
    at = ("--repo", str(repo))
    assert invoke("session", "record", "human_message", *at, "--message-id", "m-1",
                  "--text", "ship it")[0] == 0  # fmt: skip
    assert invoke("session", "record", "plan_approved", sid, *at, "--plan-id", "p-1",
                  "--text", "the plan")[0] == 0  # fmt: skip
    assert invoke("session", "record", "todo_list", *at, "--item", "a", "--item", "b")[0] == 0
    code, _, err = invoke("session", "record", "human_message", *at, "--text", "no id")
    assert code != 0 and "lattice.config_invalid" in err
    code, _, err = invoke("session", "record", "delegated_result", *at)
    assert code != 0 and "lattice.config_invalid" in err
    invoke("session", "boundary", "compaction", *at)
    code, out, _ = invoke("session", "resume", *at, "--json")
    sections = json.loads(out)["sections"]
    assert [a["id"] for a in sections["hiddenMessages"]] == ["m-1"]
    assert sections["plan"]["id"] == "p-1" and sections["todos"] == ["a", "b"]


def test_lattice_session_resume_and_boundary_refuse_when_control_is_off(repo: Path) -> None:
    sid = SessionStore(repo).new().id
    for command in (["resume", sid], ["boundary", "resume", sid], ["record", "todo_list", sid]):
        code, _, err = invoke(
            "session", *command, "--repo", str(repo), env={"LATTICE_CONTROL": "off"}
        )
        assert code != 0 and "lattice.session" in err, command
    code, _, err = invoke("session", "boundary", "delegation", sid, "--repo", str(repo))
    assert code != 0 and "lattice.config_invalid" in err
    assert not (repo / ".lattice" / "journal").exists()
