"""Sweep the code ranking's constants on the tasks of ``bench/context.py``.

Each task's parent tree is indexed once (default embedder, incrementally from the previous
task); then every configuration of ``CONFIGS`` (a :class:`~repocontext.search.ranking.Ranking`,
with or without the semantic side) ranks it, and standard Okapi BM25 (``bench/_bm25.py``) is
the baseline. Per-task records go to ``--out``; ``--report`` re-renders them: pooled R@1, R@5,
Acc@5 and MRR per configuration with paired bootstrap intervals against BM25.

Run: ``.venv/bin/python bench/ranking.py --set dev --out /tmp/sweep.jsonl`` (needs the local
mirrors under /work/.mirror). Never tune on ``--set heldout``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _bm25 import BM25  # noqa: E402
from _commits import git, select_tasks, source_texts  # noqa: E402
from _stats import paired_interval  # noqa: E402
from context import MIRRORS, RANK_DEPTH, SETS, open_workspace, rank_row  # noqa: E402

from repocontext.search import SearchRequest  # noqa: E402
from repocontext.search.ranking import DEFAULT_RANKING, Ranking  # noqa: E402

R = DEFAULT_RANKING
OLD = Ranking(
    fusion="rrf",
    rrf_k=20,
    semantic_weight=0.2,
    chunk_top=1,
    identifier_weight=1,
    strip_noise=False,
    rerank_share=0.3,
    symbol_mode="overlap",
    path_share=0.5,
    prose_factor=0.5,
    test_factor=1.0,
    graph_share=0.15,
    graph_seeds=3,
    stem_parts=False,
    plurals=False,
    candidates=0,
    chunks=0,
)
"""The ranking before issue 23 (its constants spelled out: the defaults move)."""
CONFIGS: dict[str, tuple[Ranking, bool]] = {
    "old-keyword": (OLD, False),
    "old-hybrid": (OLD, True),
    "keyword": (R, False),
    "hybrid": (R, True),
}


def sweep_configs(spec: str) -> dict[str, tuple[Ranking, bool]]:
    """``CONFIGS`` plus variants of the default: ``name=field:value,field:value;...``."""
    configs = dict(CONFIGS)
    for item in filter(None, spec.split(";")):
        name, _, fields = item.partition("=")
        changes: dict[str, object] = {}
        semantic = True
        for pair in filter(None, fields.split(",")):
            key, _, raw = pair.partition(":")
            if key == "semantic":
                semantic = raw == "1"
                continue
            current = getattr(R, key)
            if isinstance(current, tuple):  # link lists: imports/references
                parts = raw.split("/")
                changes[key] = tuple(parts if isinstance(current[0], str) else map(float, parts))
            elif isinstance(current, bool):
                changes[key] = raw == "1"
            else:
                changes[key] = type(current)(raw)
        configs[name] = (dataclasses.replace(R, **changes), semantic)  # type: ignore[arg-type]
    return configs


def evaluate(
    mirror: Path, limit: int, configs: dict[str, tuple[Ranking, bool]], work: Path, out: Path
) -> None:
    name = mirror.parent.name.split("+")[-1]
    tasks = select_tasks(mirror, limit)
    checkout = work / "ws" / name
    subprocess.run(["git", "clone", "-q", "--shared", str(mirror), str(checkout)], check=True)
    workspace = open_workspace(work, name, "static", checkout)
    service = workspace._search
    semantic = service.semantic
    started = time.perf_counter()
    try:
        for number, task in enumerate(tasks, 1):
            git(checkout, "checkout", "-q", "--force", task.parent)
            workspace.bootstrap(checkout, name, background=False)
            workspace.wait_embedded(name)
            texts = source_texts(checkout)
            rank = {"bm25": rank_row(BM25(texts).rank(task.query)[:RANK_DEPTH], task)}
            ms: dict[str, float] = {}
            workspace.search(SearchRequest.of(name, task.query, RANK_DEPTH))  # (syncs)
            top: dict[str, list[str]] = {}
            for label, (ranking, hybrid) in configs.items():
                service.ranking = ranking
                service.semantic = semantic if hybrid else None
                begin = time.perf_counter()
                result = workspace.search(SearchRequest.of(name, task.query, RANK_DEPTH))
                ms[label] = (time.perf_counter() - begin) * 1000
                order = [h.path for h in result.hits if h.path is not None]
                rank[label] = rank_row(order, task)
                top[label] = order[:5]
            record = {
                "repo": name,
                "commit": task.commit,
                "query": task.query,
                "gold": task.files,
                "rank": rank,
                "ms": ms,
                "top": top,
            }
            with out.open("a") as sink:
                sink.write(json.dumps(record) + "\n")
            print(f"{name} {number}/{len(tasks)} {time.perf_counter() - started:.0f}s", flush=True)
    finally:
        service.semantic = semantic
        workspace.close()


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def table(records: list[dict], against: str = "bm25") -> list[str]:  # type: ignore[type-arg]
    lines = [
        f"| config | R@1 | R@5 | Acc@5 | MRR | MRR vs {against} (95 % CI) | Acc@5 vs {against} "
        "| ms (median) |",
        "|---|---:|---:|---:|---:|---|---|---:|",
    ]
    base = [r["rank"][against] for r in records]
    for label in records[0]["rank"]:
        rows = [r["rank"][label] for r in records]
        cells = " | ".join(f"{mean([x[k] for x in rows]):.3f}" for k in ("r1", "r5", "acc5", "mrr"))
        d, lo, hi = paired_interval([x["mrr"] for x in rows], [x["mrr"] for x in base])
        a, alo, ahi = paired_interval([x["acc5"] for x in rows], [x["acc5"] for x in base])
        ms = statistics.median(r["ms"].get(label, 0.0) for r in records)
        lines.append(
            f"| {label} | {cells} | {d:+.3f} [{lo:+.3f}, {hi:+.3f}] "
            f"| {a:+.3f} [{alo:+.3f}, {ahi:+.3f}] | {ms:.0f} |"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", choices=("dev", "heldout"), default="dev")
    parser.add_argument("--repos", nargs="*", help="mirror names (owner+name), overrides --set")
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--configs", default="", help="extra variants: name=field:value,...;")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--report", nargs="*", type=Path)
    parser.add_argument("--per-repo", action="store_true")
    args = parser.parse_args()
    if args.report:
        records = [
            json.loads(line) for p in args.report for line in p.read_text().splitlines() if line
        ]
    else:
        out = args.out or Path(tempfile.gettempdir()) / f"rc-ranking-{int(time.time())}.jsonl"
        out.write_text("")
        work = Path(tempfile.mkdtemp(prefix="rc-ranking-"))
        configs = sweep_configs(args.configs)
        try:
            for name in args.repos or SETS[args.set]:
                evaluate(MIRRORS / name / "repo", args.tasks, configs, work, out)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        records = [json.loads(line) for line in out.read_text().splitlines() if line]
    print("\n".join(table(records)))
    if args.per_repo:
        for repo in sorted({r["repo"] for r in records}):
            print(f"\n{repo}\n" + "\n".join(table([r for r in records if r["repo"] == repo])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
