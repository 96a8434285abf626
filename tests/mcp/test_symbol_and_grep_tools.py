"""repocontext_symbol and repocontext_grep through the real MCP client, on a real git repo."""

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from repocontext.auth import Grant
from repocontext.mcp import build_server
from repocontext.pack import MAX_MATCHES
from repocontext.search import MAX_LINE_CHARS
from repocontext.testing import make_repo, tool_error, tool_ok
from repocontext.tokens import count_tokens
from repocontext.workspace import Workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SERVICE = (
    "class Service:\n"
    "    def start(self):\n"
    "        return 'started'\n"
    "\n"
    "    def stop(self):\n"
    "        return 'stopped'\n"
)


@pytest.fixture
def served(workspace: Workspace) -> Workspace:
    """The conftest's `proj` (core.py) as a git repository with a service module, indexed."""
    info = workspace.get_repo("proj")
    assert info is not None
    make_repo(Path(info.root), {"app/service.py": SERVICE, ".gitignore": "*.log\n"})
    (Path(info.root) / "debug.log").write_text("started at 10:00\n")
    workspace.bootstrap(Path(info.root), "proj", background=False)
    return workspace


async def call(workspace: Workspace, name: str, grant: Grant | None = None, **arguments: Any):
    async with Client(build_server(workspace, workspace.settings, grant=grant)) as client:
        return await client.call_tool(name, arguments)


async def test_symbol_serves_a_member_with_its_class_header(served):
    answer = tool_ok(
        await call(served, "repocontext_symbol", repoId="proj", names=["Service.stop"])
    )
    (symbol,) = answer["symbols"]
    text = "    def stop(self):\n        return 'stopped'\n"
    assert symbol["fullyQualifiedName"] == "app.service.Service.stop"
    assert (symbol["path"], symbol["startLine"], symbol["endLine"]) == ("app/service.py", 5, 6)
    assert symbol["text"] == text and symbol["tokenCount"] == count_tokens(text)
    assert symbol["enclosing"][0]["header"] == "class Service:\n"
    assert answer["tokenCount"] == count_tokens(text) + count_tokens("class Service:\n")


async def test_symbol_reports_an_unknown_name_without_failing_the_call(served):
    answer = tool_ok(
        await call(served, "repocontext_symbol", repoId="proj", names=["Service.strat", "compute"])
    )
    assert [s["fullyQualifiedName"] for s in answer["symbols"]] == ["core.compute"]
    assert answer["missing"] == [
        {
            "name": "Service.strat",
            "reason": "no symbol of that name in the index",
            "suggestions": ["app.service.Service.start"],
        }
    ]


async def test_symbol_budget_lists_what_it_left_out(served):
    answer = tool_ok(
        await call(
            served,
            "repocontext_symbol",
            repoId="proj",
            names=["app.service.Service", "compute"],
            budgetTokens=20,
        )
    )
    assert [s["name"] for s in answer["symbols"]] == ["compute"]
    assert answer["omitted"][0]["fullyQualifiedName"] == "app.service.Service"
    assert answer["tokenCount"] <= 20 and answer["budgetTokens"] == 20


@pytest.mark.parametrize(
    "arguments",
    [{"names": []}, {"names": ["x"] * 21}, {"names": ["::x"]}, {"names": ["x"], "budgetTokens": 0}],
)
async def test_symbol_refuses_malformed_requests_with_a_code(served, arguments):
    error = tool_error(await call(served, "repocontext_symbol", repoId="proj", **arguments))
    assert error["code"] == "input.invalid"


async def test_grep_finds_lines_with_context_and_pages_through_them(served):
    first = tool_ok(
        await call(served, "repocontext_grep", repoId="proj", pattern="return", pageSize=2)
    )
    assert [(m["path"], m["line"]) for m in first["matches"]] == [
        ("app/service.py", 3),
        ("app/service.py", 6),
    ]
    assert first["matches"][0]["before"] == ["class Service:", "    def start(self):"]
    assert first["truncated"] is True
    rest = tool_ok(
        await call(
            served,
            "repocontext_grep",
            repoId="proj",
            pattern="return",
            pageSize=2,
            continuationToken=first["continuationToken"],
        )
    )
    assert [(m["path"], m["line"], m["column"]) for m in rest["matches"]] == [("core.py", 2, 5)]
    assert rest["truncated"] is False and rest["continuationToken"] is None


async def test_grep_never_searches_an_ignored_file(served):
    answer = tool_ok(await call(served, "repocontext_grep", repoId="proj", pattern="started"))
    assert [m["path"] for m in answer["matches"]] == ["app/service.py"]


async def test_grep_regex_glob_and_case_options_reach_the_search(served):
    answer = tool_ok(
        await call(
            served,
            "repocontext_grep",
            repoId="proj",
            pattern=r"^\s+def S\w+",
            regex=True,
            caseSensitive=False,
            glob="app/**",
            contextLines=0,
        )
    )
    assert [(m["line"], m["text"]) for m in answer["matches"]] == [
        (2, "    def start(self):"),
        (5, "    def stop(self):"),
    ]


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"pattern": "(a)\\1", "regex": True}, "input.invalid"),
        ({"pattern": "x", "glob": "["}, "input.invalid"),
        ({"pattern": "x", "contextLines": 11}, "input.invalid"),
        ({"pattern": "x", "pageSize": 501}, "input.invalid"),
        ({"pattern": "x", "continuationToken": "bogus"}, "store.invalid_continuation"),
    ],
)
async def test_grep_refuses_bad_patterns_bounds_and_tokens_with_codes(served, arguments, code):
    error = tool_error(await call(served, "repocontext_grep", repoId="proj", **arguments))
    assert error["code"] == code
    assert error["hint"]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("repocontext_symbol", {"names": ["compute"]}),
        ("repocontext_grep", {"pattern": "x"}),
    ],
)
async def test_a_repository_outside_the_grant_is_refused(served, tool, arguments):
    grant = Grant.of("other", "reader", ["other"])
    error = tool_error(await call(served, tool, grant, repoId="proj", **arguments))
    assert error["code"] == "auth.repo_forbidden"


async def test_both_tools_are_offered_to_a_reader_and_listed_read_only(served):
    grant = Grant.of("reader", "reader", ["proj"])
    async with Client(build_server(served, served.settings, grant=grant)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name in ("repocontext_symbol", "repocontext_grep"):
        annotations = tools[name].annotations
        assert annotations is not None and annotations.read_only_hint is True
        assert tools[name].output_schema is not None
    grep_inputs = tools["repocontext_grep"].input_schema["properties"]
    assert grep_inputs["contextLines"]["maximum"] == 10
    assert grep_inputs["pageSize"]["maximum"] == 500
    assert tools["repocontext_symbol"].input_schema["properties"]["names"]["maxItems"] == 20
    # The contracts name the bounds the code enforces.
    assert f"up to {MAX_MATCHES} definitions" in (tools["repocontext_symbol"].description or "")
    assert f"{MAX_LINE_CHARS} characters" in (tools["repocontext_grep"].description or "")
