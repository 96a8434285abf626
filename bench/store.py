"""Store benchmark: 100,000 small records, every figure from one run, against raw LMDB, and
the same workload on the PostgreSQL backend (a throwaway local cluster started by this run).

Run: ``make bench`` or ``.venv/bin/python bench/store.py [--records N] [--write-docs]``.
With ``--write-docs`` the results replace the store section of docs/benchmarks.md.
PostgreSQL runs with ``fsync=on`` and ``synchronous_commit=on``: an acknowledged write is on
disk, as with LMDB. ``--no-postgres`` skips it (then no server binaries are needed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import lmdb  # the raw limit; the product touches lmdb only in its backend module

from repocontext.store import MEMORY, STRUCTURAL, DocPatch, Store
from repocontext.store.keys import file_key, mem_key
from repocontext.store.records import Envelope, Frame, encode_frame
from repocontext.store.trees import MergeMode
from repocontext.testing_pg import PostgresCluster

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "benchmarks.md"
COMMIT_EVERY = 1000
TARGETS = {
    "batched_lww_writes_per_s": 100_000,
    "batched_vs_raw_ratio": 0.25,
    "point_reads_per_s": 100_000,
    "synced_writes_per_s": 1_000,
    "memory_doc_merges_per_s": 5_000,
}


def value(i: int) -> dict[str, object]:
    return {"size": i, "lang": "python", "digest": f"{i:040x}"}


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def bench_raw(work: Path, keys: list[str]) -> float:
    frames = [
        encode_frame(Frame(MergeMode.LWW, i + 1, i, None, False, Envelope(i, "r", value(i))))
        for i in range(len(keys))
    ]
    env = lmdb.open(str(work / "raw"), map_size=1 << 30, max_dbs=4, sync=True, metasync=True)
    db = env.open_db(b"t")
    start = time.perf_counter()
    for lo in range(0, len(keys), COMMIT_EVERY):
        with env.begin(write=True, db=db) as txn:
            for i in range(lo, min(lo + COMMIT_EVERY, len(keys))):
                txn.put(keys[i].encode(), frames[i])
    elapsed = time.perf_counter() - start
    env.close()
    return rate(len(keys), elapsed)


def bench_raw_synced(work: Path, count: int) -> float:
    env = lmdb.open(str(work / "raw-synced"), map_size=1 << 28, max_dbs=4, sync=True)
    db = env.open_db(b"t")
    frame = encode_frame(Frame(MergeMode.LWW, 1, 1, None, False, Envelope(1, "r", value(1))))
    start = time.perf_counter()
    for i in range(count):
        with env.begin(write=True, db=db) as txn:
            txn.put(f"synced/{i}".encode(), frame)
    elapsed = time.perf_counter() - start
    env.close()
    return rate(count, elapsed)


def bench_store(work: Path, n: int, synced: int, merges: int) -> dict[str, float]:
    keys = [file_key("bench", f"src/pkg{i % 100}/mod{i}.py") for i in range(n)]
    results: dict[str, float] = {"raw_lmdb_batched_puts_per_s": bench_raw(work, keys)}
    results["raw_lmdb_synced_puts_per_s"] = bench_raw_synced(work, synced)
    with Store.open(work / "ours", map_bytes=1 << 30) as store:
        results.update(workload(store, keys, synced, merges, reads=n))
    results["batched_vs_raw_ratio"] = (
        results["batched_lww_writes_per_s"] / results["raw_lmdb_batched_puts_per_s"]
    )
    results["synced_vs_raw_ratio"] = (
        results["synced_writes_per_s"] / results["raw_lmdb_synced_puts_per_s"]
    )
    return results


def bench_postgres(
    cluster: PostgresCluster, run: int, n: int, synced: int, merges: int, reads: int
) -> dict[str, float]:
    """The same workload on the PostgreSQL backend (fresh tables per run)."""
    keys = [file_key("bench", f"src/pkg{i % 100}/mod{i}.py") for i in range(n)]
    url = cluster.store_url(f"bench{run}_")
    work = Path(tempfile.mkdtemp(prefix="rc-bench-pg-"))
    try:
        with Store.open(work, store_url=url) as store:
            return workload(store, keys, synced, merges, reads=reads)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def workload(
    store: Store, keys: list[str], synced: int, merges: int, *, reads: int
) -> dict[str, float]:
    """Batched writes, synced single writes (with their latency), reads, a scan, merges."""
    results: dict[str, float] = {}
    start = time.perf_counter()
    with store.batch(commit_every=COMMIT_EVERY) as batch:
        for i, key in enumerate(keys):
            batch.put(STRUCTURAL, key, value(i))
    results["batched_lww_writes_per_s"] = rate(len(keys), time.perf_counter() - start)

    latencies = []
    start = time.perf_counter()
    for i in range(synced):
        began = time.perf_counter()
        store.put(STRUCTURAL, file_key("bench", f"synced/{i}.py"), value(i))
        latencies.append(time.perf_counter() - began)
    results["synced_writes_per_s"] = rate(synced, time.perf_counter() - start)
    cuts = statistics.quantiles(latencies, n=20)
    results["synced_write_p50_ms"] = statistics.median(latencies) * 1000
    results["synced_write_p95_ms"] = cuts[18] * 1000

    order = random.Random(7).sample(keys, min(reads, len(keys)))
    start = time.perf_counter()
    for key in order:
        store.get(STRUCTURAL, key)
    results["point_reads_per_s"] = rate(len(order), time.perf_counter() - start)

    start = time.perf_counter()
    scanned = sum(1 for _ in store.iter_records(STRUCTURAL, "repo/bench/file/src/", page_size=5000))
    results["prefix_scan_records_per_s"] = rate(scanned, time.perf_counter() - start)

    stats = store.stats()
    results["bytes_on_disk_per_record"] = stats.file_bytes / stats.records[STRUCTURAL]

    doc_keys = [mem_key("bench", "notes", f"n{i}") for i in range(merges)]
    with store.batch(commit_every=COMMIT_EVERY) as batch:
        for key in doc_keys:
            batch.merge_fields(
                MEMORY, key, DocPatch(set_fields={"title": "t"}, add={"tags": ["a"]})
            )
    start = time.perf_counter()
    with store.batch(commit_every=COMMIT_EVERY) as batch:
        for i, key in enumerate(doc_keys):
            patch = DocPatch(set_fields={"body": f"b{i}"}, add={"tags": ["b"]})
            batch.merge_fields(MEMORY, key, patch)
    results["memory_doc_merges_per_s"] = rate(merges, time.perf_counter() - start)
    return results


def machine() -> str:
    cpu = "unknown cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    system = f"{platform.system()} {platform.machine()}"
    return f"{system}, {os.cpu_count()} cores, {cpu}, Python {platform.python_version()}"


LMDB_ROWS = [
    ("raw LMDB batched puts/s (the limit)", "raw_lmdb_batched_puts_per_s", None),
    ("our batched LWW writes/s", "batched_lww_writes_per_s", "batched_lww_writes_per_s"),
    ("batched LWW / raw LMDB", "batched_vs_raw_ratio", "batched_vs_raw_ratio"),
    ("raw LMDB synced single puts/s (the limit)", "raw_lmdb_synced_puts_per_s", None),
    ("individually acknowledged (synced) writes/s", "synced_writes_per_s", "synced_writes_per_s"),
    ("synced writes / raw LMDB synced puts", "synced_vs_raw_ratio", None),
    ("synced single write p50 ms", "synced_write_p50_ms", None),
    ("synced single write p95 ms", "synced_write_p95_ms", None),
    ("point reads/s", "point_reads_per_s", "point_reads_per_s"),
    ("prefix-scan records/s", "prefix_scan_records_per_s", None),
    ("memory-document merges/s", "memory_doc_merges_per_s", "memory_doc_merges_per_s"),
    ("bytes on disk per record", "bytes_on_disk_per_record", None),
]
PG_ROWS = [
    ("batched LWW writes/s", "batched_lww_writes_per_s"),
    ("individually acknowledged (synced) writes/s", "synced_writes_per_s"),
    ("synced single write p50 ms", "synced_write_p50_ms"),
    ("synced single write p95 ms", "synced_write_p95_ms"),
    ("point reads/s", "point_reads_per_s"),
    ("prefix-scan records/s", "prefix_scan_records_per_s"),
    ("memory-document merges/s", "memory_doc_merges_per_s"),
    ("bytes on disk per record", "bytes_on_disk_per_record"),
]


def render(
    results: dict[str, float],
    pg: dict[str, float] | None,
    sizes: tuple[int, int, int, int],
    repeats: int,
) -> str:
    n, synced, merges, pg_reads = sizes
    lines = [
        "## Store (`bench/store.py`)",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine()}.",
        f"{n:,} small LWW records in batches of {COMMIT_EVERY}; {synced:,} synced single writes; "
        f"{merges:,} memory-document merges (batched). Each figure is the median of {repeats} "
        "runs; ratios are taken within a run.",
        "Reproduce: `make bench` (or `.venv/bin/python bench/store.py --write-docs`).",
        "",
        "| measure | value | target | met |",
        "|---|---:|---:|:-:|",
    ]
    for label, key, target_key in LMDB_ROWS:
        got = results[key]
        shown = _shown(key, got)
        if target_key is None:
            lines.append(f"| {label} | {shown} | — | — |")
            continue
        target = TARGETS[target_key]
        want = f"{target:.2f}" if key.endswith("ratio") else f">= {target:,}"
        lines.append(f"| {label} | {shown} | {want} | {'yes' if got >= target else 'NO'} |")
    if pg is not None:
        lines += [
            "",
            "### The PostgreSQL backend (same run)",
            "",
            "The same workload through `Store.open(..., store_url=postgresql://...)` on a local "
            "PostgreSQL 15 cluster this run starts (`repocontext.testing_pg`) over loopback TCP, "
            "with `fsync=on` and `synchronous_commit=on` (every acknowledged write is on disk, "
            f"as with LMDB); point reads sample {pg_reads:,} keys. The ratio is "
            "PostgreSQL / LMDB within each run (for milliseconds, above 1 is slower).",
            "",
            "| measure | LMDB | PostgreSQL | PostgreSQL / LMDB |",
            "|---|---:|---:|---:|",
        ]
        for label, key in PG_ROWS:
            ratio = pg[f"{key}_ratio"]
            lines.append(
                f"| {label} | {_shown(key, results[key])} | {_shown(key, pg[key])} | {ratio:.2f} |"
            )
    return "\n".join(lines) + "\n"


def _shown(key: str, value: float) -> str:
    if key.endswith("ratio") or key.endswith("_ms"):
        return f"{value:.2f}"
    return f"{value:,.0f}"


def write_docs(section: str) -> None:
    text = DOCS.read_text() if DOCS.exists() else "# Benchmarks\n\n"
    start = text.find("## Store (`bench/store.py`)")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + ("" if end < 0 else text[end:])
    else:
        text = text.rstrip("\n") + "\n\n" + section
    DOCS.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--synced", type=int, default=2_000)
    parser.add_argument("--merges", type=int, default=10_000)
    parser.add_argument("--pg-reads", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    runs, pg_runs = [], []
    cluster = None if args.no_postgres else PostgresCluster().start()
    try:
        for run in range(args.repeats):
            work = Path(tempfile.mkdtemp(prefix="rc-bench-"))
            try:
                runs.append(bench_store(work, args.records, args.synced, args.merges))
            finally:
                shutil.rmtree(work, ignore_errors=True)
            if cluster is not None:
                pg = bench_postgres(
                    cluster, run, args.records, args.synced, args.merges, args.pg_reads
                )
                pg.update({f"{key}_ratio": pg[key] / runs[-1][key] for key, _ in list(pg.items())})
                pg_runs.append(pg)
    finally:
        if cluster is not None:
            cluster.stop()
    # The median of each figure over the repeats: these machines are noisy, and every ratio
    # is taken within one run before the median is taken.
    results = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    pg_results = (
        {key: statistics.median(run[key] for run in pg_runs) for key in pg_runs[0]}
        if pg_runs
        else None
    )
    sizes = (args.records, args.synced, args.merges, args.pg_reads)
    section = render(results, pg_results, sizes, args.repeats)
    print(section)
    print(json.dumps({"lmdb": results, "postgresql": pg_results}, indent=2), file=sys.stderr)
    if args.write_docs:
        write_docs(section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
