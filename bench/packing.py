"""Sweep the context packer's constants on the tasks of ``bench/context.py``.

Each task's parent tree is indexed once (default embedder, incrementally from the previous
task); then every configuration of ``CONFIGS`` (overrides of the module constants of
``repocontext.pack``: candidates, scoring, selection) builds the bundle at each budget, and the
share of the commit's parent-side changed lines it carries (LineCov) is recorded. Whole files in
standard-BM25 order and the whole-gold-file oracle are measured beside them, as in
``bench/context.py``. ``--report`` re-renders saved records: mean LineCov per configuration
and budget with a paired bootstrap interval against the current defaults.

The configuration ``gold-files`` is the packer's ceiling, not a setting: every candidate
file's weight is 1 when the commit changed it and 0.01 otherwise (rank, score and test prior off),
so it shows what the packer carries when it knows which of its candidate files are needed,
and so how much of the gap to the oracle is the file ranking's.

The ranking ceilings (``--ranking-ceilings``) are not settings either: each packs the default
search's result with one file moved to first place (with the first file's score), chosen with
knowledge of the commit, to bound what a better first place could buy:

* ``first-needed``: a needed file is always first (the search's best-ranked one, or, when
  none is among its first 50, the one with the most changed lines): a perfect first place;
* ``best-first``: a needed file is first when the default search, keyword-only search,
  semantic-only search or standard BM25 puts one first (the per-task best choice among the
  rankers there are, made by someone who knows the answer);
* ``best-top2``: the same when any of them has a needed file in its first two.

``replay`` packs the same result unchanged (it must equal ``default``).

Run: ``.venv/bin/python bench/packing.py --set dev --out /tmp/packing.jsonl`` (needs the local
mirrors under /work/.mirror). Never tune on ``--set heldout``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from functools import cached_property
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _bm25 import BM25  # noqa: E402
from _commits import Task, git, select_tasks, source_texts  # noqa: E402
from _stats import paired_interval  # noqa: E402
from context import MIRRORS, SETS, bundle_sides, open_workspace, whole_files  # noqa: E402

from repocontext.pack import ContextRequest, candidates, scoring, selection  # noqa: E402
from repocontext.pack.bundle import pack_result  # noqa: E402
from repocontext.pack.candidates import files_to_rank  # noqa: E402
from repocontext.search import SearchRequest, SearchResult  # noqa: E402
from repocontext.store import SystemClock  # noqa: E402
from repocontext.workspace import Workspace  # noqa: E402

BUDGETS = (4096, 8192, 32768)
MODULES = (candidates, scoring, selection)
CONFIGS: dict[str, dict[str, float]] = {
    "default": {},
    "whole-2.0": {"WHOLE_BONUS": 2.0},
    "whole-3.0": {"WHOLE_BONUS": 3.0},
    "decay-0.25": {"RANK_DECAY": 0.25},
    "decay-1.0": {"RANK_DECAY": 1.0},
    "density-1.0": {"DENSITY_EXP": 1.0},
    "density-0.6": {"DENSITY_EXP": 0.6},
    "files-800": {"TOKENS_PER_FILE": 800},
    "files-3200": {"TOKENS_PER_FILE": 3200},
    "files-400": {"TOKENS_PER_FILE": 400},
    "files-200": {"TOKENS_PER_FILE": 200},
    "tests-1.0": {"TEST_SHARE": 1.0},
    "links-0": {"LINK_SHARE": 0.0},
    "no-file-share": {"FILE_SHARE": 0.0, "SCORE_POWER": 0.0, "DENSITY_EXP": 0.8},
    "file-share-10": {"FILE_SHARE": 10.0},
    "file-share-40": {"FILE_SHARE": 40.0},
    "score-power-0": {"SCORE_POWER": 0.0},
    "by-score-0.5": {"SHARE_BY_SCORE": 0.5},
    "density-0.9": {"DENSITY_EXP": 0.9},
    "gold-files": {"RANK_DECAY": 0.0, "TEST_SHARE": 1.0, "SCORE_POWER": 0.0},
}
CEILINGS = frozenset({"gold-files"})
GOLD_WEIGHT, OTHER_WEIGHT = 1.0, 0.01
RANKING_CEILINGS = ("replay", "first-needed", "best-first", "best-top2")
RANKED = 50


def promoted_file(
    ceiling: str, rankings: dict[str, list[str]], needed: dict[str, int]
) -> str | None:
    """The file ``ceiling`` moves to first place (``None``: the ranking is left as it is)."""
    hybrid = rankings["hybrid"]
    if ceiling == "replay" or (hybrid[:1] and hybrid[0] in needed):
        return None
    if ceiling == "first-needed":
        ranked = [p for p in hybrid if p in needed]
        return ranked[0] if ranked else max(needed, key=lambda p: (needed[p], p))
    depth = 1 if ceiling == "best-first" else 2
    for order in rankings.values():
        hit = next((p for p in order[:depth] if p in needed), None)
        if hit is not None:
            return hit
    return None


def glob_escape(path: str) -> str:
    """``path`` as a gitignore-style pattern that matches it alone."""
    return re.sub(r"([\\\[\]*?!])", r"\\\1", path)


def with_first(
    workspace: Workspace,
    name: str,
    task_query: str,
    result: SearchResult,
    path: str | None,
    count: int,
) -> SearchResult:
    """``result`` cut to ``count`` hits, with ``path``'s hit first.

    A file the result lacks is searched for alone (a search filtered to its path); when even
    that finds nothing (no term and no vector of it matches), the result stays as it is.
    """
    hits = list(result.hits)
    if path is not None:
        hit = next((h for h in hits if h.path == path), None)
        if hit is None:
            only = SearchRequest.of(name, task_query, 1, globs=["/" + glob_escape(path)])
            hit = next(iter(workspace.search(only).hits), None)
        if hit is not None:
            top = max((h.score for h in hits), default=hit.score)
            hits = [replace(hit, score=max(top, hit.score)), *(h for h in hits if h.path != path)]
    return replace(result, hits=tuple(hits[:count]))


def ranking_ceilings(
    workspace: Workspace, name: str, task: Task, baseline: list[str]
) -> dict[str, dict[str, float]]:
    """LineCov of the bundle at each budget under each of :data:`RANKING_CEILINGS`."""

    def ranked(mode: str | None) -> SearchResult:
        return workspace.search(SearchRequest.of(name, task.query, RANKED, mode=mode))

    full = ranked(None)
    rankings = {"hybrid": [h.path for h in full.hits if h.path]}
    for mode in ("keyword", "semantic"):
        rankings[mode] = [h.path for h in ranked(mode).hits if h.path]
    rankings["bm25"] = baseline
    needed = {p: len(lines) for p, lines in task.lines.items()}
    out: dict[str, dict[str, float]] = {}
    for budget in BUDGETS:
        request = replace(
            ContextRequest.of(name, task.query, budget=budget),
            encoding=workspace.settings.token_encoding,
        )
        row = out[str(budget)] = {}
        for ceiling in RANKING_CEILINGS:
            path = promoted_file(ceiling, rankings, needed)
            result = with_first(workspace, name, task.query, full, path, files_to_rank(request))
            bundle = pack_result(workspace.store, SystemClock(), request, result)
            row[ceiling] = bundle_sides(bundle, task).row(task)["lineCov"]
    return out


@contextmanager
def gold_weighted(gold: frozenset[str]) -> Iterator[None]:
    """The pool's file weights set from the commit's files (see ``gold-files``)."""
    original = candidates.Pool.scored

    def scored(pool: candidates.Pool) -> list[scoring.Scored]:
        out = []
        for candidate, tiles in zip(pool.candidates, original.func(pool), strict=True):
            k = GOLD_WEIGHT if candidate.path in gold else OTHER_WEIGHT
            out.append(
                scoring.Scored(tuple(v * k for v in tiles.values), tiles.reasons, k * tiles.best)
            )
        return out

    patched = cached_property(scored)
    patched.__set_name__(candidates.Pool, "scored")
    candidates.Pool.scored = patched  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        candidates.Pool.scored = original  # type: ignore[method-assign]


@contextmanager
def overridden(values: dict[str, float]) -> Iterator[None]:
    """The pack modules with ``values`` in place of their constants (restored after)."""
    saved = []
    for module in MODULES:
        for name, value in values.items():
            if hasattr(module, name):
                saved.append((module, name, getattr(module, name)))
                setattr(module, name, value)
    if values and not saved:
        raise SystemExit(f"no pack module has {sorted(values)}")
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def evaluate(mirror: Path, limit: int, work: Path, out: Path, ceilings: bool = False) -> None:
    name = mirror.parent.name.split("+")[-1]
    tasks = select_tasks(mirror, limit)
    checkout = work / "ws" / name
    subprocess.run(["git", "clone", "-q", "--shared", str(mirror), str(checkout)], check=True)
    workspace = open_workspace(work, name, "static", checkout)
    started = time.perf_counter()
    try:
        for number, task in enumerate(tasks, 1):
            git(checkout, "checkout", "-q", "--force", task.parent)
            workspace.bootstrap(checkout, name, background=False)
            workspace.wait_embedded(name)
            texts = source_texts(checkout)
            baseline = BM25(texts).rank(task.query)
            oracle = sorted(task.lines, key=lambda p: (len(texts.get(p, "")), p))
            cov: dict[str, dict[str, float]] = {}
            for budget in BUDGETS:
                row = {
                    "whole-bm25": whole_files(baseline, texts, task, budget).row(task)["lineCov"],
                    "oracle": whole_files(oracle, texts, task, budget).row(task)["lineCov"],
                }
                for config, values in CONFIGS.items():
                    gold = frozenset(task.lines) if config in CEILINGS else None
                    with overridden(values), gold_weighted(gold) if gold else nullcontext():
                        request = ContextRequest.of(name, task.query, budget=budget)
                        bundle = workspace.context(request)
                    row[config] = bundle_sides(bundle, task).row(task)["lineCov"]
                cov[str(budget)] = row
            if ceilings:
                for budget, values in ranking_ceilings(workspace, name, task, baseline).items():
                    cov[budget] |= values
            with out.open("a") as sink:
                sink.write(json.dumps({"repo": name, "commit": task.commit, "cov": cov}) + "\n")
            print(f"{name} {number}/{len(tasks)} {time.perf_counter() - started:.0f}s", flush=True)
    finally:
        workspace.close()


def _header() -> list[str]:
    return [
        "| configuration | " + " | ".join(f"{b // 1024}k" for b in BUDGETS) + " |",
        "|---|" + "---|" * len(BUDGETS),
    ]


def _compared(records: list[dict], config: str, base: str) -> list[tuple[float, str]]:  # type: ignore[type-arg]
    """Per budget: the mean LineCov of ``config``, and its paired difference against ``base``."""
    cells = []
    for budget in map(str, BUDGETS):
        values = [r["cov"][budget][config] for r in records]
        diff, low, high = paired_interval(values, [r["cov"][budget][base] for r in records])
        cells.append((sum(values) / len(values), f"{diff:+.3f} [{low:+.3f}, {high:+.3f}]"))
    return cells


def render(records: list[dict]) -> str:  # type: ignore[type-arg]
    measured = records[0]["cov"][str(BUDGETS[0])]
    lines = [
        f"{len(records)} tasks ({', '.join(sorted({r['repo'] for r in records}))}); "
        "mean LineCov, and the paired difference against `default` (95 % CI):",
        "",
        *_header(),
    ]
    for config in ["whole-bm25", "oracle", *CONFIGS, *RANKING_CEILINGS]:
        if config in measured:
            cells = [
                f"{mean:.3f}" if config == "default" else f"{mean:.3f} ({diff})"
                for mean, diff in _compared(records, config, "default")
            ]
            lines.append(f"| {config} | " + " | ".join(cells) + " |")
    ceilings = [c for c in RANKING_CEILINGS if c in measured]
    if ceilings:
        lines += ["", "Against the oracle (paired difference, 95 % CI):", "", *_header()]
        for config in ["default", *ceilings]:
            cells = [diff for _, diff in _compared(records, config, "oracle")]
            lines.append(f"| {config} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", choices=("dev", "heldout"), default="dev")
    parser.add_argument("--repos", nargs="*", help="mirror names (owner+name), overrides --set")
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--report", nargs="*", type=Path)
    parser.add_argument("--only", nargs="*", help="configurations to run (default: all)")
    parser.add_argument(
        "--ranking-ceilings", action="store_true", help="also pack under RANKING_CEILINGS"
    )
    args = parser.parse_args()
    if args.only:
        unknown = sorted(set(args.only) - set(CONFIGS))
        if unknown:
            raise SystemExit(f"unknown configurations: {unknown}")
        for name in [n for n in CONFIGS if n != "default" and n not in args.only]:
            del CONFIGS[name]
    if args.report:
        records = [json.loads(x) for p in args.report for x in p.read_text().splitlines() if x]
        print(render(records))
        return 0
    out = args.out or Path(tempfile.gettempdir()) / f"rc-packing-{int(time.time())}.jsonl"
    out.write_text("")
    work = Path(tempfile.mkdtemp(prefix="rc-packing-"))
    try:
        for name in args.repos or SETS[args.set]:
            evaluate(MIRRORS / name / "repo", args.tasks, work, out, args.ranking_ceilings)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    records = [json.loads(x) for x in out.read_text().splitlines() if x]
    print(render(records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
