"""Load benchmark: concurrent MCP clients over streamable HTTP against one serving process.

Generates a 10,000-file polyglot repository (``bench/index.py``'s generator, source-sized
files), starts the server with the command users run (``repocontext serve --transport http``,
plus ``--enable-writes`` and the static embedder), waits through ``repocontext_index_status``
until the index and its embeddings are complete, then runs a mix of ``repocontext_search``,
``repocontext_context``, ``repocontext_recall`` and ``repocontext_remember`` calls: first with
one client (the baseline), then with 32 clients for ``--seconds``. Every client is a real
``mcp`` client with its own session; clients run as asyncio tasks in ``--procs`` processes.

Reports calls/s (overall and per tool), p50/p99 per tool, errors (the exit status is 1 when
there is any), the server's RSS at the start and the end of the load window, and the CPU the
server and the client processes used. Run:
``.venv/bin/python bench/load.py [--seconds 60] [--quick] [--write-docs]``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _docs import write_section  # noqa: E402

from repocontext.testing import free_port, wait_live  # noqa: E402

SECTION = "## Load (`bench/load.py`)"
TOOLS = ("repocontext_search", "repocontext_context", "repocontext_recall", "repocontext_remember")
# An agent's mix: mostly lookups, a context bundle now and then, an occasional note.
MIX = (4, 2, 3, 1)
KEY_POOL = 64
UNITS = 14  # bench/index.py's source-sized files hold up to this many HandlerN/processN units


@dataclass
class Window:
    """What one client process measured in one load window."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {t: [] for t in TOOLS})
    errors: list[str] = field(default_factory=list)
    paths: Counter[str] = field(default_factory=Counter)  # search retrievalPath
    started: float = 0.0  # wall clock, comparable across processes
    ended: float = 0.0
    cpu_s: float = 0.0  # this process's user + system CPU during the window


# -- the client side -------------------------------------------------------------------------


def _arguments(
    tool: str, rng: random.Random, files: int, repo: str, keys: list[str], name: str
) -> dict[str, Any]:
    i, u = rng.randrange(files), rng.randrange(UNITS)
    if tool == "repocontext_search":
        query = rng.choice(
            [
                f"Handler{u} handle",
                f"process_{u} values scale",
                f"C{i}",
                f"f{i}",
                "registry lookup limit",
            ]
        )
        return {"repoId": repo, "query": query, "k": 10}
    if tool == "repocontext_context":
        task = rng.choice(
            [
                f"change how Handler{u} filters request items by limit",
                f"fix the scaling in process{u}",
                f"where is f{i} defined and who calls it",
            ]
        )
        return {"repoId": repo, "task": task}
    if tool == "repocontext_recall":
        return {"key": rng.choice(keys)}
    note: dict[str, Any] = {
        "repoId": repo,
        "topic": f"load-{name}",
        "title": f"note {i} by {name}",
        "body": f"Handler{u} drops items above its limit; f{i} depends on it. " * 4,
        "tags": ["load", name],
    }
    files_seen = [key for key in keys if key.startswith(f"repo/{repo}/file/")]
    if files_seen:
        note["addLinks"] = {"anchoredTo": [rng.choice(files_seen)]}
    return note


def _harvest(tool: str, content: dict[str, Any], keys: list[str], window: Window) -> None:
    """Keep keys the next recalls and links can use (search hits, new notes)."""
    found: list[str] = []
    if tool == "repocontext_search":
        window.paths[str(content.get("retrievalPath"))] += 1
        found = [hit["key"] for hit in content.get("hits", [])[:2]]
    elif tool == "repocontext_remember":
        found = [content["key"]]
    for key in found:
        if len(keys) >= KEY_POOL:
            keys.pop(0)
        keys.append(key)


async def _one_client(
    client: Any, name: str, setup: dict[str, Any], deadline: float, window: Window
) -> None:
    rng = random.Random(name)
    repo, files = setup["repo"], setup["files"]
    keys = list(setup["keys"])
    while time.perf_counter() < deadline:
        tool = rng.choices(TOOLS, weights=setup["weights"])[0]
        args = _arguments(tool, rng, files, repo, keys, name)
        start = time.perf_counter()
        try:
            result = await client.call_tool(tool, args)
        except Exception as exc:  # the benchmark's edge: count it, keep the load going
            window.errors.append(f"{tool}: {exc!r}")
            continue
        elapsed = time.perf_counter() - start
        if result.is_error or not isinstance(result.structured_content, dict):
            window.errors.append(f"{tool}: {result.content}")
            continue
        window.latencies[tool].append(elapsed)
        _harvest(tool, result.structured_content, keys, window)


async def _clients(
    url: str, names: list[str], setup: dict[str, Any], seconds: float, go: Event, ready: Queue[Any]
) -> Window:
    from mcp import Client

    window = Window()
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(Client(url)) for _ in names]
        for client in clients:  # one call per session before the clock starts
            await client.call_tool(
                "repocontext_search", {"repoId": setup["repo"], "query": "warm up"}
            )
        ready.put(os.getpid())
        await asyncio.to_thread(go.wait)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        window.started = time.time()
        deadline = time.perf_counter() + seconds
        await asyncio.gather(
            *(
                _one_client(c, n, setup, deadline, window)
                for c, n in zip(clients, names, strict=True)
            )
        )
        window.ended = time.time()
        after = resource.getrusage(resource.RUSAGE_SELF)
        window.cpu_s = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
    return window


def client_process(
    url: str,
    names: list[str],
    setup: dict[str, Any],
    seconds: float,
    go: Event,
    ready: Queue[Any],
    out: Queue[Any],
) -> None:
    """One client process: ``names`` sessions as asyncio tasks; puts its :class:`Window` on ``out``."""
    try:
        window = asyncio.run(_clients(url, names, setup, seconds, go, ready))
    except BaseException as exc:  # reported to the parent, which fails the run
        ready.put(os.getpid())
        window = Window(errors=[f"client process: {exc!r}"])
    out.put(window)


# -- the run ---------------------------------------------------------------------------------


@dataclass
class Result:
    """One load window over all client processes."""

    clients: int
    procs: int
    seconds: float
    windows: list[Window]
    rss_start_mb: float = 0.0
    rss_end_mb: float = 0.0
    server_cpu_s: float = 0.0

    @property
    def elapsed(self) -> float:
        return max(w.ended for w in self.windows) - min(w.started for w in self.windows)

    def samples(self, tool: str | None = None) -> list[float]:
        tools = TOOLS if tool is None else (tool,)
        return sorted(x for w in self.windows for t in tools for x in w.latencies[t])

    @property
    def errors(self) -> list[str]:
        return [e for w in self.windows for e in w.errors]

    @property
    def client_cpu_s(self) -> float:
        return sum(w.cpu_s for w in self.windows)

    @property
    def paths(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for w in self.windows:
            total.update(w.paths)
        return total


def percentile(samples: list[float], q: float) -> float:
    """The nearest-rank percentile of sorted ``samples`` (0 when empty)."""
    return samples[max(math.ceil(q * len(samples)) - 1, 0)] if samples else 0.0


def run_load(
    url: str,
    server: psutil.Process,
    setup: dict[str, Any],
    clients: int,
    procs: int,
    seconds: float,
) -> Result:
    context = multiprocessing.get_context("spawn")
    go, ready, out = context.Event(), context.Queue(), context.Queue()
    names = [f"c{clients}-{i}" for i in range(clients)]
    groups = [names[p::procs] for p in range(procs) if names[p::procs]]
    workers = [
        context.Process(target=client_process, args=(url, group, setup, seconds, go, ready, out))
        for group in groups
    ]
    for worker in workers:
        worker.start()
    for _ in workers:
        ready.get(timeout=300)
    cpu = server.cpu_times()
    rss_start = server.memory_info().rss
    go.set()
    time.sleep(seconds)
    rss_end = server.memory_info().rss  # the end of the window; in-flight calls still finish
    windows = [out.get(timeout=300) for _ in workers]
    after = server.cpu_times()
    for worker in workers:
        worker.join(60)
    return Result(
        clients,
        len(workers),
        seconds,
        windows,
        rss_start / 2**20,
        rss_end / 2**20,
        after.user + after.system - cpu.user - cpu.system,
    )


def settle(server: psutil.Process, patience: float) -> float:
    """Wait until the server is idle (under 0.1 core for 2 s); return the seconds waited.

    After the index and its vectors the server still warms projection state and runs the
    reconciler's first pass; load measured during that would measure that work.
    """
    started = time.perf_counter()
    while time.perf_counter() - started < patience:
        if server.cpu_percent(interval=2.0) < 10.0:
            break
    return time.perf_counter() - started


def start_server(work: Path, files: int) -> tuple[subprocess.Popen[bytes], str, float]:
    """Generate the repository and start the server on it; return it, its URL and its start time."""
    from _corpus import TEMPLATES, generate

    repo = work / "ws" / "polyglot"
    generate(repo, files, list(TEMPLATES), units=(2, UNITS))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    port = free_port()
    cli = Path(sys.executable).parent / "repocontext"
    args = [str(cli), "serve", "--transport", "http", "--host", "127.0.0.1", "--port", str(port)]
    args += [
        "--data-dir",
        str(work / "data"),
        "--repo",
        str(repo),
        "--enable-writes",
        "--embedder",
        "static",
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    started = time.perf_counter()
    with (work / "server.log").open("wb") as log:
        server = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    wait_live(base, server)
    return server, f"{base}/mcp", started


async def wait_indexed(url: str, patience: float) -> dict[str, Any]:
    """Poll ``repocontext_index_status`` until the run (embeddings included) is complete."""
    from mcp import Client

    deadline = time.perf_counter() + patience
    seen: set[tuple[str, str]] = set()
    async with Client(url) as client:
        [repo] = (await client.call_tool("repocontext_list_repos", {})).structured_content["repos"]
        while time.perf_counter() < deadline:
            status = (
                await client.call_tool("repocontext_index_status", {"repoId": repo["repoId"]})
            ).structured_content
            health = (await client.call_tool("repocontext_health", {})).structured_content
            state = (status["status"], str(status.get("phase")))
            if state not in seen:
                seen.add(state)
                print(f"  index {state[0]}/{state[1]} {status.get('error') or ''}", flush=True)
            # Completed, and vectors ready: the embedding pass runs after the index run.
            if status["status"] == "completed" and health["retrievalPhase"] == "serving":
                hits = (
                    await client.call_tool(
                        "repocontext_search",
                        {"repoId": repo["repoId"], "query": "Handler1 handle", "k": 20},
                    )
                ).structured_content["hits"]
                keys = [hit["key"] for hit in hits]
                if not keys:
                    raise RuntimeError("a search of the indexed repository found nothing")
                return {
                    "repo": repo["repoId"],
                    "status": status,
                    "phase": health["retrievalPhase"],
                    "keys": keys,
                }
            await asyncio.sleep(1)
    raise RuntimeError(f"the index was not complete after {patience:.0f} s")


# -- the report ------------------------------------------------------------------------------


def _rows(result: Result) -> list[str]:
    rows = []
    for tool in (*TOOLS, None):
        samples = result.samples(tool)
        label = tool or "**all**"
        rows.append(
            f"| {result.clients} | {label} | {len(samples):,} | {len(samples) / result.elapsed:,.1f} "
            f"| {percentile(samples, 0.5) * 1000:.1f} | {percentile(samples, 0.99) * 1000:.1f} |"
        )
    return rows


def render(load: Result, base: Result, info: dict[str, Any], command: str) -> str:
    overall, single = len(load.samples()) / load.elapsed, len(base.samples()) / base.elapsed
    paths = ", ".join(f"`{p}` {n:,}" for p, n in load.paths.most_common()) or "none"
    base_paths = ", ".join(f"`{p}` {n:,}" for p, n in base.paths.most_common()) or "none"
    lines = [
        SECTION,
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}. Reproduce: `{command}`.",
        "",
        f"Server: `repocontext serve --transport http --host 127.0.0.1 --port P --data-dir D --repo R "
        f"--enable-writes --embedder static` (the `make run` command plus writes), on a generated "
        f"{info['files']:,}-file polyglot repository ({info['mb']:.1f} MB, `bench/index.py`'s source-sized "
        f"files). Indexed, embeddings included, {info['index_s']:.0f} s after the process started "
        f"(`repocontext_index_status` completed, retrieval phase `{info['phase']}`); the load started "
        f"once the server had been idle for 2 s ({info['settle_s']:.0f} s later). Clients: real `mcp` "
        f"clients over streamable HTTP, one session each, {load.clients} of them as asyncio tasks in "
        f"{load.procs} process(es), each calling without pause; the mix per client is random with weights "
        f"search {info['weights'][0]} : context {info['weights'][1]} : recall {info['weights'][2]} : "
        f"remember {info['weights'][3]} "
        "(context at the default 8,192-token budget; recall of search hits and new notes; remember "
        "anchors a note to a file). Latencies are per call as the client sees them.",
        "",
        "| clients | tool | calls | calls/s | p50 ms | p99 ms |",
        "|---:|---|---:|---:|---:|---:|",
        *_rows(load),
        *_rows(base),
        "",
        f"- **Throughput**: {overall:,.1f} calls/s with {load.clients} clients over {load.elapsed:.1f} s; "
        f"{single:,.1f} calls/s with 1 client over {base.elapsed:.1f} s (same run, same mix): "
        f"**{overall / single:.2f}x**.",
        f"- **Errors**: {len(load.errors)} with {load.clients} clients, {len(base.errors)} with 1 "
        "(tool errors and transport failures; the benchmark exits 1 on any).",
        f"- **Server RSS** (main process): {load.rss_start_mb:.0f} MB at the start of the "
        f"{load.clients}-client window, {load.rss_end_mb:.0f} MB at its end "
        f"({load.rss_end_mb - load.rss_start_mb:+.0f} MB).",
        f"- **CPU** during the {load.clients}-client window: server {load.server_cpu_s / load.elapsed:.2f} "
        f"cores, client processes {load.client_cpu_s / load.elapsed:.2f} cores (of {os.cpu_count()}).",
        f"- Search answered by (`retrievalPath`): {paths} with {load.clients} clients; "
        f"{base_paths} with 1.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the load window")
    parser.add_argument("--baseline-seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--procs", type=int, default=1, help="client processes")
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 400 files, 5 s of load")
    parser.add_argument(
        "--weights",
        type=lambda text: tuple(int(w) for w in text.split(",")),
        default=MIX,
        help="search,context,recall,remember weights of the mix (default 4,2,3,1)",
    )
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.baseline_seconds, args.files = 5.0, 2.0, 400
    work = Path(tempfile.mkdtemp(prefix="rc-load-bench-"))
    server, url, started = start_server(work, args.files)
    try:
        setup = asyncio.run(wait_indexed(url, patience=1800))
        info = {
            "files": args.files,
            "mb": sum(p.stat().st_size for p in (work / "ws").rglob("*") if p.is_file()) / 1e6,
            "index_s": time.perf_counter() - started,
            "phase": setup["phase"],
        }
        setup["files"], setup["weights"], info["weights"] = args.files, args.weights, args.weights
        process = psutil.Process(server.pid)
        info["settle_s"] = settle(process, patience=600)
        print(
            f"indexed in {info['index_s']:.0f} s; baseline (1 client, {args.baseline_seconds:.0f} s)",
            flush=True,
        )
        base = run_load(url, process, setup, 1, 1, args.baseline_seconds)
        print(
            f"load ({args.clients} clients in {args.procs} process(es), {args.seconds:.0f} s)",
            flush=True,
        )
        load = run_load(url, process, setup, args.clients, args.procs, args.seconds)
    finally:
        server.terminate()
        server.wait(60)
    command = ".venv/bin/python bench/load.py" + (
        " --quick" if args.quick else f" --seconds {args.seconds:g}"
    )
    if args.procs != 1:
        command += f" --procs {args.procs}"
    section = render(load, base, info, command + " --write-docs")
    print(section)
    for error in (base.errors + load.errors)[:10]:
        print("error:", error, file=sys.stderr)
    if args.write_docs:
        write_section(SECTION, section)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if base.errors or load.errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
