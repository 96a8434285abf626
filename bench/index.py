"""Index benchmark: bare tree-sitter parse (the limit) vs. our bootstrap, reruns and drift.

Corpora: (a) the Python sources installed in .venv (thousands of real files) and (b) a
generated 10,000-file polyglot tree. Everything is measured in one run; ratios compare
figures of the same run. Run: ``.venv/bin/python bench/index.py [--write-docs]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
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

from _corpus import TEMPLATES, generate  # noqa: E402
from _docs import write_section  # noqa: E402
from _index_steps import (  # noqa: E402
    STAGES,
    bare_parse_limit,
    extract_only,
    phase_costs,
)

from repocontext.index.files.walk import walk  # noqa: E402
from repocontext.settings import Settings  # noqa: E402
from repocontext.workspace import Workspace  # noqa: E402

SECTION = "## Index (`bench/index.py`)"


def cold_in_process(
    launcher: ProcessPoolExecutor, data: Path, root: Path, repo_id: str
) -> tuple[float, dict, float, float, float]:  # type: ignore[type-arg]
    """The cold bootstrap as a user runs it (`repocontext index`), in its own process.

    Returns its wall time (process start included), its status, the peak RSS of that
    process and its parser workers (mapped store pages included) and their CPU seconds. The process is started
    by ``launcher``, a small process spawned when the benchmark started: Linux carries a
    forked child's peak RSS over from its parent (the copy made by fork counts until exec),
    so forking from this process, which grows to gigabytes, would report its size.
    """
    cli = Path(sys.executable).parent / "repocontext"
    env = {**os.environ, "REPOCONTEXT_EMBEDDER": "off", "REPOCONTEXT_RECONCILE": "off"}
    args = [str(cli), "index", str(root), "--repo-id", repo_id, "--data-dir", str(data), "--json"]
    elapsed, out, peak, cpu, anon = launcher.submit(run_measured, args, env).result()
    return elapsed, json.loads(out), peak, cpu, anon


def run_measured(args: list[str], env: dict[str, str]) -> tuple[float, bytes, float, float, float]:
    """Run a command; return its wall time, output, peak RSS in MB, CPU s (via wait4) and
    the peak anonymous memory of its own process in MB (RSS without the store's mapped file
    pages, which the kernel may drop at will; sampled every 20 ms)."""
    start = time.perf_counter()
    anon = 0
    with tempfile.TemporaryFile() as out_file:
        child = subprocess.Popen(args, stdout=out_file, env=env)
        # wait4 gives the usage of this child and the workers it waited for only.
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            anon = max(anon, anon_kb(child.pid))
            time.sleep(0.02)
        child.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - start
        out_file.seek(0)
        out = out_file.read()
    if child.returncode:
        raise RuntimeError(f"{args[:2]} exited with {child.returncode}")
    return elapsed, out, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, anon / 1024


def anon_kb(pid: int) -> int:
    """A process's anonymous resident memory in KiB (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


def index_once(data: Path, root: Path, repo_id: str) -> tuple[float, object]:
    settings = Settings(data_dir=data, workspace_root=root.parent, embedder="off")
    with Workspace.open(settings) as workspace:
        start = time.perf_counter()
        status = workspace.bootstrap(root, repo_id, background=False)
        return time.perf_counter() - start, status


def changed_once(data: Path, root: Path, repo_id: str) -> float:
    settings = Settings(data_dir=data, workspace_root=root.parent, embedder="off")
    with Workspace.open(settings) as workspace:
        start = time.perf_counter()
        workspace.changed(repo_id)
        return time.perf_counter() - start


def serving_latency(data: Path, root: Path, repo_id: str, edit: Path) -> dict[str, float]:
    """One-file change in a serving process: a scoped refresh, and watch event to index."""
    # No embedder: the embedding phase that follows each change runs in a background thread
    # of this process and would compete for the GIL with the refresh being timed.
    settings = Settings(
        data_dir=data,
        workspace_root=root.parent,
        reconcile="watch",
        reconcile_interval_seconds=3600,
        embedder="off",
    )
    rel = edit.relative_to(root).as_posix()
    with Workspace.open(settings) as workspace:
        start = time.perf_counter()
        workspace._index.warm(repo_id)
        warm_s = time.perf_counter() - start
        refresh = []
        for i in range(7):
            edit.write_text(edit.read_text() + f"\ndef refreshed_{i}():\n    pass\n")
            start = time.perf_counter()
            workspace.refresh(repo_id, [rel])
            refresh.append(time.perf_counter() - start)
        workspace.start_background()
        assert workspace.reconciler is not None
        workspace.reconciler.watching.wait(120)  # watcher running, catch-up pass done
        watched = []
        for i in range(7):
            name = f"watched_{i}"
            edit.write_text(edit.read_text() + f"\ndef {name}():\n    pass\n")
            start = time.perf_counter()
            while name not in symbol_names(workspace, repo_id, rel):
                time.sleep(0.002)
                if time.perf_counter() - start > 30:
                    raise RuntimeError("the watcher never reflected the edit")
            watched.append(time.perf_counter() - start)
            time.sleep(0.2)
    return {
        "warm_s": warm_s,
        "refresh_ms": statistics.median(refresh) * 1000,
        "watch_ms": statistics.median(watched) * 1000,
    }


def symbol_names(workspace: Workspace, repo_id: str, path: str) -> set[str]:
    symbols = workspace.outline(repo_id, path).symbols
    return {s.name for s in symbols}


def measure(
    launcher: ProcessPoolExecutor, name: str, root: Path, work: Path, edit: Path, repeat: int
) -> dict[str, float | str]:
    # The limit and the cold bootstrap alternate, ``repeat`` times each, and the fastest run
    # of each counts: this machine's speed drifts by 10-20 % over minutes.
    limits, colds, extracts = [], [], []
    data = work / f"data-{name}"
    for _ in range(repeat):
        limits.append(bare_parse_limit(root))
        extracts.append(extract_only(root))
        shutil.rmtree(data, ignore_errors=True)
        colds.append(cold_in_process(launcher, data, root, name))
    limit_mbs, parse_files, parse_bytes, limit_cpu = max(limits, key=lambda run: run[0])
    cold_s, status, cold_rss, cold_cpu, _ = min(colds, key=lambda run: run[0])
    extract_s, extract_cpu = min(extracts)
    # The steps between the limit and the extraction, once each, the same way as the limit.
    steps = {stage: bare_parse_limit(root, stage) for stage in STAGES[1:]}
    cold_rss = max(run[2] for run in colds)
    cold_anon = max(run[4] for run in colds)
    counters = status["counters"]
    files = int(counters["filesSeen"])
    size = sum(e.size for e in walk(root).entries) / 1e6
    nochange_s, _ = index_once(data, root, name)
    edit.write_text(edit.read_text() + "\n# edited\n")
    onefile_s, _ = index_once(data, root, name)
    # The same as a user runs it: a new `repocontext index` process after one edit.
    edit.write_text(edit.read_text() + "\n# edited in a new process\n")
    onefile_cli_s, _, onefile_rss, _, onefile_anon = cold_in_process(launcher, data, root, name)
    edit.write_text(edit.read_text() + "\n# edited again\n")
    changed_s = changed_once(data, root, name)
    serving = serving_latency(data, root, name, edit)
    return {
        **serving,
        "corpus": name,
        "files": files,
        "mb": size,
        "limit_mbs": limit_mbs,
        "cold_s": cold_s,
        "cold_files_s": files / cold_s,
        "cold_mbs": size / cold_s,
        # The same work on both sides: the limit's time to parse the parseable files against
        # our time for the whole bootstrap (which also reads, hashes and stores the rest).
        "limit_s": parse_bytes / 1e6 / limit_mbs,
        "ratio": (parse_bytes / 1e6 / limit_mbs) / cold_s,
        "limit_cpu": limit_cpu,
        "query_s": parse_bytes / 1e6 / steps["outline query"][0],
        "outline_s": parse_bytes / 1e6 / steps["outline"][0],
        "outline_cpu": steps["outline"][3],
        "extract_s": extract_s,
        "extract_cpu": extract_cpu,
        "cold_cpu": cold_cpu,
        "nochange_s": nochange_s,
        "onefile_s": onefile_s,
        "changed_s": changed_s,
        "cold_rss_mb": cold_rss,
        "cold_anon_mb": cold_anon,
        "onefile_cli_s": onefile_cli_s,
        "onefile_rss_mb": onefile_rss,
        "onefile_anon_mb": onefile_anon,
        "parse_files": parse_files,
        "parse_mb": parse_bytes / 1e6,
    }


ANCHORS = {
    "django-sized": "Django, ~2,700 Python files: about 6 s",
    "kernel-sized": "the Linux kernel, 75,000 files: about 3 min",
}


def anchor(
    launcher: ProcessPoolExecutor, name: str, root: Path, work: Path
) -> dict[str, float | str]:
    """One limit and one cold bootstrap of a tree the size of a codebase-memory-mcp anchor."""
    limit_mbs, _, parse_bytes, _ = bare_parse_limit(root)
    cold_s, status, cold_rss, cold_cpu, cold_anon = cold_in_process(
        launcher, work / f"data-{name}", root, name
    )
    limit_s = parse_bytes / 1e6 / limit_mbs
    return {
        "corpus": name,
        "files": int(status["counters"]["filesSeen"]),
        "mb": sum(e.size for e in walk(root).entries) / 1e6,
        "symbols": int(status["counters"]["symbols"]),
        "limit_s": limit_s,
        "cold_s": cold_s,
        "ratio": limit_s / cold_s,
        "cold_cpu": cold_cpu,
        "cold_rss_mb": cold_rss,
        "cold_anon_mb": cold_anon,
    }


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def render(
    rows: list[dict[str, float | str]],
    rss: float,
    phases: dict[str, float],
    repeat: int,
    anchors: list[dict[str, float | str]],
) -> str:
    lines = [
        SECTION,
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}. No embeddings. Reproduce: `.venv/bin/python bench/index.py --write-docs`.",
        "The limit is a bare tree-sitter parse (no queries, no store) of the corpus's parseable "
        "files with two worker processes; `cold/limit` is the limit's time over our cold "
        "bootstrap's time (process start included), so both sides do the same parsing and ours "
        f"also reads, hashes and stores the other files. The limit and the cold bootstrap "
        f"alternate, {repeat} runs each, and the fastest of each counts (this machine's speed "
        f"drifts by 10-20 % over minutes).",
        "",
        "| corpus | files | MB | parsed files | parsed MB | limit MB/s | limit s | cold s | cold files/s | cold MB/s | cold/limit | no-change rerun s | one-file rerun s | changed s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    serving = [
        "",
        "One-file change while serving (median of 7 edits of one file; no embedder, so no "
        "embedding pass competes with the index in the process): `refresh` is the scoped "
        "re-index the reconcile loop runs for a batch of file events; `watch` is from the write "
        "until `outline` shows the new symbol, through the real watcher (50 ms debounce). "
        "`warm` adopts the stored projections once, before the first change (the reconcile "
        "loop does it when it starts; a fresh `repocontext index` does the same at its first "
        "change, which is most of its one-file rerun time).",
        "",
        "| corpus | warm s | one-file refresh ms | one-file watch-to-index ms |",
        "|---|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['corpus']} | {r['files']:,} | {r['mb']:.1f} | {r['parse_files']:,} "
            f"| {r['parse_mb']:.1f} | {r['limit_mbs']:.2f} | {r['limit_s']:.1f} | {r['cold_s']:.1f} "
            f"| {r['cold_files_s']:.0f} | {r['cold_mbs']:.2f} | {r['ratio']:.2f} | {r['nochange_s']:.2f} "
            f"| {r['onefile_s']:.2f} | {r['changed_s']:.2f} |"
        )
        serving.append(
            f"| {r['corpus']} | {r['warm_s']:.2f} | {r['refresh_ms']:.0f} | {r['watch_ms']:.0f} |"
        )
    lines += serving
    lines += [
        "",
        "CPU seconds (user + system, the process and its parser workers) of the limit, of "
        "the outline step and the extraction alone (table below), and of the cold bootstrap; "
        "`cpu/limit` is the limit's CPU over the cold run's, and `cores busy` is the cold "
        "run's CPU over its wall time (2.0 would be both cores all the time). `0.6 allows` "
        "is the CPU two cores deliver, fully busy, in the wall time that `cold/limit = 0.6` "
        "permits (the limit's time / 0.6): a cold run needing more CPU than that cannot reach "
        "0.6 on this machine.",
        "",
        "| corpus | limit CPU s | outline CPU s | extract CPU s | cold CPU s | 0.6 allows "
        "| cpu/limit | cores busy |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['corpus']} | {r['limit_cpu']:.1f} | {r['outline_cpu']:.1f} "
            f"| {r['extract_cpu']:.1f} | {r['cold_cpu']:.1f} "
            f"| {2 * float(r['limit_s']) / 0.6:.1f} "
            f"| {float(r['limit_cpu']) / float(r['cold_cpu']):.2f} "
            f"| {float(r['cold_cpu']) / float(r['cold_s']):.2f} |"
        )
    lines += [
        "",
        "Where the time goes between the limit and the cold run: each step runs over the "
        "same files with the same two worker processes, and adds to the one before it. "
        "`outline query` is the parse plus the outline query over the tree (matches consumed, "
        "nothing built); `outline` is the indexer's whole outline step (query, symbols, "
        "imports, lexed references); `extract only` is the job's per-file function (it also "
        "reads, hashes, decodes and counts tokens) with its results sent to the main process "
        "and dropped, so it is the cold bootstrap with a main process that costs nothing (no "
        "file nodes, content, projections or store): the ceiling of `cold/limit` for this "
        "design. Each ratio is the limit's time over the step's.",
        "",
        "| corpus | limit s | outline query s | /limit | outline s | /limit | extract only s "
        "| extract CPU s | /limit | cold s | main process s | cold/limit |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        limit_s, query_s, outline_s, extract_s, cold_s = (
            float(r[k]) for k in ("limit_s", "query_s", "outline_s", "extract_s", "cold_s")
        )
        lines.append(
            f"| {r['corpus']} | {limit_s:.1f} | {query_s:.1f} | {limit_s / query_s:.2f} "
            f"| {outline_s:.1f} | {limit_s / outline_s:.2f} | {extract_s:.1f} "
            f"| {r['extract_cpu']:.1f} | {limit_s / extract_s:.2f} | {cold_s:.1f} "
            f"| {cold_s - extract_s:.1f} | {limit_s / cold_s:.2f} |"
        )
    lines += [
        "",
        "Trees the size of the anchors of issue 3 (codebase-memory-mcp, a C binary): "
        "`django-sized` is the `transformers` package of venv-site-packages (real Python, "
        "Django's file count), `kernel-sized` a generated tree of 75,000 C files of a few KB "
        "(the kernel's file count; its files are several times larger). One limit and "
        "one cold `repocontext index` each.",
        "",
        "| corpus | files | MB | symbols | limit s | cold s | cold files/s | cold/limit "
        "| cold CPU s | peak RSS MB | anonymous MB | anchor |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for a in anchors:
        lines.append(
            f"| {a['corpus']} | {a['files']:,} | {a['mb']:.1f} | {a['symbols']:,} "
            f"| {a['limit_s']:.1f} | {a['cold_s']:.1f} "
            f"| {float(a['files']) / float(a['cold_s']):.0f} | {a['ratio']:.2f} "
            f"| {a['cold_cpu']:.1f} | {a['cold_rss_mb']:.0f} | {a['cold_anon_mb']:.0f} "
            f"| {ANCHORS[str(a['corpus'])]} |"
        )
    parse = phases["parse"]
    lines += [
        "",
        f"Where a parser worker's CPU goes: one process over {phases['files']:.0f} random "
        f"parseable files of venv-site-packages ({phases['mb']:.1f} MB), CPU seconds (the "
        "cheapest of 3 interleaved rounds) and share of the bare parse. `extract` is the whole per-file function (read, blob id, "
        "decode, parse, outline, references, token count).",
        "",
        "| step | CPU s | of the parse |",
        "|---|---:|---:|",
    ]
    for step, cost in phases.items():
        if step not in ("files", "mb"):
            lines.append(f"| {step} | {cost:.2f} | {cost / parse:.0%} |")
    lines += [
        "",
        "Memory of `repocontext index` processes: peak RSS read with `wait4` (the process, or "
        "one of its parser workers if that was larger), the store's mapped LMDB pages "
        "included; and the peak anonymous memory of the main process (sampled every 20 ms: "
        "RSS without those file pages, which are page cache the kernel may drop at will). "
        "`one-file rerun` is a new process after one edit (it adopts the stored projections), "
        "timed from process start.",
        "",
        "| corpus | cold peak RSS MB | cold anonymous MB | one-file rerun s "
        "| one-file peak RSS MB | one-file anonymous MB |",
        "|---|---:|---:|---:|---:|---:|",
        *(
            f"| {r['corpus']} | {r['cold_rss_mb']:.0f} | {r['cold_anon_mb']:.0f} "
            f"| {r['onefile_cli_s']:.2f} | {r['onefile_rss_mb']:.0f} | {r['onefile_anon_mb']:.0f} |"
            for r in rows
        ),
        "",
        f"Peak RSS of the benchmark process itself (it also holds the warm projection state "
        f"for the serving measurements): {rss:.0f} MB.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generated", type=int, default=10_000)
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument(
        "--repeat", type=int, default=2, help="limit and cold runs per corpus (best counts)"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rc-index-bench-"))
    rows = []
    launcher = ProcessPoolExecutor(1, mp_context=get_context("spawn"))
    launcher.submit(time.sleep, 0).result()  # started now, while this process is small
    try:
        venv_src = work / "ws" / "site-packages"
        site = (
            Path(sys.prefix)
            / "lib"
            / f"python{sys.version_info.major}.{sys.version_info.minor}"
            / "site-packages"
        )
        shutil.copytree(
            site,
            venv_src,
            ignore=shutil.ignore_patterns("*.so", "*.pyc", "__pycache__", "*.dist-info"),
        )
        edit = next(p for p in sorted(venv_src.rglob("*.py")) if p.stat().st_size > 1000)
        rows.append(measure(launcher, "venv-site-packages", venv_src, work, edit, args.repeat))
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as one:
            phases = one.submit(phase_costs, str(venv_src), 3000).result()
        # (b) source-sized files (a few KB, 2-14 extra definitions each), and the same tree
        # of ~120-byte files, which measures per-file overhead rather than parsing.
        for name, units in (("generated-polyglot", (2, 14)), ("generated-tiny", None)):
            gen = work / "ws" / name
            generate(gen, args.generated, list(TEMPLATES), units=units)
            subprocess.run(["git", "init", "-q", str(gen)], check=True)
            rows.append(measure(launcher, name, gen, work, gen / "d0" / "mod0.py", args.repeat))
        kernel = work / "ws" / "kernel-sized"
        generate(kernel, 75_000, ["c"], units=(2, 14))
        subprocess.run(["git", "init", "-q", str(kernel)], check=True)
        anchors = [
            anchor(launcher, "django-sized", venv_src / "transformers", work),
            anchor(launcher, "kernel-sized", kernel, work),
        ]
    finally:
        launcher.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    section = render(rows, peak_rss_mb(), phases, args.repeat, anchors)
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
