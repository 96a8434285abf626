"""search, context and stats through the real MCP client: exact wire cost, reuse, sessions."""

import json
import re

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.types import CallToolResult, TextContent

from repocontext.mcp import build_server
from repocontext.settings import Settings
from repocontext.testing import make_repo
from repocontext.tokens import count_tokens
from repocontext.workspace import Workspace

pytestmark = pytest.mark.anyio

WORDS = ["config", "loader", "parse", "render", "engine", "start", "widget", "cache", "token"]


def engine_files() -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {"pkg/__init__.py": ""}
    for i, word in enumerate(WORDS):
        body = "".join(
            f"def {word}_{j}(value):\n    '''{word} step {j}.'''\n    return value + {i * j}\n\n\n"
            for j in range(12 + i * 6)
        )
        files[f"pkg/{word}.py"] = f"class {word.title()}Engine:\n    pass\n\n\n{body}"
    files["tests/test_config.py"] = "from pkg.config import config_1\n"
    return files


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("retrieval")
    repo = make_repo(tmp / "ws" / "proj", engine_files())
    settings = Settings(data_dir=tmp / "data", workspace_root=tmp / "ws", reconcile="off")
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, background=False)
        workspace.wait_embedded("proj")  # the embedding pass that follows the index run
        yield workspace


def call(workspace: Workspace, tool: str, arguments: dict) -> CallToolResult:
    async def run() -> CallToolResult:
        async with Client(build_server(workspace, workspace.settings)) as client:
            return await client.call_tool(tool, arguments)

    return anyio.run(run)


def received_tokens(result: CallToolResult) -> int:
    """What the client got: the structured content and the text block, counted as sent."""
    [block] = result.content
    assert isinstance(block, TextContent)
    structured = json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)
    return count_tokens(structured) + count_tokens(block.text)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    budget=st.one_of(st.integers(1, 400), st.integers(400, 20_000), st.integers(20_000, 200_000)),
    detail=st.sampled_from(["paths", "outline", "slices", "auto", "bogus"]),
    top=st.integers(1, 50),
)
def test_the_response_never_costs_more_than_its_budget(served, words, budget, detail, top):
    result = call(
        served,
        "repocontext_context",
        {
            "repoId": "proj",
            "task": " ".join(words),
            "responseBudgetTokens": budget,
            "detail": detail,
            "top": top,
        },
    )
    if result.is_error:  # below the smallest answer: refused, naming the budget that works
        refusal = json.loads(result.content[0].text)
        assert refusal["code"] == "context.budget_too_small", refusal
        assert budget < 400
        return
    wire = result.structured_content
    assert received_tokens(result) == wire["responseTokens"] <= wire["budgetTokens"] == budget
    assert wire["detail"] in ("paths", "outline", "slices")
    assert sum(e["tokenCount"] for e in wire["entries"]) == wire["totalTokens"]
    if not wire["entries"] and wire["truncated"]:
        assert wire["retryBudgetTokens"] > wire["budgetTokens"]


def test_a_budget_below_the_smallest_answer_is_refused_with_the_budget_that_works(served):
    args = {"repoId": "proj", "task": "config loader", "responseBudgetTokens": 60}
    refused = call(served, "repocontext_context", args)
    assert refused.is_error and refused.structured_content is None
    error = json.loads(refused.content[0].text)
    assert error["code"] == "context.budget_too_small"
    smallest = int(error["hint"].split("at least ")[1].split()[0])
    assert smallest > 60 and str(smallest) in error["message"]
    answered = call(served, "repocontext_context", {**args, "responseBudgetTokens": smallest})
    assert not answered.is_error, answered.content
    wire = answered.structured_content
    assert received_tokens(answered) == wire["responseTokens"] <= wire["budgetTokens"] == smallest
    below = call(served, "repocontext_context", {**args, "responseBudgetTokens": smallest - 1})
    assert json.loads(below.content[0].text)["code"] == "context.budget_too_small"


def test_seen_receipts_and_sessions_suppress_exactly_what_was_delivered(served):
    args = {
        "repoId": "proj",
        "task": "config loader",
        "responseBudgetTokens": 6000,
        "detail": "slices",
        "top": 3,
    }
    first = call(served, "repocontext_context", args).structured_content
    receipts = [u[0] for e in first["entries"] for u in e["units"]]
    assert receipts and first["reused"] == []
    again = call(served, "repocontext_context", {**args, "seen": receipts}).structured_content
    assert {r["receipt"] for r in again["reused"]} == set(receipts)
    assert not {u[0] for e in again["entries"] for u in e["units"]} & set(receipts)
    # A session remembers on its own.
    call(served, "repocontext_context", {**args, "session": "s-1"})
    third = call(served, "repocontext_context", {**args, "session": "s-1"}).structured_content
    assert {r["receipt"] for r in third["reused"]} == set(receipts)
    assert third["session"] == "s-1"
    # A budget too small for the listing: cut, counted, flagged; the budget is not raised.
    small = {**args, "session": "s-1", "responseBudgetTokens": 120}
    cut = call(served, "repocontext_context", small).structured_content
    assert cut["budgetTokens"] == 120 >= cut["responseTokens"] and cut["truncated"]
    assert len(cut["reused"]) + cut["reusedOmitted"] == len(receipts)


def test_known_files_are_suppressed_only_when_the_session_holds_that_version(served):
    args = {
        "repoId": "proj",
        "task": "tests config",
        "responseBudgetTokens": 8000,
        "detail": "slices",
        "top": 5,
    }
    first = call(served, "repocontext_context", {**args, "session": "s-known"}).structured_content
    whole = next(e for e in first["entries"] if e["units"] and e["units"][0][1] == "file")
    claim = f"{whole['path']}@{whole['contentHash']}"
    fresh = call(served, "repocontext_context", {**args, "known": [claim]}).structured_content
    assert whole["path"] in {e["path"] for e in fresh["entries"]}  # no session: not trusted
    held = call(
        served, "repocontext_context", {**args, "known": [claim], "session": "s-known"}
    ).structured_content
    assert {"path": whole["path"], "kind": "file", "contentHash": whole["contentHash"]} in held[
        "reused"
    ]
    stale = call(
        served,
        "repocontext_context",
        {**args, "known": [f"{whole['path']}@{'0' * 64}"], "session": "s-other"},
    ).structured_content
    assert not any(r.get("contentHash") == "0" * 64 for r in stale["reused"])


def test_nothing_fits_says_what_budget_would(served):
    wire = call(
        served,
        "repocontext_context",
        {
            "repoId": "proj",
            "task": "render widget",
            "responseBudgetTokens": 150,
            "detail": "slices",
        },
    ).structured_content
    assert wire["entries"] == [] and wire["truncated"] is True
    bigger = call(
        served,
        "repocontext_context",
        {
            "repoId": "proj",
            "task": "render widget",
            "detail": "slices",
            "responseBudgetTokens": wire["retryBudgetTokens"],
        },
    ).structured_content
    assert len(bigger["entries"]) >= 1


def test_search_tool_and_stats_tool(served):
    too_many = call(served, "repocontext_search", {"repoId": "proj", "query": "widget", "k": 500})
    assert too_many.is_error and json.loads(too_many.content[0].text)["code"] == "input.invalid"
    found = call(served, "repocontext_search", {"repoId": "proj", "query": "widget", "k": 100})
    hits = found.structured_content["hits"]
    assert hits[0]["path"] == "pkg/widget.py" and hits[0]["reasons"][0] == "path-name-match"
    assert found.structured_content["mode"] == "hybrid"
    assert found.structured_content["retrievalPath"] == "hybrid.exact"
    assert "semantic" in hits[0]["reasons"]
    stats = call(served, "repocontext_stats", {}).structured_content
    assert stats["calls"] >= 1 and stats["windowSeconds"] == 3600
    assert stats["netSavedTokens"] == stats["readsReplacedTokens"] - stats["responseTokens"]
    bad = call(served, "repocontext_search", {"repoId": "missing", "query": "x"})
    assert bad.is_error and json.loads(bad.content[0].text)["code"]


def test_context_is_annotated_as_writing_and_search_as_read_only(served):
    tools = {tool.name: tool for tool in anyio.run(list_tools, served)}
    context = tools["repocontext_context"]
    assert context.annotations.read_only_hint is False
    assert context.annotations.destructive_hint is False
    assert "Writes only with `session`" in context.description
    for name in ("repocontext_search", "repocontext_stats"):
        assert tools[name].annotations.read_only_hint is True


async def list_tools(workspace: Workspace) -> list:
    async with Client(build_server(workspace, workspace.settings)) as client:
        return (await client.list_tools()).tools


HEADER = re.compile(r"^(\S+):(\d+)-(\d+)  (\S+)  (\S+)$")


def test_the_text_block_is_the_code_and_the_structured_content_its_metadata(served):
    args = {"repoId": "proj", "task": "config loader cache", "responseBudgetTokens": 4000}
    result = call(served, "repocontext_context", args)
    wire = result.structured_content
    text = result.content[0].text
    assert received_tokens(result) == wire["responseTokens"] <= 4000
    files = engine_files()
    units = []
    lines = text.split("\n")
    at = 0
    while at < len(lines) - 1:  # header, then exactly the lines it names, verbatim
        path, start, end, _symbol, reason = HEADER.match(lines[at]).groups()
        start, end = int(start), int(end)
        source = str(files[path]).split("\n")
        assert lines[at + 1 : at + 2 + end - start] == source[start - 1 : end], path
        units.append((path, start, end, reason))
        at += 2 + end - start
    listed = [(e["path"], u[2], u[3]) for e in wire["entries"] for u in e["units"]]
    assert [(p, a, b) for p, a, b, _ in units] == listed
    assert all(set(e) >= {"path", "score", "reasons", "tokenCount"} for e in wire["entries"])
    assert not any("content" in e for e in wire["entries"])  # the code is sent once
    code = call(served, "repocontext_context", {**args, "jsonCode": True})
    assert received_tokens(code) == code.structured_content["responseTokens"] <= 4000
    for entry in code.structured_content["entries"]:
        source = str(files[entry["path"]]).split("\n")
        pieces = ["\n".join(source[u[2] - 1 : u[3]]) + "\n" for u in entry["units"]]
        assert entry["content"] == "".join(pieces)
