"""The lattice_* MCP tools through the real MCP client, in memory, on the reset-token fixture."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from lattice_runtime.mcp import LatticeTasks, build_server
from tests.lattice_runtime.fixture_repos import PY_GOAL, SERVICE, make_repo, pytest_exit
from tests.lattice_runtime.mcp_support import fixture_patch, ok, refused

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

TOOLS = [
    "lattice_begin",
    "lattice_request_context",
    "lattice_propose",
    "lattice_apply",
    "lattice_status",
    "lattice_stats",
    "lattice_record",
    "lattice_boundary",
    "lattice_resume",
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


@pytest.fixture
async def client(repo: Path) -> AsyncIterator[Client]:
    async with Client(build_server(LatticeTasks(repo, embedder="off"))) as connected:
        yield connected


async def begin(client: Client, **extra: Any) -> dict[str, Any]:
    return ok(await client.call_tool("lattice_begin", {"task": PY_GOAL, **extra}))


async def test_every_tool_is_listed_with_an_input_and_an_output_schema(client: Client) -> None:
    listed = (await client.list_tools()).tools
    assert [tool.name for tool in listed] == TOOLS
    assert all(tool.output_schema and tool.description for tool in listed)
    begin_tool = listed[0]
    assert begin_tool.output_schema is not None
    assert {"runId", "taskId", "taskIR", "pages", "repositoryMap", "protocol", "turn"} <= set(
        begin_tool.output_schema["properties"]
    )


async def test_begin_answers_the_task_ir_pages_with_handles_the_map_and_the_rules(
    client: Client, repo: Path
) -> None:
    started = await begin(client)
    assert started["state"] == "WORKER_RUNNING"
    assert started["done"] is False
    assert started["taskIR"]["id"] == started["taskId"]
    assert started["turn"] == {
        "kind": "initial",
        "number": 1,
        "feedback": None,
        "faultsLeft": 3,
        "turnsLeft": 3,
    }
    service = next(page for page in started["pages"] if page["path"] == SERVICE)
    assert service["editHandle"].startswith("E")
    assert "replace_text" in service["permissions"]
    assert service["startLine"] == 1 and "def reset_password" in service["content"]
    tests_page = next(page for page in started["pages"] if page["path"].startswith("tests/"))
    assert tests_page["permissions"] == []
    assert all(
        isinstance(path, str) and isinstance(s, list) for path, s in started["repositoryMap"]
    )
    assert "lattice_propose" in started["protocol"]
    assert "lattice_request_context" in started["protocol"]
    pointer = repo / ".lattice" / "mcp" / f"{started['taskId']}.json"
    assert json.loads(pointer.read_text())["runId"] == started["runId"]


async def test_the_fixture_patch_passes_unapplied_and_apply_makes_the_tests_pass(
    client: Client, repo: Path
) -> None:
    before = (repo / SERVICE).read_text()
    assert pytest_exit(repo) != 0
    started = await begin(client, repo=str(repo))
    task = started["taskId"]
    verdict = ok(
        await client.call_tool(
            "lattice_propose", {"taskId": task, "response": fixture_patch(started["pages"])}
        )
    )
    assert verdict["state"] == "PASSED" and verdict["done"] is True
    assert "+        self._tokens.mark_consumed(token.value)" in verdict["diff"]
    assert verdict["applied"] is False
    assert [v["exitCode"] for v in verdict["verification"]] == [0]
    assert "lattice_apply" in verdict["next"]
    assert (repo / SERVICE).read_text() == before  # verified in a worktree, nothing written

    applied = ok(await client.call_tool("lattice_apply", {"taskId": task}))
    assert applied == {
        "runId": started["runId"],
        "taskId": task,
        "state": "PASSED",
        "applied": True,
        "files": [SERVICE],
    }
    assert pytest_exit(repo) == 0
    again = refused(await client.call_tool("lattice_apply", {"taskId": task}))
    assert again["code"] == "lattice.session"


async def test_a_patch_given_as_json_text_is_read_like_the_object(client: Client) -> None:
    started = await begin(client)
    text = json.dumps(fixture_patch(started["pages"]))
    verdict = ok(
        await client.call_tool("lattice_propose", {"taskId": started["taskId"], "response": text})
    )
    assert verdict["state"] == "PASSED"


async def test_a_context_request_answers_only_the_new_pages_and_spends_a_fault(
    client: Client,
) -> None:
    started = await begin(client)
    known = {page["editHandle"] for page in started["pages"]}
    [(unpaged, _)] = [entry for entry in started["repositoryMap"] if entry[0] == ".gitignore"]
    asked = ok(
        await client.call_tool(
            "lattice_request_context",
            {
                "taskId": started["taskId"],
                "requests": [{"reason": "what is ignored", "pathHint": unpaged}],
            },
        )
    )
    assert asked["state"] == "WORKER_RUNNING"
    assert asked["turn"]["kind"] == "context_fault"
    assert asked["turn"]["number"] == 2 and asked["turn"]["faultsLeft"] == 2
    assert "Granted 1 more page" in asked["turn"]["feedback"]
    assert [page["path"] for page in asked["pages"]] == [".gitignore"]
    assert not {page["editHandle"] for page in asked["pages"]} & known
    status = ok(await client.call_tool("lattice_status", {"taskId": started["taskId"]}))
    assert {page["editHandle"] for page in status["pages"]} >= known | {
        asked["pages"][0]["editHandle"]
    }


async def test_context_requests_past_the_fault_budget_end_the_run_failed(client: Client) -> None:
    started = await begin(client)
    task = started["taskId"]
    request = {"taskId": task, "requests": [{"reason": "more", "symbol": "AuditLog"}]}
    answers = [ok(await client.call_tool("lattice_request_context", request)) for _ in range(4)]
    assert [a["turn"]["faultsLeft"] for a in answers[:3]] == [2, 1, 0]
    last = answers[3]
    assert last["done"] is True and last["state"] == "FAILED" and last["turn"] is None
    assert last["reason"].startswith("lattice.budget_exhausted")
    assert "lattice_begin" in last["next"]
    ended = refused(await client.call_tool("lattice_request_context", request))
    assert ended["code"] == "lattice.session"
    assert "lattice_begin" in ended["hint"]


async def test_a_patch_editing_the_tests_gets_a_permission_denied_revision_turn(
    client: Client, repo: Path
) -> None:
    started = await begin(client)
    tests_handle = handle_for_tests(started["pages"])
    patch = {
        "kind": "patch",
        "patch": {
            "summary": "make the tests pass by editing them",
            "changes": [
                {
                    "editHandle": tests_handle,
                    "operation": "replace_file",
                    "replacementContent": "def test_nothing():\n    pass\n",
                }
            ],
            "verificationCommands": ["python -m pytest -q"],
        },
    }
    revision = ok(
        await client.call_tool("lattice_propose", {"taskId": started["taskId"], "response": patch})
    )
    assert revision["state"] == "WORKER_RUNNING" and revision["done"] is False
    assert revision["turn"]["kind"] == "patch_revision"
    assert "permission_denied" in revision["reason"]
    assert "permission_denied" in revision["turn"]["feedback"]
    assert revision["pages"] == []  # nothing new: the handles of begin still stand
    assert pytest_exit(repo) != 0  # nothing was written
    verdict = ok(
        await client.call_tool(
            "lattice_propose",
            {"taskId": started["taskId"], "response": fixture_patch(started["pages"])},
        )
    )
    assert verdict["state"] == "PASSED"


def handle_for_tests(pages: list[dict[str, Any]]) -> str:
    [handle] = [p["editHandle"] for p in pages if p["path"].startswith("tests/")]
    return str(handle)


async def test_malformed_json_gets_one_protocol_repair_turn(client: Client) -> None:
    started = await begin(client)
    repair = ok(
        await client.call_tool(
            "lattice_propose", {"taskId": started["taskId"], "response": '{"kind": "patch", '}
        )
    )
    assert repair["turn"]["kind"] == "protocol_repair"
    assert repair["turn"]["feedback"]


async def test_a_request_without_path_or_symbol_is_refused_and_the_turn_still_waits(
    client: Client,
) -> None:
    started = await begin(client)
    answer = refused(
        await client.call_tool(
            "lattice_request_context",
            {"taskId": started["taskId"], "requests": [{"reason": "anything"}]},
        )
    )
    assert answer["code"] == "lattice.protocol_invalid"
    assert "pathHint" in answer["hint"]
    status = ok(await client.call_tool("lattice_status", {"taskId": started["taskId"]}))
    assert status["turn"]["number"] == 1 and status["telemetry"]["turns"] == 0


async def test_an_unknown_or_malformed_task_id_is_refused_and_nothing_is_written(
    client: Client, repo: Path
) -> None:
    unknown = refused(await client.call_tool("lattice_status", {"taskId": "task-0123456789ab"}))
    assert unknown["code"] == "lattice.task_invalid"
    assert "lattice_begin" in unknown["hint"]
    malformed = refused(
        await client.call_tool("lattice_propose", {"taskId": "../../etc", "response": "{}"})
    )
    assert malformed["code"] == "lattice.task_invalid"
    assert not (repo / ".lattice").exists()


async def test_a_repository_other_than_the_servers_is_refused_and_nothing_is_written(
    client: Client, repo: Path, tmp_path: Path
) -> None:
    other = make_repo(tmp_path / "elsewhere")
    for given in (str(other), "..", "../elsewhere/work"):
        answer = refused(await client.call_tool("lattice_begin", {"task": PY_GOAL, "repo": given}))
        assert answer["code"] == "lattice.unsafe_path"
    assert not (repo / ".lattice").exists()
    assert not (other / ".lattice").exists()
    assert ok(await client.call_tool("lattice_begin", {"task": PY_GOAL, "repo": "."}))["taskId"]


async def test_arguments_off_the_schema_and_unknown_tools_are_coded_errors(
    client: Client,
) -> None:
    empty = refused(await client.call_tool("lattice_begin", {"task": ""}))
    assert empty["code"] == "lattice.input_invalid" and "task" in empty["message"]
    missing = refused(await client.call_tool("lattice_propose", {"taskId": "task-0123456789ab"}))
    assert missing["code"] == "lattice.input_invalid" and "response" in missing["message"]
    nothing = refused(await client.call_tool("lattice_write_file", {}))
    assert nothing["code"] == "lattice.input_invalid"


async def test_a_goal_that_does_not_compile_is_refused_and_nothing_is_written(
    client: Client, repo: Path
) -> None:
    answer = refused(await client.call_tool("lattice_begin", {"task": "   "}))
    assert answer["code"] == "lattice.task_invalid"
    assert not (repo / ".lattice").exists()


async def test_applying_a_run_that_did_not_pass_is_refused(client: Client) -> None:
    started = await begin(client)
    answer = refused(await client.call_tool("lattice_apply", {"taskId": started["taskId"]}))
    assert answer["code"] == "lattice.session"


async def test_a_file_changed_after_verification_makes_apply_refuse_stale_and_write_nothing(
    client: Client, repo: Path
) -> None:
    started = await begin(client)
    task = started["taskId"]
    patch = fixture_patch(started["pages"])
    assert (
        ok(await client.call_tool("lattice_propose", {"taskId": task, "response": patch}))["state"]
        == "PASSED"
    )
    changed = (repo / SERVICE).read_text() + "\n# edited meanwhile\n"
    (repo / SERVICE).write_text(changed)
    answer = refused(await client.call_tool("lattice_apply", {"taskId": task}))
    assert answer["code"] == "lattice.stale_file"
    assert (repo / SERVICE).read_text() == changed


async def test_status_and_stats_report_the_run_history_and_totals(client: Client) -> None:
    started = await begin(client)
    task = started["taskId"]
    await client.call_tool(
        "lattice_propose", {"taskId": task, "response": fixture_patch(started["pages"])}
    )
    status = ok(await client.call_tool("lattice_status", {"taskId": task}))
    assert status["state"] == "PASSED" and status["turn"] is None
    assert status["transitions"][0] == {
        "from": "CREATED",
        "to": "COMPILED",
        "reason": status["transitions"][0]["reason"],
        "at": status["transitions"][0]["at"],
    }
    assert status["transitions"][-1]["to"] == "PASSED"
    assert status["telemetry"]["turns"] == 1
    assert status["telemetry"]["verifications"] == 1
    assert set(status["telemetry"]) == {
        "turns",
        "tokensPerTurn",
        "contextFaults",
        "pagesGranted",
        "grantsIssued",
        "verifications",
        "verificationSeconds",
    }
    await begin(client)  # a second run of the task, waiting for its first answer
    stats = ok(await client.call_tool("lattice_stats", {}))
    assert stats["runs"] == 2
    assert stats["byState"] == {"PASSED": 1, "WORKER_RUNNING": 1}
    assert stats["turns"] == 1 and stats["verifications"] == 1
    assert stats["pagesGranted"] >= 2 * len(started["pages"])
    assert stats["verificationSeconds"] > 0
    latest = ok(await client.call_tool("lattice_status", {"taskId": task}))
    assert latest["runId"] != started["runId"]  # the task id points at its latest run
