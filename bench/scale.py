"""Scale-out benchmark: two repocontext servers sharing one PostgreSQL store.

Starts a throwaway PostgreSQL cluster (``repocontext.testing_pg``: ``initdb`` + ``pg_ctl`` on a
free loopback port, fsync and synchronous commit on), generates a polyglot repository
(``bench/load.py``'s generator) and starts server A with the command users run
(``repocontext serve --transport http --repo R --enable-writes --embedder static --store-url
postgresql://... --workers 1``) with its own data directory; once A has indexed and embedded the
repository, server B starts the same way with another data directory over the same store.
Then it measures:

* **staleness**: the seconds from server A's acknowledgement of a write to the first answer of
  server B that holds it, polled without pause: a note remembered through A and found by B's
  keyword search (memory scope), the same for B's semantic search (B embeds what its change
  feed follower reports), and a file added to the working tree and indexed through A
  (``repocontext_bootstrap``: acknowledged when A reports the run completed) found by B's
  keyword search;
* **throughput**: the load of ``bench/load.py`` (its client mix, real ``mcp`` clients) with
  32 clients against server A alone, then split evenly over A and B (one client process per
  server), in the same run: calls/s, p50/p95 per tool and the ratio.

Run: ``.venv/bin/python bench/scale.py [--files 2000] [--seconds 20] [--write-docs]``.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _docs import write_section  # noqa: E402
from _load_clients import MIX, Result, client_process, percentile, result_rows  # noqa: E402
from load import Tree, generate_repo, settle, wait_indexed  # noqa: E402

from repocontext.testing import free_port, wait_live  # noqa: E402
from repocontext.testing_pg import PostgresCluster  # noqa: E402

SECTION = "## Scale-out (`bench/scale.py`)"
POLL_LIMIT = 120.0  # seconds one write may take to show on the other server
SUBJECTS = (
    "the upload queue retries failed chunks three times",
    "session cookies expire after thirty minutes of inactivity",
    "the billing export runs nightly at two in the morning",
    "thumbnails are generated lazily on first request",
    "feature flags are cached for sixty seconds per process",
    "password reset tokens are single use and expire in an hour",
    "the search index is rebuilt when the schema version changes",
    "webhook deliveries back off exponentially up to a day",
    "rate limits apply per API key, not per user",
    "audit logs are kept for seven years in cold storage",
    "the mobile client batches analytics events every minute",
    "database migrations must be reversible and run in a transaction",
    "email templates are rendered with the user's locale",
    "the cache key includes the tenant id and the locale",
    "background jobs time out after fifteen minutes",
    "uploaded images are stripped of their EXIF metadata",
    "the payment provider sends duplicate callbacks on retries",
    "report generation streams rows instead of loading them all",
    "the scheduler skips a run when the previous one still holds its lock",
    "invoices are numbered per tenant without gaps",
)
"""Distinct notes: a semantic search for one finds that one among the others."""


@dataclass(frozen=True)
class Server:
    """One serving process and its base URL."""

    process: subprocess.Popen[bytes]
    url: str


def start_server(work: Path, name: str, repo: Path, store_url: str) -> Server:
    """Start one server over the shared store with its own data directory."""
    port = free_port()
    cli = Path(sys.executable).parent / "repocontext"
    args = [str(cli), "serve", "--transport", "http", "--host", "127.0.0.1", "--port", str(port)]
    args += ["--data-dir", str(work / f"data-{name}"), "--repo", str(repo), "--enable-writes"]
    args += ["--embedder", "static", "--workers", "1", "--store-url", store_url]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with (work / f"server-{name}.log").open("wb") as log:
        server = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    wait_live(base, server)
    return Server(server, base)


# -- staleness -------------------------------------------------------------------------------


async def _until(probe: Callable[[], Awaitable[bool]]) -> float:
    """Seconds until ``probe`` answers True (raises after :data:`POLL_LIMIT`)."""
    started = time.perf_counter()
    while not await probe():
        if time.perf_counter() - started > POLL_LIMIT:
            raise RuntimeError(f"not visible after {POLL_LIMIT:.0f} s")
    return time.perf_counter() - started


async def note_lags(url_a: str, url_b: str, repo: str, n: int, mode: str) -> list[float]:
    """Seconds from A acknowledging a note to B's ``mode`` search of memory finding it."""
    from mcp import Client

    lags = []
    async with Client(f"{url_a}/mcp") as a, Client(f"{url_b}/mcp") as b:
        for i in range(n):
            marker = f"quasar{uuid.uuid4().hex[:10]}"
            title = f"{SUBJECTS[i % len(SUBJECTS)]} {marker}"
            view = (
                await a.call_tool(
                    "repocontext_remember",
                    {"repoId": repo, "topic": "staleness", "title": title, "body": title},
                )
            ).structured_content
            query = marker if mode == "keyword" else title.replace(marker, "")

            async def found(query: str = query, key: str = view["key"]) -> bool:
                result = await b.call_tool(
                    "repocontext_search",
                    {"repoId": repo, "query": query, "scope": "memory", "mode": mode, "k": 10},
                )
                hits = (result.structured_content or {}).get("hits", [])
                # (semantic: found by B's vectors, not by a word the note shares with the query)
                return any(
                    hit["key"] == key and (mode != "semantic" or "semantic" in hit["reasons"])
                    for hit in hits
                )

            lags.append(await _until(found))
    return lags


async def file_lags(url_a: str, url_b: str, repo: Path, repo_id: str, n: int) -> list[float]:
    """Seconds from A reporting an index run with a new file completed to B's search hit."""
    from mcp import Client

    lags = []
    async with Client(f"{url_a}/mcp") as a, Client(f"{url_b}/mcp") as b:
        for i in range(n):
            marker = f"nebula{uuid.uuid4().hex[:10]}"
            (repo / f"stale_{i}.py").write_text(f"def {marker}():\n    return {i}\n")
            status = await _status(a, repo_id)
            before = status["attempt"]
            await a.call_tool("repocontext_bootstrap", {"repoRoot": str(repo), "repoId": repo_id})

            async def indexed(before: int = before) -> bool:
                # The run's records are written (its embedding pass may still run).
                status = await _status(a, repo_id)
                done = status["status"] == "completed" or status.get("phase") == "embedding"
                return bool(status["attempt"] > before and done)

            await _until(indexed)

            async def found(marker: str = marker, path: str = f"stale_{i}.py") -> bool:
                result = await b.call_tool(
                    "repocontext_search",
                    {"repoId": repo_id, "query": marker, "mode": "keyword", "k": 5},
                )
                hits = (result.structured_content or {}).get("hits", [])
                return any(hit.get("path") == path for hit in hits)

            lags.append(await _until(found))
    return lags


async def _status(client: Any, repo_id: str) -> dict[str, Any]:
    result = await client.call_tool("repocontext_index_status", {"repoId": repo_id})
    return dict(result.structured_content or {})


# -- throughput ------------------------------------------------------------------------------


def run_split(
    urls: list[str], trees: list[Tree], setup: dict[str, Any], clients: int, seconds: float
) -> Result:
    """``clients`` clients, one client process per URL, each process with an equal share.

    The result's ``workers`` is the number of distinct servers the clients used.
    """
    context = multiprocessing.get_context("spawn")
    go, ready, out = context.Event(), context.Queue(), context.Queue()
    names = [f"s{len(urls)}c{clients}-{i}" for i in range(clients)]
    groups = [names[p :: len(urls)] for p in range(len(urls))]
    runners = [
        context.Process(
            target=client_process, args=(f"{url}/mcp", group, setup, seconds, go, ready, out)
        )
        for url, group in zip(urls, groups, strict=True)
    ]
    for runner in runners:
        runner.start()
    for _ in runners:
        ready.get(timeout=300)
    cpu = sum(tree.cpu_s() for tree in trees)
    go.set()
    time.sleep(seconds)
    windows = [out.get(timeout=300) for _ in runners]
    server_cpu = sum(tree.cpu_s() for tree in trees) - cpu
    for runner in runners:
        runner.join(60)
    servers = len(set(urls))
    return Result(servers, clients, len(runners), seconds, windows, 0.0, 0.0, server_cpu)


# -- the report ------------------------------------------------------------------------------


def _lag_row(label: str, lags: list[float]) -> str:
    ordered = sorted(lags)
    return (
        f"| {label} | {len(ordered)} | {percentile(ordered, 0.5):.3f} "
        f"| {percentile(ordered, 0.95):.3f} | {ordered[-1]:.3f} |"
    )


def render(lags: dict[str, list[float]], one: Result, two: Result, info: dict[str, Any]) -> str:
    search = two.rate("repocontext_search") / max(one.rate("repocontext_search"), 1e-9)
    errors = len(one.errors) + len(two.errors)
    return "\n".join(
        [
            SECTION,
            "",
            f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
            f"{os.cpu_count()} cores, Python {platform.python_version()}, PostgreSQL "
            f"{info['pg']} (a throwaway local cluster, fsync and synchronous commit on); load "
            f"average {info['load']} when it started. Reproduce: `{info['command']}`.",
            "",
            "Two servers, each `repocontext serve --transport http --repo R --enable-writes "
            "--embedder static --workers 1 --store-url postgresql://...` with its own data "
            f"directory, over one store, on a generated {info['files']:,}-file polyglot "
            f"repository; A indexed and embedded it in {info['index_s']:.0f} s, B (started "
            f"after) caught up through its change-feed follower in {info['catch_up_s']:.0f} s.",
            "",
            "**Staleness**: seconds from A's acknowledgement to the first answer of B that "
            "holds the write (B polled without pause; a poll is one search call).",
            "",
            "| write through A, read through B | samples | p50 s | p95 s | max s |",
            "|---|---:|---:|---:|---:|",
            _lag_row("note → B keyword search (memory)", lags["keyword"]),
            _lag_row("note → B semantic search (memory)", lags["semantic"]),
            _lag_row("file indexed → B keyword search", lags["file"]),
            "",
            f"**Throughput**: {one.clients} clients (`bench/load.py`'s mix, real `mcp` "
            f"clients), {info['seconds']:g} s per window, against A alone and then split evenly "
            "over A and B (servers column).",
            "",
            "| servers | clients | tool | calls | calls/s | p50 ms | p95 ms |",
            "|---:|---:|---|---:|---:|---:|---:|",
            *result_rows(one),
            *result_rows(two),
            "",
            f"- Two servers against one at {one.clients} clients: search "
            f"{two.rate('repocontext_search'):,.1f} against "
            f"{one.rate('repocontext_search'):,.1f} calls/s (**{search:.2f}x**), all calls "
            f"{two.rate():,.1f} against {one.rate():,.1f}/s; server CPU "
            f"{two.server_cpu_s / two.elapsed:.2f} against {one.server_cpu_s / one.elapsed:.2f}"
            f" cores, clients {two.client_cpu_s / two.elapsed:.2f} and "
            f"{one.client_cpu_s / one.elapsed:.2f} cores (all on the same machine).",
            f"- Errors: {errors} (the benchmark exits 1 on any).",
            "",
        ]
    )


def measure(args: argparse.Namespace, work: Path, cluster: PostgresCluster) -> str:
    """Start both servers, measure staleness and throughput; return the docs section."""
    repo = generate_repo(work, args.files)
    store_url = cluster.store_url("scale_")
    info: dict[str, Any] = {"files": args.files, "seconds": args.seconds}
    info["load"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.perf_counter()
    server_a = start_server(work, "a", repo, store_url)
    servers = [server_a]
    try:
        setup = asyncio.run(wait_indexed(f"{server_a.url}/mcp", patience=1800))
        info["index_s"] = time.perf_counter() - started
        started = time.perf_counter()
        server_b = start_server(work, "b", repo, store_url)
        servers.append(server_b)
        asyncio.run(wait_indexed(f"{server_b.url}/mcp", patience=1800))
        info["catch_up_s"] = time.perf_counter() - started
        urls = [s.url for s in servers]
        trees = [Tree(s.process.pid) for s in servers]
        for tree in trees:
            settle(tree, patience=300)
        print("staleness", flush=True)
        lags = {
            "keyword": asyncio.run(note_lags(*urls, setup["repo"], args.samples, "keyword")),
            "semantic": asyncio.run(note_lags(*urls, setup["repo"], args.samples // 2, "semantic")),
            "file": asyncio.run(file_lags(*urls, repo, setup["repo"], max(args.samples // 4, 5))),
        }
        setup["files"], setup["weights"] = args.files, MIX
        for tree in trees:
            settle(tree, patience=300)
        print(f"throughput: {args.clients} clients on A, then on A and B", flush=True)
        one = run_split(urls[:1] * 2, trees[:1], setup, args.clients, args.seconds)
        two = run_split(urls, trees, setup, args.clients, args.seconds)
    finally:
        for server in servers:
            server.process.terminate()
            server.process.wait(120)
    info["pg"] = subprocess.run(
        [str(cluster.bin_dir / "postgres"), "--version"], capture_output=True, text=True
    ).stdout.split()[2]
    info["command"] = f".venv/bin/python bench/scale.py --files {args.files} --write-docs"
    section = render(lags, one, two, info)
    if one.errors or two.errors:
        raise SystemExit(f"errors: {(one.errors + two.errors)[:5]}")
    return section


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--samples", type=int, default=40, help="notes for the staleness rows")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rc-scale-bench-"))
    try:
        with PostgresCluster() as cluster:
            section = measure(args, work, cluster)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
