"""Impacted tests on real commit histories: does ``changed`` name the tests a commit touched?

The claim under test: when an agent edits source files, ``changed`` reports the impacted set
(dependents and covering tests of the edited files), so the agent knows which tests to run.

Tasks come from each repository's first-parent history, newest first, merges skipped: a
commit that modifies (status M, bytes changed) at least one source file and at least one test
file, and touches at most 10 source files. Source and test are the project's own classifiers
(``language_for`` not ``None``; ``is_test_path`` false / true), build and package files
(``is_config_path``: ``Gemfile``, ``Rakefile``, ``setup.py``) left out. Commits whose subject
looks like a release, a version bump or a formatting-only change are skipped (``SKIP``: a
subject starting with ``release``, ``bump`` or a version number, or naming formatting, linting
or a typo). The ``--tasks`` most recent qualifying commits are taken and run oldest first.

For each task one checkout per repository is moved to the commit's *parent* (forced checkout,
untracked files removed) and indexed (incrementally from the previous task). Then only the
commit's modified source files are written into the checkout (its test edits are left out)
and ``changed`` is called. The truth is the set of test files the commit modified; the
predictions are:

* ``changed: all``: every test file in the impacted set (covering tests and dependents);
* ``changed: covering``: the impacted files reported as covering tests only;
* ``naming`` (baseline): tests whose file name, test affixes stripped (``test_``, ``_test``,
  ``-test``, ``_tests``, ``_spec``, ``.test``, ``.spec``, ``Test``, ``Tests``, ``Spec``,
  ``Specs``), equals a modified source's stem, case-sensitively;
* ``same-dir`` (baseline): tests in the directory of a modified source, or whose path holds
  the source's stem (3 characters or more);
* ``all tests`` (baseline): the whole suite.

Reported per method, micro-averaged over tasks: recall (mean share of the truth predicted),
hit rate (share of tasks with at least one truth test predicted), mean predicted tests, and
selectivity (mean share of the suite, every test file at the parent, predicted). Timings: the
cold first index, the incremental index per later task and the ``changed`` call.

Evaluation data only: the repositories are read from local bare mirrors, never committed.
Run: ``.venv/bin/python bench/impact.py [--repos NAME ...] [--tasks N] [--details PATH]
[--write-docs]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _docs import write_section  # noqa: E402

from repocontext.index.parsing.languages import is_config_path, is_test_path, language_for  # noqa: E402
from repocontext.settings import Settings  # noqa: E402
from repocontext.workspace import Workspace  # noqa: E402

SECTION = "## Impacted tests (`bench/impact.py`)"
MIRRORS = Path("/work/.mirror")
DEFAULT_REPOS = (
    "flask",
    "click",
    "express",
    "zod",
    "cobra",
    "viper",
    "bytes",
    "mini-redis",
    "gson",
    "javapoet",
    "Polly",
    "thor",
    "sinatra",
    "cJSON",
    "hiredis",
    "fmt",
    "json",
)
SKIP = re.compile(
    r"^(release|bump|v?\d+\.\d+)|\b(formatting|reformat\w*|clang-format|lint\w*|typos?)\b",
    re.IGNORECASE,
)
MAX_SOURCES = 10
HISTORY = 5000
"""How many first-parent commits are scanned for tasks."""
TEST_PREFIXES = ("test_",)
TEST_SUFFIXES = (
    "_tests",
    "_test",
    "-test",
    "_spec",
    ".test",
    ".spec",
    "Tests",
    "Test",
    "Specs",
    "Spec",
)
METHODS = ("changed: all", "changed: covering", "naming", "same-dir", "all tests")


@dataclass
class Task:
    commit: str
    parent: str
    subject: str
    sources: list[str]
    tests: list[str]


@dataclass
class Scores:
    tasks: int = 0
    recall: float = 0.0
    hits: int = 0
    predicted: int = 0
    selectivity: float = 0.0

    def add(self, predicted: set[str], truth: set[str], suite: int) -> None:
        found = len(predicted & truth)
        self.tasks += 1
        self.recall += found / len(truth)
        self.hits += found > 0
        self.predicted += len(predicted)
        self.selectivity += len(predicted) / max(suite, 1)

    def merge(self, other: Scores) -> None:
        self.tasks += other.tasks
        self.recall += other.recall
        self.hits += other.hits
        self.predicted += other.predicted
        self.selectivity += other.selectivity

    def row(self) -> list[float]:
        n = max(self.tasks, 1)
        return [self.recall / n, self.hits / n, self.predicted / n, self.selectivity / n]


@dataclass
class RepoResult:
    name: str
    language: str
    tasks: int = 0
    suite: int = 0
    files: int = 0
    scores: dict[str, Scores] = field(default_factory=lambda: {m: Scores() for m in METHODS})
    cold_s: float = 0.0
    index_s: list[float] = field(default_factory=list)
    changed_s: list[float] = field(default_factory=list)
    mismatches: int = 0
    details: list[dict[str, object]] = field(default_factory=list)


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True, text=True
    ).stdout


def is_test(path: str) -> bool:
    return language_for(path) is not None and is_test_path(path)


def build_tasks(mirror: Path, limit: int) -> list[Task]:
    """The ``limit`` most recent qualifying commits, oldest first."""
    log = git(
        mirror,
        "log",
        "--first-parent",
        "--no-merges",
        "--no-renames",
        "--raw",
        "--no-abbrev",
        "--format=%x1e%H %P%x1f%s%x1f",
        "-n",
        str(HISTORY),
    )
    tasks: list[Task] = []
    for record in log.split("\x1e")[1:]:
        head, subject, raw = [*record.split("\x1f"), "", ""][:3]
        parts = head.split()
        if len(parts) != 2 or SKIP.search(subject):
            continue
        task = task_of(parts[0], parts[1], subject.strip(), raw)
        if task is not None:
            tasks.append(task)
            if len(tasks) >= limit:
                break
    return list(reversed(tasks))


def task_of(commit: str, parent: str, subject: str, raw: str) -> Task | None:
    """A task from one commit's ``--raw`` lines, or ``None`` when it does not qualify."""
    touched, sources, tests = 0, [], []
    for line in raw.strip().splitlines():
        meta, _, path = line.partition("\t")
        fields = meta.split()  # :old_mode new_mode old_blob new_blob status
        if len(fields) != 5 or language_for(path) is None or is_config_path(path):
            continue  # (a Gemfile or setup.py has a language, but is no source a test covers)
        old_mode, new_mode, old_blob, new_blob, status = fields
        regular = old_mode.startswith(":100") and new_mode.startswith("100")
        modified = status == "M" and regular and old_blob != new_blob
        if not is_test_path(path):
            touched += 1
            if modified:
                sources.append(path)
        elif modified:
            tests.append(path)
    if not sources or not tests or touched > MAX_SOURCES:
        return None
    return Task(commit, parent, subject, sorted(sources), sorted(tests))


def stem(path: str) -> str:
    name = posixpath.basename(path)
    dot = name.rfind(".")
    return name[:dot] if dot > 0 else name


def test_subject(path: str) -> str:
    """The name a test file gives its subject: its stem without one test prefix and suffix."""
    name = stem(path)
    for prefix in TEST_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix) :]
            break
    for suffix in TEST_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def naming_baseline(sources: list[str], suite: list[str]) -> set[str]:
    stems = {stem(s) for s in sources}
    return {t for t in suite if test_subject(t) in stems}


def same_dir_baseline(sources: list[str], suite: list[str]) -> set[str]:
    dirs = {posixpath.dirname(s) for s in sources}
    stems = [stem(s) for s in sources if len(stem(s)) >= 3]
    return {t for t in suite if posixpath.dirname(t) in dirs or any(s in t for s in stems)}


def impacted_tests(ws: Workspace, repo_id: str) -> tuple[set[str], set[str], list[str], float]:
    """Test files of ``changed``'s impacted set: all of them, the covering ones, and the
    files it saw updated; with the call's wall time."""
    started = time.perf_counter()
    report = ws.changed(repo_id)
    elapsed = time.perf_counter() - started
    every = {f.path for f in report.impacted if is_test_path(f.path)}
    covering = {f.path for f in report.impacted if f.reason.startswith("covers ")}
    return every, covering, sorted(report.updated), elapsed


def related_covering(ws: Workspace, repo_id: str, sources: list[str]) -> set[str]:
    """The covering tests ``related`` lists for the sources (a check on ``changed``)."""
    found: set[str] = set()
    for source in sources:
        view = ws.related(repo_id, source, limit=500)  # (the largest page)
        found.update(link.path for link in view.covering_tests)
    return found


def checkout(directory: Path, commit: str) -> None:
    subprocess.run(["git", "-C", str(directory), "checkout", "-q", "-f", commit], check=True)
    subprocess.run(["git", "-C", str(directory), "clean", "-q", "-fdx"], check=True)


def write_commit_version(mirror: Path, directory: Path, commit: str, paths: list[str]) -> None:
    for path in paths:
        data = subprocess.run(
            ["git", "--git-dir", str(mirror), "show", f"{commit}:{path}"],
            check=True,
            capture_output=True,
        ).stdout
        (directory / path).write_bytes(data)


def test_suite(mirror: Path, commit: str) -> list[str]:
    """Every test file in the tree of ``commit``."""
    listing = git(mirror, "ls-tree", "-r", "-z", "--name-only", commit)
    return [p for p in listing.split("\x00") if p and is_test(p)]


def score_task(
    ws: Workspace, name: str, mirror: Path, directory: Path, task: Task, result: RepoResult
) -> None:
    """Write the commit's source edits into ``directory``, ask ``changed``, score every method."""
    suite = test_suite(mirror, task.parent)
    write_commit_version(mirror, directory, task.commit, task.sources)
    every, covering, updated, changed_s = impacted_tests(ws, name)
    result.changed_s.append(changed_s)
    related = related_covering(ws, name, task.sources)
    result.mismatches += related != covering
    predictions = {
        "changed: all": every,
        "changed: covering": covering,
        "naming": naming_baseline(task.sources, suite),
        "same-dir": same_dir_baseline(task.sources, suite),
        "all tests": set(suite),
    }
    truth = set(task.tests)
    for method, predicted in predictions.items():
        result.scores[method].add(predicted, truth, len(suite))
    result.tasks += 1
    result.suite += len(suite)
    result.details.append(
        {
            "repo": name,
            "commit": task.commit,
            "parent": task.parent,
            "subject": task.subject,
            "sources": task.sources,
            "updated": updated,
            "truth": task.tests,
            "truth_indexed": {t: ws.outline(name, t).exists for t in task.tests},
            "suite": len(suite),
            "predicted": {m: sorted(p) for m, p in predictions.items() if m != "all tests"},
            "missed": sorted(truth - every),
            # covering tests ``related`` lists for the sources that ``changed`` does not
            # report as covering (and the other way round)
            "related_only": sorted(related - covering),
            "changed_only": sorted(covering - related),
        }
    )


def evaluate(name: str, mirror: Path, limit: int, work: Path) -> RepoResult:
    tasks = build_tasks(mirror, limit)
    # (a .h header is C by its name; a C++ repository's sources say cpp)
    languages = Counter(language_for(s) for t in tasks for s in t.sources if not s.endswith(".h"))
    result = RepoResult(name, str(languages.most_common(1)[0][0]) if languages else "-")
    directory = work / "ws" / name
    subprocess.run(
        ["git", "clone", "-q", "--shared", "--no-checkout", str(mirror), str(directory)],
        check=True,
    )
    settings = Settings(
        data_dir=work / "data" / name,
        workspace_root=directory.parent,
        embedder="off",
        reconcile="off",
    )
    with Workspace.open(settings) as ws:
        for number, task in enumerate(tasks, 1):
            checkout(directory, task.parent)
            started = time.perf_counter()
            status = ws.bootstrap(directory, name, background=False)
            elapsed = time.perf_counter() - started
            if status.status != "completed":
                raise RuntimeError(f"{name}: index of {task.parent} ended {status.status}")
            if number == 1:
                result.cold_s = elapsed
            else:
                result.index_s.append(elapsed)
            score_task(ws, name, mirror, directory, task, result)
            checkout(directory, task.parent)  # the commit's edits out again
            print(f"{name}: task {number}/{len(tasks)} ({elapsed:.2f} s index)", file=sys.stderr)
        info = ws.get_repo(name)
        result.files = info.files if info is not None else 0
    if result.mismatches:
        print(
            f"{name}: related() and changed() disagree on covering tests in {result.mismatches}"
            " tasks",
            file=sys.stderr,
        )
    shutil.rmtree(directory, ignore_errors=True)
    shutil.rmtree(work / "data" / name, ignore_errors=True)
    return result


def find_mirror(mirrors: Path, name: str) -> tuple[str, Path] | None:
    """The short name and git directory of a mirror named ``name`` or ``owner+name``."""
    for entry in sorted(mirrors.iterdir()):
        if entry.is_dir() and name in (entry.name, entry.name.split("+")[-1]):
            repo = entry / "repo"
            return entry.name.split("+")[-1], repo if repo.is_dir() else entry
    return None


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def render(results: list[RepoResult], limit: int) -> str:
    total = {m: Scores() for m in METHODS}
    for result in results:
        for method, scores in result.scores.items():
            total[method].merge(scores)
    tasks = sum(r.tasks for r in results)
    repos = ", ".join(f"{r.name} ({r.tasks})" for r in results)
    lines = [
        SECTION,
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}. No embeddings. Reproduce: `.venv/bin/python "
        "bench/impact.py --write-docs` (needs local mirrors of the repositories). Up to "
        f"{limit} most recent commits per repository that modify source and test files (at most "
        f"{MAX_SOURCES} source files; release, bump and formatting subjects skipped): the "
        "parent is indexed, the commit's source edits alone are written, and the tests the "
        "commit modified are looked for in what each method predicts. Recall: mean share of "
        "those tests predicted; hit rate: share of tasks with one of them predicted; "
        "selectivity: mean share of the repository's test files predicted.",
        "",
        f"Repositories (tasks): {repos}; {tasks} tasks.",
        "",
        "| method | recall | hit rate | mean predicted | selectivity |",
        "|---|---:|---:|---:|---:|",
    ]
    for method, scores in total.items():
        lines.append(f"| {method} | " + cells(scores.row()) + " |")
    lines += [
        "",
        "| repo | language | tasks | test files | method | recall | hit rate | mean predicted | selectivity |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in results:
        suite = r.suite / max(r.tasks, 1)
        for method in METHODS[:-1]:
            lines.append(
                f"| {r.name} | {r.language} | {r.tasks} | {suite:.0f} | {method} | "
                + cells(r.scores[method].row())
                + " |"
            )
    lines += [
        "",
        "Timings: the first (cold) index of the oldest parent, then the incremental index of "
        "each later parent (a checkout step of one or more commits) and the `changed` call "
        "after the commit's source edits (means).",
        "",
        "| repo | files | cold index s | incremental index s | changed ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.name} | {r.files:,} | {r.cold_s:.2f} | {mean(r.index_s):.2f} | "
            f"{mean(r.changed_s) * 1000:.0f} |"
        )
    lines.append("")
    return "\n".join(lines)


def cells(row: list[float]) -> str:
    recall, hits, predicted, selectivity = row
    return f"{recall:.3f} | {hits:.3f} | {predicted:.1f} | {selectivity:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repos", nargs="*", default=list(DEFAULT_REPOS))
    parser.add_argument("--mirrors", type=Path, default=MIRRORS)
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--details", type=Path, help="write per-task details (JSON) here")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rc-impact-"))
    results: list[RepoResult] = []
    try:
        for name in args.repos:
            found = find_mirror(args.mirrors, name)
            if found is None:
                print(f"no mirror of {name} under {args.mirrors}; skipped", file=sys.stderr)
                continue
            results.append(evaluate(*found, args.tasks, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.details is not None:
        details = [d for r in results for d in r.details]
        args.details.write_text(json.dumps(details, indent=1) + "\n")
    section = render(results, args.tasks)
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
