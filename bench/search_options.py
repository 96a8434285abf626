"""What the benchmark-facing search options cost: one process for many queries, and filters.

Two measurements on a real repository (a clone, e.g. of flask) and, with ``--files N``, on a
generated polyglot tree of N files:

* batch: the same queries (the repository's recent commit subjects) answered by one
  ``repocontext search --json`` process each, then by one ``search --queries`` process;
  the wall time per query of each, process start included;
* filters: ``SearchService.search`` in one process, unfiltered and with a language filter, a
  glob filter and both, in keyword and hybrid mode (median and p95 of the queries, each run
  once to warm up first).

Run: ``.venv/bin/python bench/search_options.py CLONE [--queries 30] [--glob 'src/**']
[--files 10000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _corpus import TEMPLATES, generate  # noqa: E402

from repocontext.search.request import SearchRequest  # noqa: E402
from repocontext.settings import Settings  # noqa: E402
from repocontext.workspace import Workspace  # noqa: E402

CLI = [sys.executable, "-m", "repocontext"]
FILTERS: dict[str, dict[str, list[str]]] = {
    "none": {},
    "language python": {"languages": ["python"]},
    "glob": {"globs": []},  # (the glob of the repository)
    "language + glob": {"languages": ["python"], "globs": []},
}


def subjects(repo: Path, count: int) -> list[str]:
    """The repository's most recent distinct commit subjects (the queries)."""
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "--no-merges", "--format=%s", f"-{count * 3}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = list(dict.fromkeys(line.strip() for line in out.splitlines() if line.strip()))
    return found[:count]


def index(repo: Path, data: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    subprocess.run(
        [*CLI, "index", str(repo), "--data-dir", str(data), "--json"],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )


def batch_timing(data: Path, queries: list[str]) -> dict[str, tuple[float, float]]:
    """Wall and CPU seconds per query: one process per query, one ``--queries`` process.

    CPU time (user + system of the child processes) is the figure that holds on a shared,
    loaded machine; the wall time is what a user waits.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    timings: dict[str, tuple[float, float]] = {}
    wall, cpu = time.perf_counter(), _children_cpu()
    for query in queries:
        subprocess.run(
            [*CLI, "search", "--data-dir", str(data), "--json", "--query-file", "-"],
            input=query,
            text=True,
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
    timings["single"] = (
        (time.perf_counter() - wall) / len(queries),
        (_children_cpu() - cpu) / len(queries),
    )
    lines = "".join(json.dumps({"query": q, "id": i}) + "\n" for i, q in enumerate(queries))
    wall, cpu = time.perf_counter(), _children_cpu()
    out = subprocess.run(
        [*CLI, "search", "--data-dir", str(data), "--queries", "-"],
        input=lines,
        text=True,
        check=True,
        env=env,
        capture_output=True,
    )
    timings["batch"] = (
        (time.perf_counter() - wall) / len(queries),
        (_children_cpu() - cpu) / len(queries),
    )
    assert len(out.stdout.splitlines()) == len(queries)
    return timings


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def filter_timing(
    data: Path, queries: list[str], glob: str
) -> list[tuple[str, str, float, float, float]]:
    """(mode, filter, first search ms, median ms, p95 ms) of in-process searches.

    The first search with a filter matches every indexed path against it (the index keeps
    that set until it changes); the median and p95 are of the searches after it.
    """
    rows = []
    settings = Settings(data_dir=data, reconcile="off")
    with Workspace.open(settings) as workspace:
        [repo] = [info.repo_id for info in workspace.list_repos()]
        for mode in ("keyword", "hybrid"):
            for name, asked in FILTERS.items():
                globs = [glob] if "globs" in asked else None
                times = []
                first = SearchRequest.of(
                    repo, queries[-1], 10, mode=mode, languages=asked.get("languages"), globs=globs
                )
                started = time.perf_counter()
                workspace.search(first)
                cold = (time.perf_counter() - started) * 1000
                for query in queries:
                    request = SearchRequest.of(
                        repo, query, 10, mode=mode, languages=asked.get("languages"), globs=globs
                    )
                    workspace.search(request)  # warm: the same query once before timing
                    started = time.perf_counter()
                    workspace.search(request)
                    times.append((time.perf_counter() - started) * 1000)
                times.sort()
                p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
                rows.append((mode, name, cold, statistics.median(times), p95))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--files", type=int, default=0, help="also a generated tree of N files")
    parser.add_argument("--glob", default="src/**", help="the glob filter on the repository")
    args = parser.parse_args()
    queries = subjects(args.repo, args.queries)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        index(args.repo, data)
        timings = batch_timing(data, queries)
        print(f"## {args.repo.name}: {len(queries)} queries (commit subjects)\n")
        print("| form | wall per query | CPU per query |\n|---|---:|---:|")
        for name, form in (
            ("single", "one `search --json` process per query"),
            ("batch", "one `search --queries` process"),
        ):
            wall, cpu = timings[name]
            print(f"| {form} | {wall * 1000:.0f} ms | {cpu * 1000:.0f} ms |")
        print(f"\n(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)\n")
        report(args.repo.name, filter_timing(data, queries, args.glob), args.glob)
        if args.files:
            tree = Path(tmp) / "gen"
            generate(tree, args.files, list(TEMPLATES), units=(1, 3))
            subprocess.run(["git", "init", "-q", str(tree)], check=True)
            generated = Path(tmp) / "gen-data"
            index(tree, generated)
            words = ["handle request", "registry lookup", "process values scale", "limit", "fmt"]
            report(
                f"generated {args.files} files",
                filter_timing(generated, words * 6, "d1*/**"),
                "d1*/**",
            )


def report(name: str, rows: list[tuple[str, str, float, float, float]], glob: str) -> None:
    print(f"### {name}: search latency by filter (glob `{glob}`)\n")
    print("| mode | filter | first search | median | p95 |\n|---|---|---:|---:|---:|")
    for mode, filt, cold, median, p95 in rows:
        print(f"| {mode} | {filt} | {cold:.1f} ms | {median:.1f} ms | {p95:.1f} ms |")
    print()


if __name__ == "__main__":
    main()
