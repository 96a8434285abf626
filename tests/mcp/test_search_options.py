"""The search and context tools' mode and file filters, and the mismatch warning, through the
real MCP client."""

from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from repocontext.mcp import build_server
from repocontext.settings import Settings
from repocontext.testing import make_repo, tool_error, tool_ok
from repocontext.workspace import Workspace

pytestmark = pytest.mark.anyio

FILES = {
    "src/mail.py": "def send_email(to, body):\n    return (to, body)\n",
    "web/mail.js": "export function sendEmail(to, body) { return [to, body]; }\n",
    "docs/mail.md": "How to send an email.\n",
}


def call(workspace: Workspace, tool: str, arguments: dict) -> CallToolResult:
    async def run() -> CallToolResult:
        async with Client(build_server(workspace, workspace.settings)) as client:
            return await client.call_tool(tool, arguments)

    return anyio.run(run)


def settings_of(tmp_path: Path, embedder: str) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        workspace_root=tmp_path / "ws",
        reconcile="off",
        embedder=embedder,
    )


@pytest.fixture
def embedded(tmp_path: Path):
    repo = make_repo(tmp_path / "ws" / "mail", FILES)
    with Workspace.open(settings_of(tmp_path, "static")) as workspace:
        workspace.bootstrap(repo, "mail", background=False)
        workspace.wait_embedded("mail")
        yield workspace


def test_search_takes_a_mode_and_filters_by_language_and_glob(embedded: Workspace) -> None:
    search = {"repoId": "mail", "query": "send email"}
    keyword = tool_ok(call(embedded, "repocontext_search", {**search, "mode": "keyword"}))
    semantic = tool_ok(call(embedded, "repocontext_search", {**search, "mode": "semantic"}))
    js = tool_ok(call(embedded, "repocontext_search", {**search, "languages": ["javascript"]}))
    docs = tool_ok(call(embedded, "repocontext_search", {**search, "globs": ["docs/**"]}))

    assert keyword["retrievalPath"] == "keyword.requested" and "warnings" not in keyword
    assert semantic["mode"] == "semantic"
    assert [hit["path"] for hit in js["hits"]] == ["web/mail.js"]
    assert [hit["path"] for hit in docs["hits"]] == ["docs/mail.md"]


def test_context_takes_a_mode(embedded: Workspace) -> None:
    bundle = tool_ok(
        call(
            embedded,
            "repocontext_context",
            {"repoId": "mail", "task": "send email", "mode": "keyword"},
        )
    )
    assert bundle["retrievalPath"] == "keyword.requested"


@pytest.mark.parametrize("tool", ["repocontext_search", "repocontext_context"])
def test_an_unknown_mode_and_an_unknown_language_are_input_errors(
    embedded: Workspace, tool: str
) -> None:
    text = "query" if tool == "repocontext_search" else "task"
    error = tool_error(call(embedded, tool, {"repoId": "mail", text: "send", "mode": "dense"}))
    assert error["code"] == "input.invalid" and "keyword, semantic, hybrid" in error["hint"]
    if tool == "repocontext_search":
        bad = {"repoId": "mail", "query": "send", "languages": ["klingon"]}
        assert "unknown language" in tool_error(call(embedded, tool, bad))["message"]


def test_an_explicit_semantic_search_without_an_embedder_is_a_tool_error(
    workspace: Workspace,
) -> None:
    error = tool_error(
        call(workspace, "repocontext_search", {"repoId": "proj", "query": "x", "mode": "semantic"})
    )
    assert error["code"] == "search.vectors_unavailable"
    assert "keyword" in error["hint"]


def test_the_search_result_carries_the_embedder_mismatch_warning(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws" / "mail", FILES)
    with Workspace.open(settings_of(tmp_path, "static")) as workspace:
        workspace.bootstrap(repo, "mail", background=False)
        workspace.wait_embedded("mail")
    with Workspace.open(settings_of(tmp_path, "minilm")) as other:
        result = tool_ok(call(other, "repocontext_search", {"repoId": "mail", "query": "email"}))
        bundle = call(other, "repocontext_context", {"repoId": "mail", "task": "email"})

    assert result["retrievalPath"] == "keyword.embedder_mismatch"
    [warning] = result["warnings"]
    assert "'static' embedder" in warning and "'minilm'" in warning
    assert bundle.structured_content is not None
    assert bundle.structured_content["warnings"] == [warning]  # the context result too
