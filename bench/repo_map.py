"""Does the repository map list the files a change touches more often than path order does?

Tasks come from :func:`_commits.select_tasks` (a commit's message as the query, the non-test
Python source files it modified or deleted as the gold files; the rule bench/context.py uses). For each task the parent tree
is indexed (incrementally from the previous task; no embedder) and three maps are fitted to
budgets of 1k, 2k and 4k tokens, with the same rendering (``path: sym1, sym2, ...``) and the
same symbols per file:

* ``pagerank``: :meth:`RefGraph.ranking` without a query (what ``repocontext_map`` serves
  when only a budget is given);
* ``pagerank+query``: personalised by the commit message;
* ``path order``: the baseline, every file in alphabetical path order.

Reported: the mean share of gold files the map lists, and the paired difference of each
ranked map against path order with a 95 % bootstrap interval (2,000 resamples of tasks).

Evaluation data only: repositories are read from local mirrors, never committed. Run:
``.venv/bin/python bench/repo_map.py [--repos DIR ...] [--tasks N] [--write-docs]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _commits import git, select_tasks  # noqa: E402
from _docs import write_section  # noqa: E402

from repocontext.search.repo_map import RefGraph, fit_entries  # noqa: E402
from repocontext.settings import Settings  # noqa: E402
from repocontext.workspace import Workspace  # noqa: E402

SECTION = "## Repository map (`bench/repo_map.py`)"
BUDGETS = (1024, 2048, 4096)
MIRRORS = Path("/work/.mirror")
DEFAULT_REPOS = ("pallets+flask", "encode+starlette", "pallets+jinja")
METHODS = ("pagerank", "pagerank+query", "path order")
RESAMPLES = 2000
TOP = 10
"""Also reported: the share of gold files among the first ``TOP`` files of each order."""


def listed_share(
    graph: RefGraph, order: list[str], query: str | None, gold: list[str], budget: int
) -> tuple[float, int]:
    entries, _ = fit_entries((graph.entry(p, query) for p in order), budget)
    listed = {e.path for e in entries}
    return len(listed & set(gold)) / len(gold), len(entries)


def evaluate(mirror: Path, limit: int, work: Path) -> dict[str, object]:
    name = mirror.parent.name.split("+")[-1]
    tasks = select_tasks(mirror, limit)
    checkout = work / "ws" / name
    subprocess.run(["git", "clone", "-q", "--shared", str(mirror), str(checkout)], check=True)
    settings = Settings(
        data_dir=work / f"data-{name}",
        workspace_root=checkout.parent,
        reconcile="off",
        embedder="off",
    )
    shares: dict[tuple[str, int], list[float]] = defaultdict(list)
    listed: dict[tuple[str, int], list[int]] = defaultdict(list)
    files: list[int] = []
    map_seconds: list[float] = []
    started = time.perf_counter()
    with Workspace.open(settings) as workspace:
        for number, task in enumerate(tasks, 1):
            git(checkout, "checkout", "-q", "--force", task.parent)
            workspace.bootstrap(checkout, name, background=False)
            began = time.perf_counter()
            graph = RefGraph.load(workspace.store, name)
            orders = {
                "pagerank": (graph.ranking(), None),
                "pagerank+query": (graph.ranking(task.query), task.query),
                "path order": (sorted(graph.paths), None),
            }
            map_seconds.append(time.perf_counter() - began)
            gold = [p for p in task.files if p in set(graph.paths)]
            if not gold:
                continue
            files.append(len(graph.paths))
            for method, (order, query) in orders.items():
                for budget in BUDGETS:
                    share, count = listed_share(graph, order, query, gold, budget)
                    shares[method, budget].append(share)
                    listed[method, budget].append(count)
                shares[method, TOP].append(len(set(order[:TOP]) & set(gold)) / len(gold))
            print(f"{name}: task {number}/{len(tasks)}", flush=True)
    return {
        "repo": name,
        "tasks": len(files),
        "files": int(np.median(files)) if files else 0,
        "shares": dict(shares),
        "listed": {k: float(np.mean(v)) for k, v in listed.items()},
        "rank_ms": 1000 * float(np.median(map_seconds)) if map_seconds else 0.0,
        "seconds": time.perf_counter() - started,
    }


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def paired_interval(
    ours: list[float], base: list[float], seed: int = 22
) -> tuple[float, float, float]:
    """Mean difference and its 95 % paired bootstrap interval."""
    diff = np.asarray(ours) - np.asarray(base)
    if not diff.size:
        return 0.0, 0.0, 0.0
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, diff.size, size=(RESAMPLES, diff.size))
    means = diff[picks].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(diff.mean()), float(low), float(high)


def render(results: list[dict[str, object]], limit: int, command: str) -> str:
    lines = [
        SECTION,
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} cores (shared), {cpu_model()}, Python {platform.python_version()}. "
        f"Up to {limit} most recent qualifying commits per repository, built as in "
        "`bench/_commits.py` (query: the commit message; gold: the non-test Python source "
        "files the commit modified or deleted); the parent tree indexed, no embedder. "
        f"Reproduce: `{command}`.",
        "",
        "Mean share of gold files the map lists, by budget (tokens of the rendered map):",
        "",
        f"| repo | tasks | files | method | 1k | 2k | 4k | first {TOP} files | files listed at 1k / 2k / 4k |",
        "|---|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    pooled: dict[tuple[str, int], list[float]] = defaultdict(list)
    for result in results:
        shares = result["shares"]
        for method in METHODS:
            cells = []
            for budget in (*BUDGETS, TOP):
                values = shares.get((method, budget), [])  # type: ignore[attr-defined]
                pooled[method, budget] += values
                cells.append(f"{np.mean(values):.3f}" if values else "-")
            listed: dict[tuple[str, int], float] = result["listed"]  # type: ignore[assignment]
            counts = " / ".join(f"{listed.get((method, b), 0):.0f}" for b in BUDGETS)
            lines.append(
                f"| {result['repo']} | {result['tasks']} | {result['files']} | {method} | "
                + " | ".join(cells)
                + f" | {counts} |"
            )
    lines += [
        "",
        "Paired difference against path order (mean share, 95 % bootstrap interval over tasks; "
        "an interval above 0 means the ranked map lists gold files more often), and of the "
        "personalised map against the plain one:",
        "",
        f"| repo | method | 1k | 2k | 4k | first {TOP} files |",
        "|---|---|---|---|---|---|",
    ]
    groups = [(str(r["repo"]), r["shares"]) for r in results] + [("all", pooled)]
    pairs = [
        ("pagerank", "path order"),
        ("pagerank+query", "path order"),
        ("pagerank+query", "pagerank"),
    ]
    for repo, shares in groups:
        for method, base in pairs:
            cells = []
            for budget in (*BUDGETS, TOP):
                mean, low, high = paired_interval(
                    shares.get((method, budget), []),  # type: ignore[attr-defined]
                    shares.get((base, budget), []),  # type: ignore[attr-defined]
                )
                cells.append(f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]")
            label = method if base == "path order" else f"{method} vs {base}"
            lines.append(f"| {repo} | {label} | " + " | ".join(cells) + " |")
    timing = ", ".join(f"{r['repo']} {r['rank_ms']:.0f} ms" for r in results)
    lines += [
        "",
        f"Median time to read the records and rank the files three ways, per task: {timing}.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repos", nargs="*", type=Path)
    parser.add_argument("--tasks", type=int, default=35)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    mirrors = args.repos or [
        MIRRORS / r / "repo" for r in DEFAULT_REPOS if (MIRRORS / r / "repo").exists()
    ]
    work = Path(tempfile.mkdtemp(prefix="rc-repo-map-"))
    results = []
    try:
        for mirror in mirrors:
            results.append(evaluate(mirror, args.tasks, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    command = (
        ".venv/bin/python bench/repo_map.py"
        + (f" --tasks {args.tasks}" if args.tasks != 35 else "")
        + " --write-docs"
    )
    section = render(results, args.tasks, command)
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
