"""Health, repository, read, symbol, grep and map answers match their declared outputSchema.

Real calls through the real MCP client: each structured result is validated against the schema
``tools/list`` declared for its tool, its text block is the same object as compact JSON, and
the CLI ``--json`` of ``read``, ``symbol``, ``grep``, ``map`` and ``repos list`` prints that
same object.
"""

import json
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client
from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.mcp import build_server
from repocontext.search import GrepRequest
from repocontext.settings import Settings
from repocontext.testing import make_repo
from repocontext.wire import (
    GrepResult,
    HealthResult,
    ListReposResult,
    ReadResult,
    RepoMapResult,
    SymbolSourcesResult,
)
from repocontext.workspace import Workspace

FILES = {
    "geo/__init__.py": "",
    "geo/shapes.py": (
        "class Circle:\n    def __init__(self, r):\n        self.r = r\n\n"
        "    def area(self):\n        return 3.14 * self.r * self.r\n\n\n"
        "def unit():\n    return Circle(1)\n"
    ),
    "geo/draw.py": "from geo.shapes import unit\n\n\ndef draw():\n    return unit().area()\n",
    "tests/test_shapes.py": "from geo.shapes import unit\n\n\ndef test_one():\n    assert unit()\n",
}


def run_calls(
    workspace: Workspace, settings: Settings, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """The tools' output schemas (from tools/list) and each call's result, one client session."""

    async def run() -> tuple[dict[str, Any], list[tuple[str, Any]]]:
        async with Client(build_server(workspace, settings)) as client:
            listed = await client.list_tools()
            schemas = {tool.name: tool.output_schema for tool in listed.tools}
            results = [(name, await client.call_tool(name, args)) for name, args in calls]
            return schemas, results

    return anyio.run(run)


def checked(schemas: dict[str, Any], results: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """Each result's structured content, validated against its tool's schema and text block."""
    answers = []
    for name, result in results:
        assert not result.is_error, (name, result.content)
        assert schemas[name] is not None, name
        jsonschema.validate(result.structured_content, schemas[name])
        compact = json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)
        assert result.content[0].text == compact, name  # the same object, compact
        answers.append(result.structured_content)
    return answers


@pytest.fixture
def served(tmp_path: Path):
    """A workspace server's workspace with ``geo`` and ``spare`` indexed, and a third repo."""
    ws = tmp_path / "ws"
    make_repo(ws / "geo", FILES, commit=True)
    make_repo(ws / "spare", {"a.py": "def a():\n    return 1\n"})
    make_repo(ws / "third", {"b.py": "def b():\n    return 2\n"})
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_root=ws,
        enable_writes=True,
        reconcile="off",
        embedder="off",
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(ws / "geo", "geo", background=False)
        workspace.bootstrap(ws / "spare", "spare", background=False)
        yield workspace, ws


@pytest.mark.timeout(120)
def test_health_repos_read_map_and_workspace_tools_answer_what_their_output_schemas_declare(
    served,
):
    workspace, ws = served
    read = {"repoId": "geo", "path": "geo/shapes.py"}
    calls = [
        ("repocontext_health", {}),
        ("repocontext_health", {"repoId": "geo"}),
        ("repocontext_health", {"repoId": "nope"}),
        ("repocontext_list_repos", {}),
        ("repocontext_read", read),
        ("repocontext_read", {**read, "startLine": 5, "endLine": 6}),
        ("repocontext_read", {**read, "budgetTokens": 12}),
        ("repocontext_symbol", {"repoId": "geo", "names": ["Circle.area", "Cirle", "unit"]}),
        ("repocontext_symbol", {"repoId": "geo", "names": ["Circle"], "budgetTokens": 5}),
        ("repocontext_grep", {"repoId": "geo", "pattern": "unit", "pageSize": 2}),
        ("repocontext_map", {"repoId": "geo"}),
        ("repocontext_map", {"repoId": "geo", "budgetTokens": 64, "query": "draw"}),
        ("repocontext_map", {"repoId": "geo", "exclude": ["geo/draw.py"]}),
        ("repocontext_reset_index", {"repoId": "spare"}),
        ("repocontext_remove_repo", {"repoId": "spare"}),
        ("repocontext_remove_repo", {"repoId": "never"}),
        ("repocontext_add_repo", {"path": str(ws / "third")}),
    ]
    schemas, results = run_calls(workspace, workspace.settings, calls)
    answers = checked(schemas, results)
    workspace.wait_indexed("third", timeout=60)
    health, geo, unknown, repos = answers[:4]
    assert health["group"] == "repocontext" and "repository" in health
    assert health["repository"] is None
    assert geo["repository"]["verdict"] != "unknown" and geo["repository"]["files"] == 4
    assert unknown["repository"]["verdict"] == "unknown"
    assert [r["repoId"] for r in repos["repos"]] == ["geo", "spare"]
    whole, lines, cut = answers[4:7]
    assert whole["text"] == FILES["geo/shapes.py"] and whole["continuation"] is None
    assert lines["text"] == "    def area(self):\n        return 3.14 * self.r * self.r\n"
    assert cut["continuation"] is not None and cut["tokenCount"] <= 12
    symbols, omitted, grep = answers[7:10]
    assert [s["fullyQualifiedName"] for s in symbols["symbols"]] == [
        "geo.shapes.Circle.area",
        "geo.shapes.unit",
    ]
    assert symbols["missing"][0]["name"] == "Cirle" and omitted["omitted"]
    assert grep["truncated"] is True and len(grep["matches"]) == 2
    full, small, excluded = answers[10:13]
    assert full["entries"][0]["path"] == "geo/shapes.py" and small["tokenCount"] <= 64
    assert "geo/draw.py" not in [entry["path"] for entry in excluded["entries"]]
    reset, removed, never, added = answers[13:]
    assert reset["memoryPreserved"] is True and reset["entriesDeleted"] > 0
    assert removed["existed"] is True and removed["totalRemoved"] == sum(
        removed["removed"].values()
    )
    assert never == {
        "repoId": "never",
        "existed": False,
        "removed": never["removed"],
        "totalRemoved": 0,
        "elapsedMs": never["elapsedMs"],
    }
    assert added["repoId"] == "third"


def test_each_answer_is_its_wire_model_built_from_the_facades_typed_value(served):
    workspace, _ = served
    calls = [
        ("repocontext_health", {"repoId": "geo"}),
        ("repocontext_list_repos", {}),
        ("repocontext_read", {"repoId": "geo", "path": "geo/draw.py"}),
        ("repocontext_symbol", {"repoId": "geo", "names": ["unit", "draw"]}),
        ("repocontext_grep", {"repoId": "geo", "pattern": "unit", "glob": "geo/*"}),
        ("repocontext_map", {"repoId": "geo", "query": "circle"}),
    ]
    _, results = run_calls(workspace, workspace.settings, calls)
    typed = [
        HealthResult.of(workspace.health("geo")),
        ListReposResult.of(workspace.list_repos()),
        ReadResult.of(workspace.page("geo", "geo/draw.py")),
        SymbolSourcesResult.of(workspace.symbols("geo", ["unit", "draw"])),
        GrepResult.of(workspace.grep(GrepRequest("geo", "unit", glob="geo/*"))),
        RepoMapResult.of(workspace.repo_map("geo", 1024, query="circle")),
    ]
    for (name, result), model in zip(results, typed, strict=True):
        assert result.structured_content == model.wire(), name


@pytest.mark.timeout(120)
def test_bootstrap_answers_what_its_output_schema_declares(tmp_path):
    repo = make_repo(tmp_path / "solo", FILES)
    settings = Settings(
        data_dir=tmp_path / "data", repo=repo, enable_writes=True, reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as workspace:
        schemas, results = run_calls(
            workspace, settings, [("repocontext_bootstrap", {"repoRoot": str(repo)})]
        )
        (started,) = checked(schemas, results)
        workspace.wait_indexed(started["repoId"], timeout=60)
    assert started["repoId"] == "solo"


def test_the_cli_json_of_the_read_tools_map_and_repos_list_equals_the_tools_structured_content(
    tmp_path,
):
    repo = make_repo(tmp_path / "ws" / "geo", FILES, commit=True)
    data = tmp_path / "data"
    runner = CliRunner()

    def cli(*args: str) -> dict[str, Any]:
        result = runner.invoke(app, [*args, "--data-dir", str(data), "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    cli("index", str(repo))
    printed = [
        cli("read", "geo", "geo/shapes.py", "--lines", "5-"),
        cli("read", "geo", "geo/shapes.py", "--budget", "12"),
        cli("symbol", "Circle.area", "unit", "--budget", "30"),
        cli("grep", "unit", "-i", "-C", "1", "--glob", "*.py", "--limit", "2"),
        cli("map", "geo", "--query", "draw", "--exclude", "tests/test_shapes.py"),
        cli("map", "--budget", "64"),
        cli("repos", "list"),
    ]
    settings = Settings(data_dir=data, workspace_root=tmp_path / "ws", reconcile="off")
    with Workspace.open(settings) as workspace:  # (the CLI's default embedder too)
        _, results = run_calls(
            workspace,
            settings,
            [
                ("repocontext_read", {"repoId": "geo", "path": "geo/shapes.py", "startLine": 5}),
                (
                    "repocontext_read",
                    {"repoId": "geo", "path": "geo/shapes.py", "budgetTokens": 12},
                ),
                (
                    "repocontext_symbol",
                    {"repoId": "geo", "names": ["Circle.area", "unit"], "budgetTokens": 30},
                ),
                (
                    "repocontext_grep",
                    {
                        "repoId": "geo",
                        "pattern": "unit",
                        "caseSensitive": False,
                        "contextLines": 1,
                        "glob": "*.py",
                        "pageSize": 2,
                    },
                ),
                (
                    "repocontext_map",
                    {"repoId": "geo", "query": "draw", "exclude": ["tests/test_shapes.py"]},
                ),
                ("repocontext_map", {"repoId": "geo", "budgetTokens": 64}),
                ("repocontext_list_repos", {}),
            ],
        )
    for (name, result), shown in zip(results, printed, strict=True):
        assert not result.is_error, (name, result.content)
        assert result.structured_content == shown, name
