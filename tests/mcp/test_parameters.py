"""Every tool's parameters through the real MCP client: bounds in the schema, one code per kind.

The same bad value of one kind of argument (a repository id, a key, a path) gets the same
coded error from every tool that takes it; numeric ranges and string bounds are in the input
schemas and out-of-range values are refused with ``input.invalid`` naming field and range.
"""

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from repocontext.auth import Grant
from repocontext.mcp import build_server
from repocontext.settings import Settings
from repocontext.testing import tool_error, tool_ok
from repocontext.workspace import Workspace

MEMORY_KEY = "repo/proj/mem/todo/first"
FILE_KEY = "repo/proj/file/core.py"
HUGE = "x" * (1 << 20)

REQUIRED: dict[str, dict[str, Any]] = {
    "repocontext_health": {},
    "repocontext_index_status": {},
    "repocontext_outline": {"path": "core.py"},
    "repocontext_related": {"path": "core.py"},
    "repocontext_changed": {},
    "repocontext_search": {"query": "compute"},
    "repocontext_context": {"task": "compute"},
    "repocontext_scan": {"scope": "files"},
    "repocontext_list_topics": {},
    "repocontext_remember": {"topic": "todo"},
    "repocontext_claim_next": {"topic": "todo", "owner": "w"},
    "repocontext_remove_repo": {},
    "repocontext_add_repo": {"path": "proj"},
    "repocontext_reset_index": {},
    "repocontext_recall": {},
    "repocontext_neighbors": {},
    "repocontext_update": {},
    "repocontext_forget": {},
    "repocontext_claim": {"owner": "w"},
    "repocontext_claim_status": {},
    "repocontext_renew_claim": {"fencingToken": 1},
    "repocontext_release_claim": {"fencingToken": 1},
}
"""The other arguments each tool needs, so only the argument under test is wrong."""

KEY_TOOLS = [
    "repocontext_recall",
    "repocontext_neighbors",
    "repocontext_update",
    "repocontext_forget",
    "repocontext_claim",
    "repocontext_claim_status",
    "repocontext_renew_claim",
    "repocontext_release_claim",
]
MEMORY_KEY_TOOLS = KEY_TOOLS[1:]
REPO_ID_TOOLS = [name for name in REQUIRED if name not in KEY_TOOLS]


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "core.py").write_text("def compute(x):\n    return x * 2\n")
    for i in range(7):  # seven dependents of core.py
        (root / f"user{i}.py").write_text(f"from core import compute\n\nV{i} = compute({i})\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    tmp = tmp_path_factory.mktemp("parameters")
    repo = make_repo(tmp / "ws" / "proj")
    settings = Settings(
        data_dir=tmp / "data",
        workspace_root=tmp / "ws",
        enable_writes=True,
        reconcile="off",
        embedder="off",
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, "proj", background=False)
        workspace.remember("proj", "todo", entry_id="first", title="first")
        yield workspace


def call_all(workspace: Workspace, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def run() -> list[CallToolResult]:
        async with Client(build_server(workspace, workspace.settings)) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(run)


def list_tools(workspace: Workspace) -> list[Any]:
    async def run() -> list[Any]:
        async with Client(build_server(workspace, workspace.settings)) as client:
            return list((await client.list_tools()).tools)

    return anyio.run(run)


def with_key(name: str, key: str) -> dict[str, Any]:
    return {**REQUIRED[name], "key": key}


def with_repo(name: str, repo_id: str) -> dict[str, Any]:
    return {**REQUIRED[name], "repoId": repo_id}


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        ("", "input.invalid"),
        ("r" * 129, "input.invalid"),
        (HUGE, "input.invalid"),
        ("a\x00b", "input.invalid"),
        (" proj", "input.invalid"),
    ],
)
def test_a_bad_repo_id_gets_one_code_from_every_tool_that_takes_one(served, bad, code):
    results = call_all(served, [(name, with_repo(name, bad)) for name in REPO_ID_TOOLS])
    for name, result in zip(REPO_ID_TOOLS, results, strict=True):
        body = tool_error(result)
        assert body["code"] == code, (name, body)
        assert len(result.content[0].text) < 2000, name  # never the value echoed whole


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        ("nope", "store.invalid_key"),
        ("repo/proj/mem/todo/a\x00b", "store.invalid_key"),
        ("repo//mem/todo/x", "store.invalid_key"),
        (HUGE, "store.invalid_key"),
    ],
)
def test_a_malformed_key_gets_one_code_from_every_tool_that_takes_a_key(served, bad, code):
    results = call_all(served, [(name, with_key(name, bad)) for name in KEY_TOOLS])
    for name, result in zip(KEY_TOOLS, results, strict=True):
        body = tool_error(result)
        assert body["code"] == code, (name, body)
        assert len(result.content[0].text) < 2000, name


def test_a_key_of_another_family_is_the_wrong_family_for_every_memory_tool(served):
    results = call_all(served, [(name, with_key(name, FILE_KEY)) for name in MEMORY_KEY_TOOLS])
    for name, result in zip(MEMORY_KEY_TOOLS, results, strict=True):
        assert tool_error(result)["code"] == "memory.wrong_family", name
    [recalled] = call_all(served, [("repocontext_recall", {"key": FILE_KEY})])
    assert tool_ok(recalled)["exists"] is True


PATH_CALLS = [
    ("repocontext_outline", "path"),
    ("repocontext_related", "path"),
    ("repocontext_changed", "path"),
    ("repocontext_add_repo", "path"),
]


@pytest.mark.parametrize(
    ("bad", "code"), [("core\x00.py", "input.invalid"), (HUGE, "input.invalid")]
)
def test_a_bad_path_gets_one_code_from_every_tool_that_takes_a_path(served, bad, code):
    calls = [(name, {**with_repo(name, "proj"), field: bad}) for name, field in PATH_CALLS]
    calls[-1] = ("repocontext_add_repo", {"path": bad})
    results = call_all(served, calls)
    for (name, _), result in zip(calls, results, strict=True):
        body = tool_error(result)
        assert body["code"] == code, (name, body)
        assert len(result.content[0].text) < 2000, name


TOPIC_CALLS = [
    ("repocontext_remember", {"repoId": "proj"}),
    ("repocontext_claim_next", {"repoId": "proj", "owner": "w"}),
    ("repocontext_scan", {"repoId": "proj", "scope": "memoryTopic"}),
]


@pytest.mark.parametrize("bad", ["", "a/b", "../x", "t\x00", HUGE])
def test_a_bad_topic_gets_one_code_from_every_tool_that_takes_a_topic(served, bad):
    calls = [(name, {**arguments, "topic": bad}) for name, arguments in TOPIC_CALLS]
    for (name, _), result in zip(calls, call_all(served, calls), strict=True):
        assert tool_error(result)["code"] == "input.invalid", name
        assert len(result.content[0].text) < 2000, name


OUT_OF_RANGE = [
    ("repocontext_search", {"repoId": "proj", "query": "q"}, "k", [0, -1, 101, 10**12]),
    ("repocontext_context", {"repoId": "proj", "task": "t"}, "top", [0, -1, 51]),
    ("repocontext_context", {"repoId": "proj", "task": "t"}, "responseBudgetTokens", [0, 200_001]),
    ("repocontext_scan", {"repoId": "proj", "scope": "files"}, "pageSize", [0, 501, 10**12]),
    ("repocontext_neighbors", {"key": MEMORY_KEY}, "depth", [0, -1, 4, 10**12]),
    ("repocontext_neighbors", {"key": MEMORY_KEY}, "maxNodes", [0, -1, 101, 10**12]),
    ("repocontext_stats", {}, "windowSeconds", [0, -5, 10**12]),
    ("repocontext_claim", {"key": MEMORY_KEY, "owner": "w"}, "maxWaitSeconds", [-1, 301]),
    ("repocontext_claim", {"key": MEMORY_KEY, "owner": "w"}, "leaseSeconds", [0, -1]),
    ("repocontext_outline", {"repoId": "proj", "path": "core.py"}, "maxSymbols", [0, 50_001]),
    ("repocontext_related", {"repoId": "proj", "path": "core.py"}, "limit", [0, 501]),
    ("repocontext_related", {"repoId": "proj", "path": "core.py"}, "offset", [-1]),
    ("repocontext_remember", {"repoId": "proj", "topic": "t"}, "ttlSeconds", [0, -1]),
    ("repocontext_forget", {"key": MEMORY_KEY, "lapse": True}, "lapseSeconds", [0]),
]


def test_out_of_range_numbers_are_refused_naming_the_field_and_its_range(served):
    calls = [
        (name, {**arguments, field: value})
        for name, arguments, field, values in OUT_OF_RANGE
        for value in values
    ]
    results = call_all(served, calls)
    for (name, arguments), result in zip(calls, results, strict=True):
        body = tool_error(result)
        field = next(f for n, a, f, _ in OUT_OF_RANGE if n == name and f in arguments)
        assert body["code"] == "input.invalid", (name, arguments, body)
        assert f"{field}:" in body["message"] and "range:" in body["message"], body


def test_the_ranges_are_in_the_input_schemas(served):
    tools = {tool.name: tool for tool in list_tools(served)}
    for name, _, field, _ in OUT_OF_RANGE:
        schema = tools[name].input_schema["properties"][field]
        branch = next(b for b in schema.get("anyOf", [schema]) if b.get("type") != "null")
        assert {"minimum", "exclusiveMinimum"} & set(branch), (name, field)
    search = tools["repocontext_search"].input_schema["properties"]["k"]
    assert (search["minimum"], search["maximum"]) == (1, 100)


def string_schemas(schema: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema node that admits a string, with where it is."""
    if isinstance(schema, dict):
        if schema.get("type") == "string" and "enum" not in schema and "const" not in schema:
            yield where, schema
        for word, value in schema.items():
            if word == "properties":
                for name, sub in value.items():
                    yield from string_schemas(sub, f"{where}.{name}")
            elif word in ("anyOf", "items", "additionalProperties", "prefixItems"):
                yield from string_schemas(value, where)
    elif isinstance(schema, list):
        for item in schema:
            yield from string_schemas(item, where)


def test_every_string_parameter_of_every_tool_is_bounded(served):
    tools = list_tools(served)
    assert len(tools) == 28
    unbounded = [
        where
        for tool in tools
        for where, schema in string_schemas(tool.input_schema, tool.name)
        if "maxLength" not in schema
    ]
    assert unbounded == []


def test_tools_list_schemas_carry_no_derived_titles(served):
    for tool in list_tools(served):
        text = json.dumps([tool.input_schema, tool.output_schema])
        assert '"title": "' not in text.replace('"title": {', ""), tool.name


def test_every_result_text_but_contexts_is_the_compact_json_of_the_structured_content(served):
    calls = [
        ("repocontext_health", {"repoId": "proj"}),
        ("repocontext_list_repos", {}),
        ("repocontext_outline", {"repoId": "proj", "path": "core.py"}),
        ("repocontext_related", {"repoId": "proj", "path": "core.py"}),
        ("repocontext_search", {"repoId": "proj", "query": "compute"}),
        ("repocontext_recall", {"key": MEMORY_KEY}),
        ("repocontext_scan", {"repoId": "proj", "scope": "files"}),
        ("repocontext_context", {"repoId": "proj", "task": "compute"}),
    ]
    for (name, _), result in zip(calls, call_all(served, calls), strict=True):
        [block] = result.content
        assert isinstance(block, TextContent)
        if name == "repocontext_context":  # its text is the code, headed per unit
            entry = tool_ok(result)["entries"][0]
            assert block.text.startswith(f"{entry['path']}:{entry['units'][0][2]}-"), block.text
            continue
        assert json.loads(block.text) == tool_ok(result), name
        assert "\n" not in block.text and ", " not in block.text[:2], name
        compact = json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)
        assert len(block.text) == len(compact), name


def test_related_lists_are_cut_at_the_limit_and_page_with_the_next_offset(served):
    arguments = {"repoId": "proj", "path": "core.py"}
    [whole] = call_all(served, [("repocontext_related", arguments)])
    whole = tool_ok(whole)
    assert len(whole["dependents"]) > 4
    assert (whole["truncated"], whole["nextOffset"]) == (False, None)
    pages: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        [page] = call_all(
            served, [("repocontext_related", {**arguments, "limit": 4, "offset": offset})]
        )
        pages.append(tool_ok(page))
        assert all(len(pages[-1][name]) <= 4 for name in ("imports", "dependents"))
        offset = pages[-1]["nextOffset"]
        assert pages[-1]["truncated"] is (offset is not None)
    assert len(pages) == -(-len(whole["dependents"]) // 4)
    assert [d for page in pages for d in page["dependents"]] == whole["dependents"]


def test_a_single_repository_server_refuses_the_served_root_under_a_second_id(tmp_path):
    repo = make_repo(tmp_path / "proj")
    settings = Settings(data_dir=tmp_path / "data", repo=repo, enable_writes=True, embedder="off")
    scoped = Grant.of("scoped", "curator", ["proj"])

    async def run() -> list[CallToolResult]:
        async with (
            Client(build_server(workspace, settings)) as client,
            Client(build_server(workspace, settings, grant=scoped)) as limited,
        ):
            return [
                await client.call_tool(
                    "repocontext_bootstrap", {"repoRoot": str(repo), "repoId": "other"}
                ),
                await client.call_tool(
                    "repocontext_bootstrap", {"repoRoot": str(repo), "repoId": "../evil"}
                ),
                await client.call_tool("repocontext_bootstrap", {"repoRoot": HUGE}),
                await limited.call_tool("repocontext_bootstrap", {"repoRoot": HUGE}),
                await client.call_tool(
                    "repocontext_bootstrap", {"repoRoot": str(repo), "repoId": "proj"}
                ),
            ]

    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, background=False)
        other, evil, huge, huge_scoped, again = anyio.run(run)
        conflict = tool_error(other)
        assert conflict["code"] == "repo.conflict" and "'proj'" in conflict["hint"]
        assert tool_error(evil)["code"] == "input.invalid"
        for result in (huge, huge_scoped):
            assert tool_error(result)["code"] == "input.invalid"
            assert len(result.content[0].text) < 2000
        assert tool_ok(again)["repoId"] == "proj"
        assert [info.repo_id for info in workspace.list_repos()] == ["proj"]
