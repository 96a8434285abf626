"""The wire form of retrieval results: every tool's output matches its declared outputSchema."""

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client
from typer.testing import CliRunner

from repocontext.cli import app
from repocontext.mcp import build_server
from repocontext.pack.bundle import ContextRequest, bundle_form, wire_json
from repocontext.settings import Settings
from repocontext.tokens import count_tokens
from repocontext.wire.retrieval import ContextResultWire
from repocontext.workspace import Workspace

RETRIEVAL_TOOLS = {
    "repocontext_search",
    "repocontext_context",
    "repocontext_stats",
    "repocontext_outline",
    "repocontext_related",
    "repocontext_changed",
    "repocontext_index_status",
}


def make_repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "engine.py").write_text(
        "class Engine:\n    def start(self):\n        return run_loop()\n\n\n"
        "def run_loop():\n    return 1\n"
    )
    (root / "pkg" / "cli.py").write_text(
        "from pkg.engine import Engine\n\n\ndef main():\n    return Engine().start()\n"
    )
    (root / "tests").mkdir()
    (root / "tests" / "test_engine.py").write_text(
        "from pkg.engine import Engine\n\n\ndef test_start():\n    assert Engine().start()\n"
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def workspace(tmp_path: Path):
    repo = make_repo(tmp_path / "ws" / "proj")
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_root=tmp_path / "ws",
        reconcile="off",
        embedder="off",
        enable_writes=True,
    )
    with Workspace.open(settings) as opened:
        opened.bootstrap(repo, "proj", background=False)
        opened.remember("proj", "gotchas", title="The engine start loop never ends")
        yield opened


def run_calls(workspace: Workspace, calls: list[tuple[str, dict[str, Any]]]) -> tuple[dict, list]:
    """The tools' output schemas (from tools/list) and each call's result, one client session."""

    async def run() -> tuple[dict, list]:
        async with Client(build_server(workspace, workspace.settings)) as client:
            listed = await client.list_tools()
            schemas = {tool.name: tool.output_schema for tool in listed.tools}
            results = [(name, await client.call_tool(name, args)) for name, args in calls]
            return schemas, results

    return anyio.run(run)


def test_every_retrieval_tool_answers_what_its_output_schema_declares_as_compact_text(
    workspace, tmp_path
):
    (tmp_path / "ws" / "proj" / "pkg" / "engine.py").write_text("class Engine:\n    pass\n")
    context = {"repoId": "proj", "task": "engine start loop", "detail": "slices"}
    calls = [
        ("repocontext_search", {"repoId": "proj", "query": "engine start"}),
        ("repocontext_search", {"repoId": "proj", "query": "engine start", "scope": "all"}),
        ("repocontext_search", {"repoId": "proj", "query": "engine loop", "scope": "memory"}),
        ("repocontext_context", {**context, "session": "s"}),
        ("repocontext_context", {**context, "session": "s"}),  # all reused
        ("repocontext_context", {**context, "responseBudgetTokens": 150}),  # nothing fits
        ("repocontext_stats", {}),
        ("repocontext_outline", {"repoId": "proj", "path": "pkg/engine.py"}),
        ("repocontext_outline", {"repoId": "proj", "path": "pkg/engine.py", "maxSymbols": 1}),
        ("repocontext_outline", {"repoId": "proj", "path": "missing.py"}),
        ("repocontext_related", {"repoId": "proj", "path": "pkg/engine.py"}),
        ("repocontext_changed", {"repoId": "proj"}),
        ("repocontext_index_status", {"repoId": "proj"}),
    ]
    schemas, results = run_calls(workspace, calls)
    assert {name for name, _ in calls} >= RETRIEVAL_TOOLS
    for name, result in results:
        assert not result.is_error, (name, result.content)
        assert schemas[name] is not None, name
        jsonschema.validate(result.structured_content, schemas[name])
        if name == "repocontext_context":  # its text is the code (tests/pack/test_bundle.py)
            assert '"content"' not in json.dumps(result.structured_content)
            continue
        compact = json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)
        assert result.content[0].text == compact, name  # the same object, compact
    answers = [result.structured_content for _, result in results]
    assert answers[1]["hits"] and {h["entry"]["kind"] for h in answers[2]["hits"]} == {"memory"}
    assert answers[4]["reused"] and answers[5]["retryBudgetTokens"] > 150
    assert answers[8]["truncated"] and "children" not in answers[8]["symbols"][0]
    assert answers[10]["dependents"] and answers[10]["coveringTests"]
    assert answers[11]["updated"] == ["pkg/engine.py"]


def test_the_context_wire_is_the_json_the_bundle_was_counted_on(workspace):
    requests = [
        ContextRequest("proj", "engine start", detail="slices", session="w"),
        ContextRequest("proj", "engine start", detail="slices", session="w"),
        ContextRequest("proj", "engine start", budget=150),
        ContextRequest("proj", "engine start cli main", detail="outline"),
        ContextRequest("proj", "engine start cli main", detail="paths"),
        ContextRequest("proj", "engine start", json_code=True),
    ]
    for request in requests:
        bundle = workspace.context(request)
        sent = wire_json(ContextResultWire.of(bundle).wire())
        assert sent == wire_json(bundle_form(bundle))
        assert bundle.response_tokens == count_tokens(sent) + count_tokens(bundle.text)
        assert ('"content":' in sent) == request.json_code


def test_the_cli_json_equals_the_tools_structured_content(tmp_path):
    repo = make_repo(tmp_path / "ws" / "proj")
    data = tmp_path / "data"
    runner = CliRunner()

    def cli(*args: str) -> dict:
        result = runner.invoke(app, [*args, "--data-dir", str(data), "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    cli("index", str(repo))
    printed = {
        "repocontext_outline": cli("outline", "pkg/engine.py"),
        "repocontext_related": cli("related", "pkg/engine.py"),
        "repocontext_search": cli("search", "engine start"),
        "repocontext_index_status": cli("status"),
    }
    settings = Settings(data_dir=data, workspace_root=tmp_path / "ws", reconcile="off")
    with Workspace.open(settings) as workspace:  # (the CLI's default embedder too)
        _, results = run_calls(
            workspace,
            [
                ("repocontext_outline", {"repoId": "proj", "path": "pkg/engine.py"}),
                ("repocontext_related", {"repoId": "proj", "path": "pkg/engine.py"}),
                ("repocontext_search", {"repoId": "proj", "query": "engine start"}),
                ("repocontext_index_status", {"repoId": "proj"}),
            ],
        )
    for name, result in results:
        assert result.structured_content == printed[name], name
