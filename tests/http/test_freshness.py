"""Live freshness: a serving process keeps every registered repository searchable as it changes.

A real `repocontext serve` process (workspace mode, file watching, the static embedder) and
the real MCP client over HTTP: an edit is found in its new form, and a deleted file is gone,
within 2 seconds; each answer's `freshness` moves with it.
"""

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from repocontext.mcp.client import http_client
from repocontext.settings import Settings
from repocontext.testing import start_http_server, tool_ok
from repocontext.workspace import Workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

DEADLINE_SECONDS = 2.0


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    ws = tmp_path / "ws"
    for name in ("alpha", "beta"):
        (ws / name / "pkg").mkdir(parents=True)
        (ws / name / "pkg" / "core.py").write_text(f"def {name}_core():\n    return 1\n")
    data = tmp_path / "data"
    with Workspace.open(Settings(data_dir=data, workspace_root=ws, embedder="off")) as workspace:
        for name in ("alpha", "beta"):
            workspace.bootstrap(ws / name, name, background=False)
    env = {"REPOCONTEXT_RECONCILE": "watch", "REPOCONTEXT_EMBEDDER": "static"}
    proc, base = start_http_server(data, ws, env=env)
    try:
        yield base, ws
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def search(client: Any, repo_id: str, query: str) -> dict[str, Any]:
    """The answer, with `hits` cut to keyword matches (semantic neighbours always exist)."""
    result = await client.call_tool("repocontext_search", {"repoId": repo_id, "query": query})
    answer = tool_ok(result)
    answer["hits"] = [hit for hit in answer["hits"] if _keyword_match(hit["reasons"])]
    return answer


def _keyword_match(reasons: list[str]) -> bool:
    return any(r == "content-match" or r.startswith("symbol:") for r in reasons)


async def first_time(client: Any, repo_id: str, query: str, want: bool) -> tuple[float, dict]:
    """Seconds until `query` finds (or no longer finds) a hit, polling every 50 ms."""
    started = time.monotonic()
    while True:
        answer = await search(client, repo_id, query)
        elapsed = time.monotonic() - started
        if bool(answer["hits"]) == want or elapsed > 3 * DEADLINE_SECONDS:
            return elapsed, answer
        await anyio.sleep(0.05)


async def test_edits_and_deletions_are_searchable_within_two_seconds(
    served: tuple[str, Path],
) -> None:
    base, ws = served
    async with http_client(f"{base}/mcp") as client:
        assert (await search(client, "beta", "beta_core"))["hits"]
        # The watcher starts a moment after the server does: wait until a probe file is found,
        # then every later edit is measured against the deadline.
        (ws / "beta" / "probe.py").write_text("def probe_started():\n    pass\n")
        started = time.monotonic()
        while not (await search(client, "beta", "probe_started"))["hits"]:
            assert time.monotonic() - started < 60, "the watcher never picked up the probe"
            await anyio.sleep(0.1)
        before = (await search(client, "beta", "beta_core"))["freshness"]

        (ws / "beta" / "pkg" / "core.py").write_text("def quokka_refresh():\n    return 2\n")
        elapsed, answer = await first_time(client, "beta", "quokka_refresh", want=True)
        assert elapsed < DEADLINE_SECONDS, f"edit searchable after {elapsed:.2f} s"
        assert answer["hits"][0]["path"] == "pkg/core.py"
        assert answer["freshness"]["storeSeq"] > before["storeSeq"]
        assert not (await search(client, "beta", "beta_core"))["hits"]  # the old form is gone

        (ws / "alpha" / "pkg" / "extra.py").write_text("def wombat_added():\n    return 3\n")
        elapsed, answer = await first_time(client, "alpha", "wombat_added", want=True)
        assert elapsed < DEADLINE_SECONDS, f"new file searchable after {elapsed:.2f} s"

        (ws / "alpha" / "pkg" / "extra.py").unlink()
        elapsed, answer = await first_time(client, "alpha", "wombat_added", want=False)
        assert elapsed < DEADLINE_SECONDS, f"deleted file still found after {elapsed:.2f} s"
        outline = await client.call_tool(
            "repocontext_outline", {"repoId": "alpha", "path": "pkg/extra.py"}
        )
        assert tool_ok(outline)["exists"] is False
