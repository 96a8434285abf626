"""Memory and claims benchmark over the real HTTP MCP transport.

Starts `repocontext serve --transport http` on a fresh store, then measures, with 1 and with 8
concurrent client processes (each its own MCP session): remember/s, recall/s and
claim+release/s, with p50/p99 latencies per call. The anchor, in the same run, is a plain
LMDB put committed with sync per write (what one acknowledged write costs on this disk).
Run: ``.venv/bin/python bench/memory.py [--write-docs]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _docs import write_section  # noqa: E402

SECTION = "## Memory and claims (`bench/memory.py`)"
OPS = ("remember", "recall", "claim+release")


def client_run(url: str, name: str, count: int) -> dict[str, list[float]]:
    """One client process: ``count`` calls of each operation; latencies in seconds."""
    return asyncio.run(_client(url, name, count))


async def _client(url: str, name: str, count: int) -> dict[str, list[float]]:
    from mcp import Client

    latencies: dict[str, list[float]] = {op: [] for op in OPS}
    keys: list[str] = []
    async with Client(url) as client:
        for i in range(count):
            start = time.perf_counter()
            made = await client.call_tool(
                "repocontext_remember",
                {
                    "repoId": "bench",
                    "topic": f"t-{name}",
                    "title": f"note {i} of {name}",
                    "body": "A decision worth keeping. " * 8,
                    "tags": ["bench", name],
                },
            )
            latencies["remember"].append(time.perf_counter() - start)
            assert not made.is_error, made.content
            keys.append(made.structured_content["key"])
        for i in range(count):
            start = time.perf_counter()
            got = await client.call_tool("repocontext_recall", {"key": keys[i]})
            latencies["recall"].append(time.perf_counter() - start)
            assert got.structured_content["exists"]
        for i in range(count):
            start = time.perf_counter()
            claim = await client.call_tool(
                "repocontext_claim", {"key": keys[i], "owner": name, "leaseSeconds": 30}
            )
            token = claim.structured_content["fencingToken"]
            await client.call_tool(
                "repocontext_release_claim", {"key": keys[i], "fencingToken": token}
            )
            latencies["claim+release"].append(time.perf_counter() - start)
    return latencies


def lmdb_anchor(directory: Path, count: int = 2000) -> float:
    """Synced single puts per second of raw LMDB (one transaction per write)."""
    import lmdb

    env = lmdb.open(str(directory), map_size=1 << 28, sync=True, metasync=True)
    value = b"x" * 300
    start = time.perf_counter()
    for i in range(count):
        with env.begin(write=True) as txn:
            txn.put(f"key-{i:08}".encode(), value)
    elapsed = time.perf_counter() - start
    env.close()
    return count / elapsed


def start_server(work: Path) -> tuple[subprocess.Popen[bytes], str]:
    from repocontext.settings import Settings
    from repocontext.testing import start_http_server
    from repocontext.workspace import Workspace

    repo = work / "ws" / "bench"
    repo.mkdir(parents=True)
    (repo / "a.py").write_text("x = 1\n")
    data = work / "data"
    with Workspace.open(Settings(data_dir=data, workspace_root=repo.parent, embedder="off")) as ws:
        ws.bootstrap(repo, "bench", background=False)
    server, base = start_http_server(data, repo.parent)
    return server, f"{base}/mcp"


def measure(url: str, clients: int, count: int) -> dict[str, dict[str, float]]:
    with ProcessPoolExecutor(clients, mp_context=get_context("spawn")) as pool:
        start = time.perf_counter()
        futures = [pool.submit(client_run, url, f"c{clients}-{i}", count) for i in range(clients)]
        results = [f.result() for f in futures]
        wall = time.perf_counter() - start
    rows: dict[str, dict[str, float]] = {}
    for op in OPS:
        samples = sorted(x for r in results for x in r[op])
        busy = max(sum(r[op]) for r in results)  # the slowest client's time in this phase
        rows[op] = {
            "per_s": len(samples) / busy,
            "p50_ms": statistics.median(samples) * 1000,
            "p99_ms": samples[int(len(samples) * 0.99) - 1] * 1000,
        }
    rows["_wall"] = {"s": wall}
    return rows


def render(anchor: float, results: dict[int, dict[str, dict[str, float]]], count: int) -> str:
    lines = [
        SECTION,
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}. `repocontext serve --transport http` on a "
        f"fresh store; each client is its own process and MCP session and makes {count} calls "
        "of each operation (claim+release: one claim and one release). Rates are calls per "
        "second over all clients; latencies are per call. Reproduce: "
        "`.venv/bin/python bench/memory.py --write-docs`.",
        "",
        "| clients | operation | calls/s | p50 ms | p99 ms | ratio to raw LMDB synced puts/s |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for clients, rows in results.items():
        for op in OPS:
            row = rows[op]
            lines.append(
                f"| {clients} | {op} | {row['per_s']:.0f} | {row['p50_ms']:.1f} | "
                f"{row['p99_ms']:.1f} | {row['per_s'] / anchor:.2f} |"
            )
    lines += [
        "",
        f"Anchor (same run): raw LMDB, one synced transaction per 300-byte put: {anchor:.0f} "
        "puts/s. Every remember and claim is such a durable write plus the pycrdt document "
        "merge, the change feed, the MCP/JSON-RPC round trip and the HTTP transport.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rc-memory-bench-"))
    anchor = lmdb_anchor(work / "anchor")
    server, url = start_server(work)
    try:
        results = {clients: measure(url, clients, args.calls) for clients in (1, 8)}
    finally:
        server.terminate()
        server.wait(30)
    section = render(anchor, results, args.calls)
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
