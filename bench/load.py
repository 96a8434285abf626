"""Load benchmark: concurrent MCP clients over streamable HTTP, one worker process against N.

Generates a 10,000-file polyglot repository (``bench/index.py``'s generator, source-sized
files), starts the server with the command users run (``repocontext serve --transport http``,
plus ``--enable-writes`` and the static embedder) with ``--workers 1``, waits through
``repocontext_index_status`` until the index and its embeddings are complete, then runs a mix of
``repocontext_search``, ``repocontext_context``, ``repocontext_recall`` and
``repocontext_remember`` calls with 1, 8 and 32 clients (``--seconds`` each). Then the same
server is started again over the same data directory with ``--workers N`` (default: the
number of cores) and the same windows run again. Every client is a real ``mcp`` client with its
own session; clients run as asyncio tasks in ``--procs`` processes.

Reports calls/s (overall and per tool), p50/p95 per tool, the ratio of N workers to 1 at each
client count (search calls/s and all calls/s), errors (the exit status is 1 when there is any),
the server's RSS (all its processes) and the CPU the server and the client processes used.
Run: ``.venv/bin/python bench/load.py [--seconds 30] [--workers N] [--quick] [--write-docs]``.
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _docs import write_section  # noqa: E402
from _load_clients import (  # noqa: E402
    MIX,
    UNITS,
    Result,
    client_process,
    percentile,
    result_rows,
)

from repocontext.testing import free_port, wait_live  # noqa: E402

SECTION = "## Load (`bench/load.py`)"


# -- the run ---------------------------------------------------------------------------------


class Tree:
    """The server's processes: the supervisor and its workers (found anew at every read)."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)

    def processes(self) -> list[psutil.Process]:
        return [self.root, *self.root.children(recursive=True)]

    def cpu_s(self) -> float:
        total = 0.0
        for process in self.processes():
            try:
                times = process.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
        return total

    def rss(self) -> int:
        total = 0
        for process in self.processes():
            try:
                total += process.memory_info().rss
            except psutil.NoSuchProcess:
                continue
        return total


def run_load(
    url: str,
    server: Tree,
    setup: dict[str, Any],
    workers: int,
    clients: int,
    procs: int,
    seconds: float,
) -> Result:
    context = multiprocessing.get_context("spawn")
    go, ready, out = context.Event(), context.Queue(), context.Queue()
    names = [f"w{workers}c{clients}-{i}" for i in range(clients)]
    groups = [names[p::procs] for p in range(procs) if names[p::procs]]
    runners = [
        context.Process(target=client_process, args=(url, group, setup, seconds, go, ready, out))
        for group in groups
    ]
    for runner in runners:
        runner.start()
    for _ in runners:
        ready.get(timeout=300)
    cpu = server.cpu_s()
    machine = _busy_s()
    rss_start = server.rss()
    go.set()
    time.sleep(seconds)
    rss_end = server.rss()  # the end of the window; in-flight calls still finish
    windows = [out.get(timeout=300) for _ in runners]
    after = server.cpu_s()
    machine_after = _busy_s()
    for runner in runners:
        runner.join(60)
    return Result(
        workers,
        clients,
        len(runners),
        seconds,
        windows,
        rss_start / 2**20,
        rss_end / 2**20,
        after - cpu,
        machine_after - machine,
    )


def _busy_s() -> float:
    """CPU seconds the whole machine has been busy (every core, every process)."""
    times = psutil.cpu_times()
    return float(sum(times)) - times.idle - getattr(times, "iowait", 0.0)


def settle(server: Tree, patience: float) -> float:
    """Wait until the server is idle (under 0.1 core for 2 s); return the seconds waited.

    After the index and its vectors the server still warms projection state and runs the
    reconciler's first pass; load measured during that would measure that work.
    """
    started = time.perf_counter()
    while time.perf_counter() - started < patience:
        before = server.cpu_s()
        time.sleep(2.0)
        if server.cpu_s() - before < 0.2:
            break
    return time.perf_counter() - started


def generate_repo(work: Path, files: int) -> Path:
    """The generated repository the server indexes."""
    from _corpus import TEMPLATES, generate

    repo = work / "ws" / "polyglot"
    generate(repo, files, list(TEMPLATES), units=(2, UNITS))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def start_server(
    work: Path, repo: Path, workers: int
) -> tuple[subprocess.Popen[bytes], str, float]:
    """Start the server on ``repo`` with ``workers`` processes; return it, its URL, its start."""
    port = free_port()
    cli = Path(sys.executable).parent / "repocontext"
    args = [str(cli), "serve", "--transport", "http", "--host", "127.0.0.1", "--port", str(port)]
    args += ["--data-dir", str(work / "data"), "--repo", str(repo), "--enable-writes"]
    args += ["--embedder", "static", "--workers", str(workers)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    started = time.perf_counter()
    with (work / f"server-{workers}.log").open("wb") as log:
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


def serve_and_load(
    work: Path, repo: Path, workers: int, args: argparse.Namespace, info: dict[str, Any]
) -> list[Result]:
    """Start the server with ``workers`` processes and run every client count against it."""
    server, url, started = start_server(work, repo, workers)
    results = []
    try:
        setup = asyncio.run(wait_indexed(url, patience=1800))
        info.setdefault("index_s", time.perf_counter() - started)
        info.setdefault("phase", setup["phase"])
        setup["files"], setup["weights"] = args.files, args.weights
        tree = Tree(server.pid)
        info[f"settle_{workers}"] = settle(tree, patience=600)
        for clients in args.client_counts:
            print(f"{workers} worker(s), {clients} client(s), {args.seconds:.0f} s", flush=True)
            results.append(run_load(url, tree, setup, workers, clients, args.procs, args.seconds))
    finally:
        server.terminate()
        server.wait(120)
    return results


# -- the report ------------------------------------------------------------------------------


def _ratio_rows(single: list[Result], multi: list[Result]) -> list[str]:
    rows = []
    for one, many in zip(single, multi, strict=True):
        search = many.rate("repocontext_search") / max(one.rate("repocontext_search"), 1e-9)
        rows.append(
            f"| {one.clients} | {one.rate('repocontext_search'):,.1f} "
            f"| {many.rate('repocontext_search'):,.1f} | **{search:.2f}x** "
            f"| {one.rate():,.1f} | {many.rate():,.1f} | {many.rate() / max(one.rate(), 1e-9):.2f}x "
            f"| {_cpu(one)} | {_cpu(many)} |"
        )
    return rows


def _cpu(result: Result) -> str:
    """Cores used by the server, the clients and everything else during a window."""
    parts = (result.server_cpu_s, result.client_cpu_s, result.others_cpu_s)
    return " / ".join(f"{part / result.elapsed:.2f}" for part in parts)


def render(single: list[Result], multi: list[Result], info: dict[str, Any], command: str) -> str:
    n = multi[0].workers
    top_one, top_many = single[-1], multi[-1]
    search_ratio = top_many.rate("repocontext_search") / max(
        top_one.rate("repocontext_search"), 1e-9
    )
    paths = ", ".join(f"`{p}` {k:,}" for p, k in top_many.paths.most_common()) or "none"
    errors = sum(len(r.errors) for r in (*single, *multi))
    lines = [
        SECTION,
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}; load average {info['load']} when it "
        f"started (the machine is shared). Reproduce: `{command}`.",
        "",
        "Server: `repocontext serve --transport http --host 127.0.0.1 --port P --data-dir D "
        "--repo R --enable-writes --embedder static --workers W` (the `make run` command plus "
        f"writes), on a generated {info['files']:,}-file polyglot repository "
        f"({info['mb']:.1f} MB, `bench/index.py`'s source-sized files). Indexed, embeddings "
        f"included, {info['index_s']:.0f} s after the first start (`--workers 1`; retrieval "
        f"phase `{info['phase']}`); then the 1-worker windows ran, the server stopped and "
        f"started again over the same data directory with `--workers {n}` (the cores), and the "
        "same windows ran against it. Each window started once the server had been idle for "
        f"2 s. Clients: real `mcp` clients over streamable HTTP, one session each, as asyncio "
        f"tasks in {top_one.procs} process(es), each calling without pause, "
        f"{info['seconds']:g} s per window; the mix per client is random with weights search "
        f"{info['weights'][0]} : context {info['weights'][1]} : recall {info['weights'][2]} : "
        f"remember {info['weights'][3]} (context at the default 8,192-token budget; recall of "
        "search hits and new notes; remember anchors a note to a file). Latencies are per call "
        "as the client sees them; server CPU and RSS sum the supervisor and its workers; "
        "`others` is the CPU the rest of the machine used during the window (the cores "
        "are shared with other work, which the server could not use).",
        "",
        "| workers | clients | tool | calls | calls/s | p50 ms | p95 ms |",
        "|---:|---:|---|---:|---:|---:|---:|",
        *(row for result in (*single, *multi) for row in result_rows(result)),
        "",
        f"| clients | search/s, 1 worker | search/s, {n} workers | ratio | all calls/s, 1 "
        f"| all calls/s, {n} | ratio | cores: server / clients / others, 1 "
        f"| cores: server / clients / others, {n} |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *_ratio_rows(single, multi),
        "",
        f"- **{n} workers against 1 at {top_one.clients} clients**: search "
        f"{top_many.rate('repocontext_search'):,.1f} against "
        f"{top_one.rate('repocontext_search'):,.1f} calls/s, **{search_ratio:.2f}x**; search "
        f"p95 {percentile(top_many.samples('repocontext_search'), 0.95) * 1000:,.0f} ms against "
        f"{percentile(top_one.samples('repocontext_search'), 0.95) * 1000:,.0f} ms.",
        f"- **Errors**: {errors} over all windows (tool errors and transport failures; the "
        "benchmark exits 1 on any).",
        f"- **Server RSS** at the end of the {top_one.clients}-client window: "
        f"{top_one.rss_end_mb:,.0f} MB with 1 worker, {top_many.rss_end_mb:,.0f} MB with {n}.",
        f"- Search answered by (`retrievalPath`) with {n} workers and {top_many.clients} "
        f"clients: {paths}.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each window")
    parser.add_argument(
        "--clients",
        dest="client_counts",
        type=lambda text: tuple(int(c) for c in text.split(",")),
        default=(1, 8, 32),
        help="client counts, one window each (default 1,8,32)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=getattr(os, "process_cpu_count", os.cpu_count)() or 1,
        help="worker processes of the second server (default: the cores)",
    )
    parser.add_argument("--procs", type=int, default=1, help="client processes")
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 400 files, 5 s windows")
    parser.add_argument(
        "--weights",
        type=lambda text: tuple(int(w) for w in text.split(",")),
        default=MIX,
        help="search,context,recall,remember weights of the mix (default 4,2,3,1)",
    )
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.files = 5.0, 400
    work = Path(tempfile.mkdtemp(prefix="rc-load-bench-"))
    repo = generate_repo(work, args.files)
    info: dict[str, Any] = {
        "files": args.files,
        "mb": sum(p.stat().st_size for p in (work / "ws").rglob("*") if p.is_file()) / 1e6,
        "weights": args.weights,
        "seconds": args.seconds,
        "load": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    single = serve_and_load(work, repo, 1, args, info)
    multi = serve_and_load(work, repo, args.workers, args, info)
    command = ".venv/bin/python bench/load.py" + (
        " --quick" if args.quick else f" --seconds {args.seconds:g}"
    )
    if args.procs != 1:
        command += f" --procs {args.procs}"
    section = render(single, multi, info, command + " --write-docs")
    print(section)
    failures = [e for r in (*single, *multi) for e in r.errors]
    for error in failures[:10]:
        print("error:", error, file=sys.stderr)
    if args.write_docs:
        write_section(SECTION, section)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
