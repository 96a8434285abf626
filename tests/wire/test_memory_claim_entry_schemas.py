"""The memory, claim and entry tools answer with what their declared outputSchema allows.

Real calls through the real MCP client; each structured result is validated against the
schema ``tools/list`` declared for its tool, and the CLI ``--json`` form equals it.
"""

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client
from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.mcp import build_server
from repocontext.settings import Settings
from repocontext.store.keys import file_key, mem_key, repo_key
from repocontext.testing import tool_ok
from repocontext.workspace import Workspace

pytestmark = pytest.mark.anyio

TOOLS = {
    "repocontext_recall",
    "repocontext_scan",
    "repocontext_remember",
    "repocontext_update",
    "repocontext_forget",
    "repocontext_list_topics",
    "repocontext_neighbors",
    "repocontext_claim",
    "repocontext_claim_next",
    "repocontext_renew_claim",
    "repocontext_release_claim",
    "repocontext_claim_status",
}


@pytest.fixture
def workspace(tmp_path: Path):
    repo = tmp_path / "ws" / "proj"
    (repo / "lib").mkdir(parents=True)
    (repo / "lib" / "core.py").write_text("def compute(x):\n    return x * 2\n")
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_root=tmp_path / "ws",
        enable_writes=True,
        embedder="off",
    )
    with Workspace.open(settings) as opened:
        opened.bootstrap(repo, "proj", background=False)
        yield opened


class Checked:
    """Calls tools and validates every structured result against the tool's outputSchema."""

    def __init__(self, client: Client, schemas: dict[str, dict[str, Any]]) -> None:
        self.client = client
        self.schemas = schemas
        self.called: set[str] = set()

    async def __call__(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = tool_ok(await self.client.call_tool(tool, args))
        jsonschema.validate(result, self.schemas[tool])
        self.called.add(tool)
        return result


async def test_every_memory_claim_and_entry_answer_matches_its_declared_output_schema(workspace):
    async with Client(build_server(workspace, workspace.settings)) as client:
        listed = (await client.list_tools()).tools
        schemas = {t.name: t.output_schema for t in listed if t.name in TOOLS}
        assert schemas.keys() == TOOLS and all(schemas.values())
        call = Checked(client, schemas)

        other = await call("repocontext_remember", {"repoId": "proj", "topic": "notes"})
        made = await call(
            "repocontext_remember",
            {
                "repoId": "proj",
                "topic": "backlog",
                "title": "double it",
                "tags": ["math"],
                "addLinks": {
                    "anchoredTo": [file_key("proj", "lib/core.py")],
                    "related": [other["key"]],
                },
                "ttlSeconds": 3600,
            },
        )
        key = made["key"]
        await call("repocontext_forget", {"key": other["key"]})  # the related link goes stale
        granted = await call("repocontext_claim", {"key": key, "owner": "a"})
        token = granted["fencingToken"]
        assert (await call("repocontext_claim", {"key": key, "owner": "b"}))[
            "reason"
        ] == "contended"
        missing = mem_key("proj", "backlog", "nope")
        assert (await call("repocontext_claim", {"key": missing, "owner": "b"}))["granted"] is False
        updated = await call(
            "repocontext_update", {"key": key, "fields": {"body": "b"}, "fencingToken": token}
        )
        assert updated["claim"]["fencingToken"] == token
        assert updated["staleLinks"] == [
            {"relation": "related", "key": other["key"], "reason": "missing"}
        ]
        assert (await call("repocontext_claim_status", {"key": key}))["isHeld"] is True
        renewed = await call("repocontext_renew_claim", {"key": key, "fencingToken": token})
        assert renewed["granted"] is True
        released = await call("repocontext_release_claim", {"key": key, "fencingToken": token})
        assert released["released"] is True
        again = await call("repocontext_release_claim", {"key": key, "fencingToken": token})
        assert again["reason"] == "unclaimed"
        late = await call("repocontext_renew_claim", {"key": key, "fencingToken": token})
        assert late["reason"] == "superseded"
        status = await call("repocontext_claim_status", {"key": key})
        assert status["releasedFencingToken"] == token
        await call("repocontext_claim_status", {"key": missing})
        nxt = await call(
            "repocontext_claim_next", {"repoId": "proj", "topic": "backlog", "owner": "c"}
        )
        assert (nxt["key"], nxt["fencingToken"]) == (key, token + 1)
        empty = await call(
            "repocontext_claim_next", {"repoId": "proj", "topic": "backlog", "owner": "d"}
        )
        assert empty == {
            "key": None, "granted": False, "fencingToken": None, "owner": None,
            "leaseExpiresAt": None, "reason": "empty",
        }  # fmt: skip

        for entry in (key, missing, repo_key("proj"), file_key("proj", "lib/core.py")):
            await call("repocontext_recall", {"key": entry})
        for scope in ("files", "packages", "symbols", "memory"):
            page = await call("repocontext_scan", {"repoId": "proj", "scope": scope, "pageSize": 1})
            assert len(page["entries"]) == 1
        [symbol] = (await call("repocontext_scan", {"repoId": "proj", "scope": "symbols"}))[
            "entries"
        ]
        assert (await call("repocontext_recall", {"key": symbol["key"]}))["fields"][
            "usersCount"
        ] == 0
        topics = await call("repocontext_list_topics", {"repoId": "proj"})
        assert topics == {"topics": [{"topic": "backlog", "count": 1}]}
        walk = await call("repocontext_neighbors", {"key": key})
        assert {node["from"] for node in walk["nodes"]} == {key}
        assert [n["stale"] for n in walk["nodes"] if n["key"] == other["key"]] == [True]
        lapsed = await call(
            "repocontext_forget",
            {"key": key, "lapse": True, "lapseSeconds": 5, "fencingToken": nxt["fencingToken"]},
        )
        assert lapsed["lapsesAt"] is not None
        assert call.called == TOOLS


async def test_cli_json_equals_the_tools_structured_content(tmp_path: Path):
    repo = tmp_path / "ws" / "proj"
    repo.mkdir(parents=True)
    (repo / "core.py").write_text("def compute(x):\n    return x * 2\n")
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_root=tmp_path / "ws",
        enable_writes=True,
        embedder="off",
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, "proj", background=False)
        anchor = {"anchoredTo": [file_key("proj", "core.py")]}
        key = workspace.remember("proj", "notes", title="t", add_links=anchor).key
        workspace.claim(key, "cli", lease_seconds=600)
        calls = {
            ("memory", "recall", key): ("repocontext_recall", {"key": key}),
            ("memory", "topics", "--repo-id", "proj"): (
                "repocontext_list_topics",
                {"repoId": "proj"},
            ),
            ("memory", "neighbors", key): ("repocontext_neighbors", {"key": key}),
            ("claims", "status", key): ("repocontext_claim_status", {"key": key}),
        }
        async with Client(build_server(workspace, workspace.settings)) as client:
            over_mcp = {
                command: tool_ok(await client.call_tool(tool, args))
                for command, (tool, args) in calls.items()
            }
    runner = CliRunner()
    for command, expected in over_mcp.items():
        result = runner.invoke(app, [*command, "--data-dir", str(settings.data_dir), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) == expected, command
