"""Context bundles against whole-file packing, and file ranking against standard BM25.

Tasks are real commits chosen by rule (``bench/_commits.py``): the commit message is the task,
the parent-side lines it changed in non-test source files are what the agent needed. For each
task the parent tree is checked out and indexed (incrementally from the previous task), then:

* **Coverage at a budget B** (4k, 8k, 16k, 32k), every side costed in exact tokens of what it
  sends (o200k):
  - ``bundle``: ``Workspace.context`` with a new user's defaults (``ContextRequest.of(repo,
    task, budget=B)``, default embedder): its ``responseTokens``, the code it carries being its
    ``file`` and ``slice`` units;
  - ``whole-bm25``: whole files (each sent as its path line plus its text) in standard-BM25
    order, packed greedily until nothing more fits;
  - ``oracle``: the commit's own files, whole, smallest first (the ceiling of whole-file
    packing);
  - ``whole-ranked``: whole files in the order of the bundle's own search, packed the same
    way (does the packer beat sending whole files of its own ranking?);
  - ``oracle-ranked``: the oracle, but only those of the commit's files that the bundle's
    search ranks among the files it draws on at that budget (``files_to_rank``): what
    whole-file packing could carry if it knew which of the bundle's candidates the commit
    changes. The gap between ``oracle`` and ``oracle-ranked`` is what the file ranking
    leaves out.

  LineCov@B: share of the needed lines the response carries; FileHit@B: share of the needed
  files it carries code of; code share: tokens of code verbatim / tokens sent.
* **File ranking**: R@1/5/10, Acc@5 (every needed file in the top 5) and MRR of our search
  (``keyword``: no embedder; ``hybrid-<embedder>``) against standard Okapi BM25 with a code
  tokenizer (``bench/_bm25.py``) over every file of the language.

* **What each embedder costs**: the CPU seconds of this process while each workspace indexes
  and embeds a task's tree (the first task embeds the whole repository; later ones what
  changed), against the MRR each buys over keyword-only search.

Intervals are paired percentile bootstraps over tasks (``bench/_stats.py``). Per-task records
go to ``--out`` (JSON lines), so ``--report FILE`` re-renders without re-running;
``--no-budgets`` measures file ranking only (no bundles, no packing).

Run: ``.venv/bin/python bench/context.py [--set dev|heldout|all] [--tasks 60] [--write-docs]``
(needs the local mirrors under /work/.mirror; evaluation data only, never committed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _bm25 import BM25  # noqa: E402
from _commits import Task, git, select_tasks, source_texts  # noqa: E402
from _docs import write_section  # noqa: E402
from _stats import paired_interval  # noqa: E402

from repocontext.pack import Bundle, ContextRequest  # noqa: E402
from repocontext.pack.candidates import files_to_rank  # noqa: E402
from repocontext.search import SearchRequest  # noqa: E402
from repocontext.settings import Settings  # noqa: E402
from repocontext.tokens import count_tokens  # noqa: E402
from repocontext.workspace import Workspace  # noqa: E402

SECTION = "## Context bundles vs whole-file packing (`bench/context.py`)"
MIRRORS = Path("/work/.mirror")
SETS = {
    "dev": ("pallets+flask", "pallets+jinja", "encode+starlette", "Textualize+rich"),
    "heldout": ("pallets+click", "encode+httpx"),
}
BUDGETS = (4096, 8192, 16384, 32768)
RANK_DEPTH = 50
CODE_KINDS = frozenset({"file", "slice"})


@dataclass
class Sides:
    """What one method delivered at one budget for one task."""

    covered: int
    files: int
    code: int
    sent: int

    def row(self, task: Task) -> dict[str, float]:
        return {
            "lineCov": self.covered / task.line_count,
            "fileHit": self.files / len(task.lines),
            "code": self.code,
            "sent": self.sent,
        }


def whole_files(order: Iterable[str], texts: dict[str, str], task: Task, budget: int) -> Sides:
    """Whole files in ``order``, each sent as ``path\\n`` + text, greedily under ``budget``."""
    covered = files = code = sent = 0
    for path in order:
        text = texts.get(path)
        if text is None:
            continue
        cost = count_tokens(f"{path}\n{text}\n")
        if sent + cost > budget:
            continue
        sent += cost
        code += count_tokens(text)
        if path in task.lines:
            covered += len(task.lines[path])
            files += 1
    return Sides(covered, files, code, sent)


def bundle_sides(bundle: Bundle, task: Task) -> Sides:
    """What a bundle carries: the needed lines inside its code units, and its exact cost."""
    carried: dict[str, set[int]] = {}
    code = 0
    for entry in bundle.entries:
        for unit in entry.units:
            if unit.kind in CODE_KINDS:
                code += unit.token_count
                carried.setdefault(entry.path, set()).update(
                    range(unit.start_line, unit.end_line + 1)
                )
    covered = sum(len(task.lines[p] & lines) for p, lines in carried.items() if p in task.lines)
    files = sum(1 for p in carried if p in task.lines)
    return Sides(covered, files, code, bundle.response_tokens)


def rank_row(ranking: list[str], task: Task) -> dict[str, float]:
    wanted = set(task.lines)
    rank = next((i for i, p in enumerate(ranking, 1) if p in wanted), None)
    return {
        "r1": len(wanted & set(ranking[:1])) / len(wanted),
        "r5": len(wanted & set(ranking[:5])) / len(wanted),
        "r10": len(wanted & set(ranking[:10])) / len(wanted),
        "acc5": float(wanted <= set(ranking[:5])),
        "mrr": 1 / rank if rank else 0.0,
    }


def open_workspace(work: Path, name: str, embedder: str, checkout: Path) -> Workspace:
    settings = Settings(
        data_dir=work / f"data-{name}-{embedder}",
        workspace_root=checkout.parent,
        reconcile="off",
        embedder=embedder,  # type: ignore[arg-type]
    )
    return Workspace.open(settings)


def evaluate(
    mirror: Path, limit: int, backends: list[str], work: Path, out: Path, budgets: bool = True
) -> None:
    name = mirror.parent.name.split("+")[-1]
    tasks = select_tasks(mirror, limit)
    checkout = work / "ws" / name
    subprocess.run(["git", "clone", "-q", "--shared", str(mirror), str(checkout)], check=True)
    spaces = {b: open_workspace(work, name, b, checkout) for b in ["off", *backends]}
    default = spaces[backends[0]] if backends else spaces["off"]
    started = time.perf_counter()
    try:
        for number, task in enumerate(tasks, 1):
            git(checkout, "checkout", "-q", "--force", task.parent)
            index_s: dict[str, float] = {}
            for backend, workspace in spaces.items():
                begin = time.process_time()  # (CPU of this process: the embedders' threads too)
                workspace.bootstrap(checkout, name, background=False)
                workspace.wait_embedded(name)
                index_s[backend] = time.process_time() - begin
            record = run_task(name, checkout, task, spaces, default, budgets)
            record["indexCpuS"] = index_s
            with out.open("a") as sink:
                sink.write(json.dumps(record) + "\n")
            progress = f"{name} {number}/{len(tasks)} {time.perf_counter() - started:.0f}s"
            if budgets:
                cov = record["budgets"]["8192"]
                progress += (
                    f"  8k lineCov bundle {cov['bundle']['lineCov']:.2f} "
                    f"bm25 {cov['whole-bm25']['lineCov']:.2f} oracle {cov['oracle']['lineCov']:.2f}"
                )
            print(progress, flush=True)
    finally:
        for workspace in spaces.values():
            workspace.close()


def run_task(
    name: str,
    checkout: Path,
    task: Task,
    spaces: dict[str, Workspace],
    default: Workspace,
    with_budgets: bool = True,
) -> dict[str, object]:
    texts = source_texts(checkout)
    baseline = BM25(texts).rank(task.query)
    rankings: dict[str, list[str]] = {"bm25": baseline[:RANK_DEPTH]}
    search_ms: dict[str, float] = {}
    for backend, workspace in spaces.items():
        method = "keyword" if backend == "off" else f"hybrid-{backend}"
        begin = time.perf_counter()
        result = workspace.search(SearchRequest.of(name, task.query, RANK_DEPTH))
        search_ms[method] = (time.perf_counter() - begin) * 1000
        rankings[method] = [h.path for h in result.hits if h.path is not None]
    oracle = sorted(task.lines, key=lambda p: (len(texts.get(p, "")), p))
    ranked = next(  # the default workspace's ranking: what its bundles draw on
        rankings["keyword" if b == "off" else f"hybrid-{b}"]
        for b, w in spaces.items()
        if w is default
    )
    budgets: dict[str, dict[str, object]] = {}
    for budget in BUDGETS if with_budgets else ():
        request = ContextRequest.of(name, task.query, budget=budget)
        begin = time.perf_counter()
        bundle = default.context(request)
        elapsed = (time.perf_counter() - begin) * 1000
        drawn = set(ranked[: files_to_rank(request)])
        budgets[str(budget)] = {
            "bundle": {**bundle_sides(bundle, task).row(task), "ms": elapsed},
            "whole-bm25": whole_files(baseline, texts, task, budget).row(task),
            "oracle": whole_files(oracle, texts, task, budget).row(task),
            "whole-ranked": whole_files(ranked, texts, task, budget).row(task),
            "oracle-ranked": whole_files(
                [p for p in oracle if p in drawn], texts, task, budget
            ).row(task),
        }
    return {
        "repo": name,
        "commit": task.commit,
        "files": len(texts),
        "neededLines": task.line_count,
        "neededFiles": len(task.lines),
        "rank": {m: rank_row(r, task) for m, r in rankings.items()},
        "searchMs": search_ms,
        "budgets": budgets,
    }


# -- report ----------------------------------------------------------------------------------


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def interval(a: list[float], b: list[float]) -> str:
    diff, low, high = paired_interval(a, b)
    return f"{diff:+.3f} [{low:+.3f}, {high:+.3f}]"


def coverage_table(records: list[dict]) -> list[str]:  # type: ignore[type-arg]
    lines = [
        "| budget | method | LineCov | FileHit | code share | tokens sent (median) "
        "| LineCov vs whole-bm25 (paired 95 % CI) | ratio |",
        "|---:|---|---:|---:|---:|---:|---|---:|",
    ]
    for budget in map(str, BUDGETS):
        sides = {
            m: [r["budgets"][budget][m] for r in records] for m in records[0]["budgets"][budget]
        }
        base = [s["lineCov"] for s in sides["whole-bm25"]]
        for method, rows in sides.items():
            cov = [s["lineCov"] for s in rows]
            share = sum(s["code"] for s in rows) / max(sum(s["sent"] for s in rows), 1)
            versus = "-" if method == "whole-bm25" else interval(cov, base)
            ratio = f"{mean(cov) / mean(base):.2f}" if mean(base) else "-"
            lines.append(
                f"| {int(budget) // 1024}k | {method} | {mean(cov):.3f} "
                f"| {mean([s['fileHit'] for s in rows]):.3f} | {share:.2f} "
                f"| {statistics.median(s['sent'] for s in rows):.0f} | {versus} | {ratio} |"
            )
    return lines


def ranking_table(records: list[dict]) -> list[str]:  # type: ignore[type-arg]
    lines = [
        "| method | R@1 | R@5 | R@10 | Acc@5 | MRR | MRR vs bm25 (95 % CI) "
        "| Acc@5 vs bm25 (95 % CI) | ms/query (median) |",
        "|---|---:|---:|---:|---:|---:|---|---|---:|",
    ]
    base = {k: [r["rank"]["bm25"][k] for r in records] for k in ("mrr", "acc5")}
    for method in records[0]["rank"]:
        rows = [r["rank"][method] for r in records]
        cells = " | ".join(
            f"{mean([row[k] for row in rows]):.3f}" for k in ("r1", "r5", "r10", "acc5", "mrr")
        )
        if method == "bm25":
            versus, ms = "- | -", "-"
        else:
            mrr = interval([row["mrr"] for row in rows], base["mrr"])
            acc = interval([row["acc5"] for row in rows], base["acc5"])
            versus = f"{mrr} | {acc}"
            ms = f"{statistics.median(r['searchMs'][method] for r in records):.0f}"
        lines.append(f"| {method} | {cells} | {versus} | {ms} |")
    return lines


RANK_BUCKETS = ((1, 1, "1"), (2, 2, "2"), (3, 5, "3-5"), (6, 10, "6-10"), (11, None, "below 10"))
_GAP_SIDES = ("bundle", "oracle", "oracle-ranked", "whole-ranked")


def gap_table(records: list[dict], budget: str = "8192") -> list[str]:  # type: ignore[type-arg]
    """LineCov at ``budget`` by the rank of the first needed file in the bundle's own search.

    The bundle draws on its search's ranking (the first embedder's hybrid search); "gap
    share" is each bucket's part of the mean oracle-minus-bundle difference, so the shares
    add up to the whole gap.
    """
    lines = [
        "| first needed file at rank | tasks | bundle | oracle | oracle-ranked | whole-ranked "
        "| gap share (oracle - bundle) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for low, high, label in RANK_BUCKETS:
        chosen = [r for r in records if _in_bucket(_first_rank(r), low, high)]
        if not chosen:
            continue
        cov = {m: [r["budgets"][budget][m]["lineCov"] for r in chosen] for m in _GAP_SIDES}
        gap = sum(o - b for o, b in zip(cov["oracle"], cov["bundle"], strict=True))
        cells = " | ".join(f"{mean(cov[m]):.3f}" for m in _GAP_SIDES)
        lines.append(f"| {label} | {len(chosen)} | {cells} | {gap / len(records):+.3f} |")
    return lines


def break_even_line(records: list[dict], budget: str = "8192") -> str:  # type: ignore[type-arg]
    """How often the first ranked file must be needed for the bundle to reach the oracle.

    With the packer as it is, a task's LineCov depends mostly on whether the search put a
    needed file first: the bundle's mean over those tasks (``a``) and over the others
    (``b``) give the share ``p`` of first-place hits at which ``p * a + (1 - p) * b``
    equals the oracle's mean, the R@1-like figure a ranking would need.
    """
    first = [r for r in records if _first_rank(r) == 1]
    other = [r for r in records if _first_rank(r) != 1]
    if not first or not other:
        return ""
    a, b = (mean([r["budgets"][budget]["bundle"]["lineCov"] for r in g]) for g in (first, other))
    oracle = mean([r["budgets"][budget]["oracle"]["lineCov"] for r in records])
    share = len(first) / len(records)
    if a <= b:
        return f"At {int(budget) // 1024}k a first-place hit does not raise the bundle's LineCov."
    needed = (oracle - b) / (a - b)
    return (
        f"At {int(budget) // 1024}k the bundle carries {a:.3f} of the needed lines when the "
        f"search puts a needed file first and {b:.3f} otherwise; it reaches the oracle's "
        f"{oracle:.3f} when a needed file is first for {needed:.2f} of the tasks "
        f"(now {share:.2f})."
    )


def _first_rank(record: dict) -> int | None:  # type: ignore[type-arg]
    """The rank of the first needed file in the bundle's search (``None``: not in the top 50)."""
    method = next((m for m in record["rank"] if m.startswith("hybrid-")), "keyword")
    mrr = record["rank"][method]["mrr"]
    return round(1 / mrr) if mrr else None


def _in_bucket(rank: int | None, low: int, high: int | None) -> bool:
    if rank is None:
        return high is None
    return low <= rank and (high is None or rank <= high)


def latency_line(records: list[dict]) -> str:  # type: ignore[type-arg]
    parts = []
    for budget in map(str, BUDGETS):
        ms = [r["budgets"][budget]["bundle"]["ms"] for r in records]
        parts.append(f"{int(budget) // 1024}k {statistics.median(ms):.0f} ms")
    return "Context latency, median per call: " + ", ".join(parts) + "."


def render(records: list[dict], sets: dict[str, list[str]], tasks: int) -> str:  # type: ignore[type-arg]
    repos = sorted({r["repo"] for r in records})
    lines = [
        SECTION,
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} cores. Up to {tasks} commits per repository, chosen by rule "
        "(`bench/_commits.py`). Reproduce: `.venv/bin/python bench/context.py --set all "
        f"--tasks {tasks} --write-docs` (needs the local mirrors). Repositories: "
        + ", ".join(
            f"{r} ({sum(1 for x in records if x['repo'] == r)} tasks, "
            f"{max(x['files'] for x in records if x['repo'] == r)} .py files)"
            for r in repos
        )
        + ".",
        "",
    ]
    for label, members in sets.items():
        chosen = [r for r in records if r["repo"] in members]
        if not chosen:
            continue
        lines += [f"### {label}: {', '.join(sorted({r['repo'] for r in chosen}))}", ""]
        if chosen[0]["budgets"]:
            lines += ["Coverage of the lines each commit changed, at the same budget:", ""]
            lines += [*coverage_table(chosen), ""]
            lines += [
                "Where the bundle gains or loses against the oracle at 8k, by the rank of the "
                "first needed file in the bundle's own search:",
                "",
                *gap_table(chosen),
                "",
                break_even_line(chosen),
                "",
            ]
        lines += ["File ranking:", "", *ranking_table(chosen), ""]
        lines += ["Per repository:", "", *repo_ranking_table(chosen), ""]
        if "indexCpuS" in chosen[0]:
            lines += ["What each embedder costs:", "", *embedder_table(chosen), ""]
        if chosen[0]["budgets"]:
            lines += [latency_line(chosen), ""]
    return "\n".join(lines)


def repo_ranking_table(records: list[dict]) -> list[str]:  # type: ignore[type-arg]
    lines = [
        "| repository | method | MRR | Acc@5 | MRR vs bm25 (95 % CI) |",
        "|---|---|---:|---:|---|",
    ]
    for repo in sorted({r["repo"] for r in records}):
        mine = [r for r in records if r["repo"] == repo]
        base = [r["rank"]["bm25"]["mrr"] for r in mine]
        for method in mine[0]["rank"]:
            mrr = [r["rank"][method]["mrr"] for r in mine]
            acc = mean([r["rank"][method]["acc5"] for r in mine])
            versus = "-" if method == "bm25" else interval(mrr, base)
            lines.append(f"| {repo} | {method} | {mean(mrr):.3f} | {acc:.3f} | {versus} |")
    return lines


def embedder_table(records: list[dict]) -> list[str]:  # type: ignore[type-arg]
    """CPU seconds of indexing with each embedder (over every task) and what they bought."""
    lines = [
        "| method | index CPU s (first task) | index CPU s (all tasks) | embedding CPU s "
        "| MRR gain over keyword | MRR gain per embedding CPU minute |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    repos = sorted({r["repo"] for r in records})
    firsts = [next(r for r in records if r["repo"] == repo) for repo in repos]
    keyword = mean([r["rank"]["keyword"]["mrr"] for r in records])
    off = sum(r["indexCpuS"]["off"] for r in records)
    for backend in records[0]["indexCpuS"]:
        method = "keyword" if backend == "off" else f"hybrid-{backend}"
        total = sum(r["indexCpuS"][backend] for r in records)
        first = sum(r["indexCpuS"][backend] for r in firsts)
        embedding = max(total - off, 0.0)
        gain = mean([r["rank"][method]["mrr"] for r in records]) - keyword
        per = f"{gain / (embedding / 60):+.4f}" if embedding > 0 else "-"
        lines.append(
            f"| {method} | {first:.0f} | {total:.0f} | {embedding:.0f} | {gain:+.3f} | {per} |"
        )
    return lines


def load(paths: Iterable[Path]) -> list[dict]:  # type: ignore[type-arg]
    records = []
    for path in paths:
        records += [json.loads(line) for line in path.read_text().splitlines() if line]
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", choices=("dev", "heldout", "all"), default="dev")
    parser.add_argument("--repos", nargs="*", help="mirror names (owner+name), overrides --set")
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument(
        "--backends", nargs="*", default=["static"], help="embedders (the first builds bundles)"
    )
    parser.add_argument("--out", type=Path, default=None, help="per-task JSON lines")
    parser.add_argument("--report", nargs="*", type=Path, help="only render these records")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument(
        "--no-budgets", action="store_true", help="file ranking only (no bundles, no packing)"
    )
    args = parser.parse_args()
    names = args.repos or [
        n for label, members in SETS.items() if args.set in (label, "all") for n in members
    ]
    sets = {
        "dev": [n.split("+")[-1] for n in SETS["dev"]],
        "held-out": [n.split("+")[-1] for n in SETS["heldout"]],
    }
    if args.report:
        records = load(args.report)
    else:
        out = args.out or Path(tempfile.gettempdir()) / f"rc-context-{int(time.time())}.jsonl"
        out.write_text("")
        work = Path(tempfile.mkdtemp(prefix="rc-context-"))
        try:
            for name in names:
                evaluate(
                    MIRRORS / name / "repo",
                    args.tasks,
                    args.backends,
                    work,
                    out,
                    not args.no_budgets,
                )
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(f"records: {out}", flush=True)
        records = load([out])
    section = render(records, sets, args.tasks)
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
