"""Retrieval evaluation on real commit histories.

For each local git repository: tasks are built from its history — a commit's subject and body
as the query, the non-test Python source files it modified or deleted (so they existed before
it) as the answer — skipping merges, reverts, version bumps, format-only commits and commits
touching more than five source files. For each task the parent tree is checked out and indexed
(incrementally from the previous task), then every method ranks the repository's files:

* ``bm25-files`` (the baseline): plain Okapi BM25 over whole files, words split on
  non-alphanumerics only;
* ``keyword``: our identifier-aware BM25 with field weights and the definition rerank;
* ``semantic-<backend>`` / ``hybrid-<backend>``: vectors alone, and fused with keyword.

Reported: Recall@1/5/10, Acc@5 (every answer file in the top 5), MRR, and the share of answer
files whose content a context bundle carries at 8k and 32k tokens (hybrid ranking, auto
detail), against whole files packed in the baseline's order under the same budgets.

Evaluation data only: the repositories are read from local mirrors (``fetch``), never
committed. Run: ``.venv/bin/python bench/retrieval.py [--repos DIR ...] [--write-docs]``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _docs import write_section  # noqa: E402

from repocontext.index.files.nodes import file_text, load_file_nodes  # noqa: E402
from repocontext.index.parsing.languages import is_test_path  # noqa: E402
from repocontext.pack.request import ContextRequest  # noqa: E402
from repocontext.search.request import SearchRequest  # noqa: E402
from repocontext.search.service import SearchService  # noqa: E402
from repocontext.settings import Settings  # noqa: E402
from repocontext.workspace import Workspace  # noqa: E402

SECTION = "## Retrieval evaluation (`bench/retrieval.py`)"
MIRRORS = Path("/work/.mirror")
DEFAULT_REPOS = ("pallets+flask", "encode+starlette", "pallets+jinja")
SKIP = re.compile(
    r"^(revert|merge|bump|release|version|prepare|changelog|format|reformat|black|isort|"
    r"ruff|lint|pre-commit|typo|update (copyright|changelog|docs|requirements))|"
    r"\b(bump version|release \d|version \d|apply black|run black|ruff format)\b",
    re.IGNORECASE,
)
WORD = re.compile(r"[A-Za-z0-9]+")
BUDGETS = (8192, 32768)


@dataclass
class Task:
    commit: str
    parent: str
    query: str
    answer: list[str]


@dataclass
class Scores:
    tasks: int = 0
    recall: dict[int, float] = field(default_factory=lambda: {1: 0.0, 5: 0.0, 10: 0.0})
    acc5: float = 0.0
    mrr: float = 0.0

    def add(self, ranking: list[str], answer: list[str]) -> None:
        self.tasks += 1
        wanted = set(answer)
        for k in self.recall:
            self.recall[k] += len(wanted & set(ranking[:k])) / len(wanted)
        self.acc5 += float(wanted <= set(ranking[:5]))
        rank = next((i for i, p in enumerate(ranking, 1) if p in wanted), None)
        self.mrr += 1 / rank if rank else 0.0

    def row(self) -> list[float]:
        n = max(self.tasks, 1)
        return [
            self.recall[1] / n,
            self.recall[5] / n,
            self.recall[10] / n,
            self.acc5 / n,
            self.mrr / n,
        ]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def source_file(path: str) -> bool:
    return (
        path.endswith(".py")
        and not is_test_path(path)
        and not path.startswith(("docs/", "examples/"))
    )


def build_tasks(repo: Path, limit: int) -> list[Task]:
    log = git(
        repo,
        "log",
        "--no-merges",
        "--first-parent",
        "--format=%x1e%H %P%x1f%B%x1f",
        "--name-status",
        "-n",
        "3000",
    )
    tasks: list[Task] = []
    for record in log.split("\x1e")[1:]:
        head, message, names = [*record.split("\x1f"), "", ""][:3]
        parts = head.split()
        subject = message.strip().splitlines()[0] if message.strip() else ""
        if len(parts) != 2 or not subject or SKIP.search(subject):
            continue
        commit, parent = parts
        changed = []
        for line in names.strip().splitlines():
            fields = line.split("\t")
            if len(fields) >= 2 and fields[0][:1] in ("M", "D") and source_file(fields[1]):
                changed.append(fields[1])
        query = " ".join(message.split())[:500]
        if not 1 <= len(changed) <= 5 or len(query.split()) < 3:
            continue
        if not git(repo, "diff", "-w", "--stat", parent, commit, "--", *changed).strip():
            continue  # whitespace-only: a format commit
        tasks.append(Task(commit, parent, query, sorted(set(changed))))
        if len(tasks) >= limit:
            break
    return list(reversed(tasks))  # oldest first: each checkout is a small step forward


class FileBM25:
    """The baseline: Okapi BM25 over whole files, plain word tokens."""

    def __init__(self, docs: dict[str, str]) -> None:
        self.tf = {p: Counter(w.lower() for w in WORD.findall(t)) for p, t in docs.items()}
        self.df: Counter[str] = Counter()
        for counts in self.tf.values():
            self.df.update(counts.keys())
        self.length = {p: sum(c.values()) for p, c in self.tf.items()}
        self.avg = sum(self.length.values()) / max(len(self.length), 1)

    def rank(self, query: str) -> list[str]:
        terms = {w.lower() for w in WORD.findall(query)}
        n = len(self.tf)
        scores: dict[str, float] = defaultdict(float)
        for term in terms:
            df = self.df.get(term, 0)
            if not df:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for path, counts in self.tf.items():
                tf = counts.get(term, 0)
                if tf:
                    norm = tf + 1.2 * (1 - 0.75 + 0.75 * self.length[path] / self.avg)
                    scores[path] += idf * tf * 2.2 / norm
        return sorted(scores, key=lambda p: (-scores[p], p))


def files_of(chunks: list) -> list[str]:  # type: ignore[type-arg]
    return list(dict.fromkeys(c.path for c in chunks))


def whole_file_coverage(
    ranking: list[str], tokens: dict[str, int], answer: list[str], budget: int
) -> float:
    spent, taken = 0, set()
    for path in ranking:
        cost = tokens.get(path, 0) + 20  # the file plus its path and framing
        if spent + cost <= budget:
            taken.add(path)
            spent += cost
    return len(taken & set(answer)) / len(answer)


def evaluate(mirror: Path, limit: int, backends: list[str], work: Path) -> dict[str, object]:
    name = mirror.parent.name.split("+")[-1]
    tasks = build_tasks(mirror, limit)
    checkout = work / "ws" / name
    subprocess.run(["git", "clone", "-q", "--shared", str(mirror), str(checkout)], check=True)
    spaces = {
        b: Workspace.open(
            Settings(
                data_dir=work / f"data-{name}-{b}",
                workspace_root=checkout.parent,
                reconcile="off",
                embedder=b,
            )
        )
        for b in backends
    }
    first = spaces[backends[0]]
    keyword = SearchService(first.store, work / f"kw-{name}")
    methods = [
        "bm25-files",
        "keyword",
        *[f"semantic-{b}" for b in backends],
        *[f"hybrid-{b}" for b in backends],
    ]
    scores = {m: Scores() for m in methods}
    coverage: dict[str, list[float]] = defaultdict(list)
    started = time.perf_counter()
    try:
        for task in tasks:
            git(checkout, "checkout", "-q", "--force", task.parent)
            for workspace in spaces.values():
                workspace.bootstrap(checkout, name, background=False)
                workspace.wait_embedded(name)
            nodes = load_file_nodes(first.store, name)
            answer = [p for p in task.answer if p in nodes]
            if not answer:
                continue
            texts = {p: file_text(first.store, name, p) or "" for p in nodes}
            tokens = {p: int(n.get("tokenCount") or 0) for p, n in nodes.items()}
            baseline = FileBM25(texts).rank(task.query)
            scores["bm25-files"].add(baseline, answer)
            scores["keyword"].add(
                [h.path for h in keyword.search(name, task.query, 10).hits], answer
            )
            for backend, workspace in spaces.items():
                nearest = workspace._semantic.search(name, task.query, 200) or []
                scores[f"semantic-{backend}"].add(files_of(nearest), answer)
                hits = workspace.search(SearchRequest.of(name, task.query, 10)).hits
                scores[f"hybrid-{backend}"].add([h.path for h in hits], answer)
            print(f"{name}: task {scores['keyword'].tasks}/{len(tasks)}", flush=True)
            for budget in BUDGETS:
                bundle = first.context(ContextRequest(name, task.query, top=20, budget=budget))
                carried = {e.path for e in bundle.entries if e.content}
                coverage[f"bundle-{budget}"].append(len(carried & set(answer)) / len(answer))
                coverage[f"whole-{budget}"].append(
                    whole_file_coverage(baseline, tokens, answer, budget)
                )
    finally:
        keyword.close()
        for workspace in spaces.values():
            workspace.close()
    return {
        "repo": name,
        "tasks": scores["keyword"].tasks,
        "files": len(load_file_nodes_safe(work / f"data-{name}-{backends[0]}", name)),
        "scores": {m: s.row() for m, s in scores.items()},
        "coverage": {k: sum(v) / max(len(v), 1) for k, v in coverage.items()},
        "seconds": time.perf_counter() - started,
    }


def load_file_nodes_safe(data: Path, repo_id: str) -> dict[str, object]:
    with Workspace.open(
        Settings(data_dir=data, reconcile="off", embedder="off"), read_only=True
    ) as ws:
        return load_file_nodes(ws.store, repo_id)  # type: ignore[return-value]


def render(results: list[dict[str, object]], backends: list[str], limit: int) -> str:
    lines = [
        SECTION,
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} cores. "
        f"Up to {limit} most recent qualifying commits per repository (query: the commit message; "
        "answer: the non-test Python source files it modified or deleted). Reproduce: "
        "`.venv/bin/python bench/retrieval.py --write-docs` (needs local mirrors of the repositories).",
        "",
        "| repo | tasks | method | R@1 | R@5 | R@10 | Acc@5 | MRR |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        for method, row in result["scores"].items():  # type: ignore[attr-defined]
            cells = " | ".join(f"{v:.3f}" for v in row)
            lines.append(f"| {result['repo']} | {result['tasks']} | {method} | {cells} |")
    lines += [
        "",
        "Share of answer files whose content the bundle carries (hybrid ranking of the first "
        f"backend, `{backends[0]}`, top 20, auto detail) against whole files packed in the "
        "baseline's order under the same budget:",
        "",
        "| repo | bundle 8k | whole files 8k | ratio | bundle 32k | whole files 32k | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        c = result["coverage"]
        cells = []
        for budget in BUDGETS:
            ours, base = c.get(f"bundle-{budget}", 0.0), c.get(f"whole-{budget}", 0.0)  # type: ignore[attr-defined]
            ratio = f"{ours / base:.2f}" if base else "∞" if ours else "-"
            cells += [f"{ours:.3f}", f"{base:.3f}", ratio]
        lines.append(f"| {result['repo']} | " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repos", nargs="*", type=Path)
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--backends", nargs="*", default=["static", "minilm"])
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    mirrors = args.repos or [
        MIRRORS / r / "repo" for r in DEFAULT_REPOS if (MIRRORS / r / "repo").exists()
    ]
    work = Path(tempfile.mkdtemp(prefix="rc-retrieval-"))
    results = []
    try:
        for mirror in mirrors:
            result = evaluate(mirror, args.tasks, args.backends, work)
            print(result, flush=True)
            results.append(result)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    section = render(results, args.backends, args.tasks)
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
