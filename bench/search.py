"""Search speed benchmark on the generated 10,000-file polyglot tree.

Measures, in one run: keyword search p50/p99 through ``SearchService.search`` (sync check,
FTS5 query, reranking, reasons), the bare FTS5 query, a pure-Python postings BM25 over the
same documents (the engine we did not pick, as the baseline), and context bundles at an 8k
budget. Run: ``.venv/bin/python bench/search.py [--write-docs]``.

``--compare DIR`` times two code versions in one run instead: the store is indexed once (this
checkout), then ``bench/_search_worker.py`` runs the same queries with ``DIR`` (e.g. a ``git
worktree`` of ``main``) and with this checkout on ``PYTHONPATH``, alternating, and the p50/p95
of search and context of both are reported (section "Search before and after").
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _corpus import TEMPLATES, generate  # noqa: E402
from _docs import write_section  # noqa: E402

from repocontext.pack.request import ContextRequest  # noqa: E402
from repocontext.search.embed import load_embedder  # noqa: E402
from repocontext.search.request import SearchRequest  # noqa: E402
from repocontext.search.terms import terms, unique_terms  # noqa: E402
from repocontext.settings import Settings  # noqa: E402
from repocontext.workspace import Workspace  # noqa: E402

SECTION = "## Search (`bench/search.py`)"
COMPARE_SECTION = "## Search before and after (`bench/search.py --compare`)"
ROUNDS = 4
QUERIES = 300


class PostingsBM25:
    """The alternative engine: our own in-memory postings with BM25 (k1 1.2, b 0.75)."""

    def __init__(self, docs: dict[str, str]) -> None:
        self.postings: dict[str, dict[str, int]] = defaultdict(dict)
        self.lengths: dict[str, int] = {}
        for path, text in docs.items():
            counts = Counter(terms(text))
            self.lengths[path] = sum(counts.values())
            for term, tf in counts.items():
                self.postings[term][path] = tf
        self.average = sum(self.lengths.values()) / max(len(self.lengths), 1)

    def search(self, query: list[str], limit: int) -> list[tuple[str, float]]:
        n = len(self.lengths)
        scores: dict[str, float] = defaultdict(float)
        for term in query:
            found = self.postings.get(term, {})
            idf = math.log(1 + (n - len(found) + 0.5) / (len(found) + 0.5))
            for path, tf in found.items():
                norm = tf + 1.2 * (1 - 0.75 + 0.75 * self.lengths[path] / self.average)
                scores[path] += idf * tf * 2.2 / norm
        return sorted(scores.items(), key=lambda item: -item[1])[:limit]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def timed(fn, queries: list[str]) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for query in queries:
        start = time.perf_counter()
        fn(query)
        out.append(time.perf_counter() - start)
    return out


def corpus_queries(tree: Path, count: int) -> list[str]:
    """``count`` random 1-4 term queries from the vocabulary of the first 2,000 files."""
    docs = {
        p.relative_to(tree).as_posix(): p.read_text(errors="ignore")
        for p in sorted(tree.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }
    rng = random.Random(5)
    vocabulary = sorted({t for text in list(docs.values())[:2000] for t in terms(text)})
    return [" ".join(rng.sample(vocabulary, rng.randint(1, 4))) for _ in range(count)]


def compare(baseline: Path, files: int, write_docs: bool, corpus: Path | None = None) -> int:
    """Time search and context of ``baseline`` and of this checkout on one store, alternating."""
    work = Path(tempfile.mkdtemp(prefix="rc-search-compare-"))
    try:
        tree = work / "ws" / "polyglot"
        if corpus is None:
            generate(tree, files, list(TEMPLATES))
        else:
            ignore = shutil.ignore_patterns(".git", ".venv", "*.pyc", "__pycache__", "fixtures")
            shutil.copytree(corpus, tree, ignore=ignore)
            files = sum(1 for p in tree.rglob("*") if p.is_file())
        subprocess.run(["git", "init", "-q", str(tree)], check=True)
        settings = Settings(
            data_dir=work / "data", workspace_root=tree.parent, reconcile="off", embedder="off"
        )
        with Workspace.open(settings) as workspace:
            workspace.bootstrap(tree, "poly", background=False)
        queries = work / "queries.json"
        queries.write_text(json.dumps(corpus_queries(tree, QUERIES)))
        figures: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
        for _ in range(ROUNDS):
            for label, code in (("before", baseline), ("after", ROOT)):
                env = {**os.environ, "PYTHONPATH": str(code)}
                out = subprocess.run(
                    [
                        sys.executable,
                        str(ROOT / "bench" / "_search_worker.py"),
                        str(work / "data"),
                        str(tree.parent),
                        "poly",
                        str(queries),
                    ],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                for name, values in json.loads(out.splitlines()[-1]).items():
                    figures[label].setdefault(name, []).extend(values)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [
        COMPARE_SECTION + (f" on {corpus.name}" if corpus else ""),
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}. One store ({files:,} "
        f"{'generated files' if corpus is None else f'files of a copy of {corpus.name}'}, "
        f"keyword only), {QUERIES} random 1-4 term queries (100 for bundles, 8k budget, auto "
        f"detail), {ROUNDS} alternating rounds per version; wall-clock latency, and the CPU "
        f"time of the calling thread (less sensitive to other load on a shared machine). "
        f"Before: `{baseline.name}`; after: "
        f"this checkout. Reproduce: `.venv/bin/python bench/search.py --compare "
        f"<checkout of the old code> --write-docs`.",
        "",
        "| operation | before p50 ms | before p95 ms | after p50 ms | after p95 ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, title in (
        ("search", "search (SearchService.search, k=10)"),
        ("context", "context bundle (Workspace.context)"),
        ("sync_at_head", "keyword index catch-up check at the head (SearchService.sync)"),
        ("search cpu", "search, CPU time of the calling thread"),
        ("context cpu", "context bundle, CPU time of the calling thread"),
    ):
        before, after = figures["before"][name], figures["after"][name]
        lines.append(
            f"| {title} | {percentile(before, 0.5):.2f} | {percentile(before, 0.95):.2f} "
            f"| {percentile(after, 0.5):.2f} | {percentile(after, 0.95):.2f} |"
        )
    section = "\n".join([*lines, ""])
    print(section)
    if write_docs:
        write_section(COMPARE_SECTION + (f" on {corpus.name}" if corpus else ""), section)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--compare", type=Path, help="checkout of the code to compare with")
    parser.add_argument(
        "--corpus", type=Path, help="with --compare: a copy of this tree instead of a generated one"
    )
    args = parser.parse_args()
    if args.compare is not None:
        return compare(args.compare.resolve(), args.files, args.write_docs, args.corpus)
    work = Path(tempfile.mkdtemp(prefix="rc-search-bench-"))
    try:
        tree = work / "ws" / "polyglot"
        generate(tree, args.files, list(TEMPLATES))
        subprocess.run(["git", "init", "-q", str(tree)], check=True)
        settings = Settings(
            data_dir=work / "data", workspace_root=tree.parent, reconcile="off", embedder="off"
        )
        with Workspace.open(settings) as workspace:
            workspace.bootstrap(tree, "poly", background=False)
            start = time.perf_counter()
            workspace._search.sync("poly")
            fts_build_s = time.perf_counter() - start
        throughput = {}
        hybrid_settings = Settings(
            data_dir=work / "data", workspace_root=tree.parent, reconcile="off", embedder="static"
        )
        with Workspace.open(hybrid_settings) as workspace:
            report = workspace.embed("poly")
            assert report is not None
            throughput["static"] = report.chunks_embedded / report.elapsed_s
            sample = [f"def f{i}(a, b):\n    return a * b + {i}" for i in range(400)]
            for name in ("static", "minilm"):
                embedder = load_embedder(name)
                assert embedder is not None
                embedder.embed(sample[:8])  # warm
                start = time.perf_counter()
                embedder.embed(sample)
                throughput[f"{name} (400 short chunks)"] = len(sample) / (
                    time.perf_counter() - start
                )
            rng = random.Random(6)
            hybrid_queries = [
                " ".join(
                    rng.sample(
                        [
                            "parse",
                            "return",
                            "class",
                            "method",
                            "value",
                            "compute",
                            "print",
                            "struct",
                            "module",
                            "import",
                        ],
                        2,
                    )
                )
                for _ in range(100)
            ]
            hybrid = timed(
                lambda q: workspace.search(SearchRequest.of("poly", q, 10)), hybrid_queries
            )
            assert workspace.search(SearchRequest.of("poly", "return class", 10)).mode == "hybrid"
        with Workspace.open(settings) as workspace:
            docs = {
                p.relative_to(tree).as_posix(): p.read_text()
                for p in tree.rglob("*")
                if p.is_file() and ".git" not in p.parts
            }
            start = time.perf_counter()
            postings = PostingsBM25(docs)
            postings_build_s = time.perf_counter() - start
            rng = random.Random(5)
            vocabulary = sorted({t for text in list(docs.values())[:2000] for t in terms(text)})
            queries = [" ".join(rng.sample(vocabulary, rng.randint(1, 4))) for _ in range(QUERIES)]
            index = workspace._search.keyword_index("poly")
            search = timed(lambda q: workspace.search(SearchRequest.of("poly", q, 10)), queries)
            bare = timed(lambda q: index.search(unique_terms(q), 10), queries)
            python = timed(lambda q: postings.search(unique_terms(q), 10), queries)
            context = timed(
                lambda q: workspace.context(ContextRequest("poly", q, budget=8192)), queries[:100]
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [
        ("keyword search (SearchService: sync check, FTS5, rerank, reasons)", search),
        ("bare FTS5 bm25 query", bare),
        ("baseline: pure-Python postings BM25", python),
        ("context bundle, 8k budget, auto detail", context),
        ("hybrid search (static vectors, exact scan, score fusion)", hybrid),
    ]
    lines = [
        SECTION,
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}. {args.files:,} generated files, {QUERIES} "
        "random 1-4 term queries from the corpus vocabulary (100 for bundles), k=10. "
        "Reproduce: `.venv/bin/python bench/search.py --write-docs`.",
        "",
        "| operation | p50 ms | p99 ms | ratio of p50 to bare FTS5 |",
        "|---|---:|---:|---:|",
    ]
    base = statistics.median(bare)
    for name, values in rows:
        lines.append(
            f"| {name} | {percentile(values, 0.5):.2f} | {percentile(values, 0.99):.2f} "
            f"| {statistics.median(values) / base:.1f} |"
        )
    lines += [
        "",
        f"Index build: FTS5 {fts_build_s:.1f} s (from the store, terms included); pure-Python "
        f"postings {postings_build_s:.1f} s (in memory only, nothing persisted).",
        "",
        "Embedding throughput (chunks/s): "
        + "; ".join(f"{name} {value:,.0f}" for name, value in throughput.items())
        + ". The first figure is the whole embedding pass over the corpus (chunking, store "
        "reads, plane write included).",
        "",
    ]
    section = "\n".join(lines)
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
