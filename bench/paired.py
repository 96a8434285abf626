"""Paired evaluation: the same agent on the same tasks, with and without Lattice.

For each task, both arms start from a fresh clone of one snapshot (a git commit; the clones'
trees are checked to be identical before either agent runs), in a random order drawn from
``--seed``:

- **with Lattice**: ``lattice run GOAL --worker command --worker-command AGENT_WITH`` on its
  clone (Lattice grants, lowers, verifies and applies);
- **without**: ``AGENT_WITHOUT`` run directly in its clone with ``LATTICE_AGENT_MODE=direct``,
  ``{"goal", "repository"}`` on stdin; it edits the tree itself.

Both agents see the same environment allowlist (the command worker's, plus ``--agent-env``).
Then the task's check decides pass/fail for both arms, on the tree each arm left behind, after
the task's ``restore`` paths are copied back from the snapshot (so an agent cannot pass by
editing the tests). Printed: one row per task, the paired outcome table, and paired bootstrap
intervals (``bench/_stats.py``) for the difference in pass rate and in wall time. The protocol
and its limits are in ``docs/evaluation.md``.

Tasks: ``--tasks FILE`` (JSONL, one ``{"fixture": NAME | "repo": DIR, "goal": TEXT,
"check": [ARGV], "restore": [PATHS]}`` a line) or the two fixtures by default.

Run: ``.venv/bin/python bench/paired.py --agent-with "<argv>" --agent-without "<argv>"``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from _docs import write_section
from _stats import paired_interval

from lattice_runtime.workers import DEFAULT_ENV_ALLOWLIST

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
LATTICE = Path(sys.executable).with_name("lattice")
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
DEFAULT_CHECKS = {
    "reset-token-py": (PYTEST, ["tests"]),
    "reset-token-js": (["node", "--test"], ["test"]),
}
MIN_TASKS = 30
IDENTITY = ["-c", "user.name=paired", "-c", "user.email=paired@localhost"]


@dataclass(frozen=True)
class Task:
    name: str
    source: Path
    goal: str
    check: list[str]
    restore: list[str]
    from_fixture: bool


@dataclass(frozen=True)
class Arm:
    passed: bool
    seconds: float
    note: str


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *IDENTITY, *args], cwd=cwd, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def default_tasks() -> list[Task]:
    tasks = []
    for name, (check, restore) in DEFAULT_CHECKS.items():
        goal = json.loads((FIXTURES / name / "task.json").read_text())["goal"]
        tasks.append(Task(name, FIXTURES / name / "repo", goal, check, restore, True))
    return tasks


def load_tasks(path: Path) -> list[Task]:
    tasks = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        item = json.loads(line)
        if "fixture" in item:
            source, from_fixture = FIXTURES / item["fixture"] / "repo", True
        else:
            source, from_fixture = Path(item["repo"]).resolve(), False
        check = [str(part) for part in item["check"]]
        restore = [str(part) for part in item.get("restore", [])]
        name = item.get("name", f"{source.parent.name if from_fixture else source.name}#{number}")
        tasks.append(Task(name, source, str(item["goal"]), check, restore, from_fixture))
    return tasks


def snapshot(task: Task, work: Path) -> Path:
    """One commit both arms clone: the fixture committed, or a clean repository as it is."""
    if not task.from_fixture:
        if git(task.source, "status", "--porcelain"):
            raise SystemExit(f"{task.source} has uncommitted changes; commit or stash them first")
        return task.source
    repo = work / "snapshot"
    shutil.copytree(task.source, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "snapshot")
    return repo


def fresh_copy(base: Path, target: Path) -> Path:
    git(base, "clone", "-q", "--no-hardlinks", str(base), str(target))
    return target


def absolute_argv(text: str) -> str:
    """The agent command line with its words that name files here made absolute.

    Each agent runs in its clone, so ``bench/agents/x.py`` must not depend on the directory
    the harness was started from.
    """
    words = [str(Path(w).resolve()) if Path(w).is_file() else w for w in shlex.split(text)]
    return shlex.join(words)


def agent_env(names: list[str]) -> dict[str, str]:
    """What the direct arm's agent sees: the command worker's allowlist, no turn markers."""
    allowed = DEFAULT_ENV_ALLOWLIST | set(names)
    return {name: value for name, value in os.environ.items() if name in allowed}


def run_with(agent: str, task: Task, copy: Path, args: argparse.Namespace) -> Arm:
    argv = [str(LATTICE), "run", task.goal, "--worker", "command", "--worker-command", agent]
    argv += ["--repo", str(copy), "--turn-timeout", str(args.turn_timeout), "--json"]
    for name in args.agent_env:
        argv += ["--worker-env", name]
    start = time.perf_counter()
    done = subprocess.run(
        argv, capture_output=True, text=True, check=False, env={**os.environ, "HF_HUB_OFFLINE": "1"}
    )
    seconds = time.perf_counter() - start
    try:
        report = json.loads(done.stdout)
        note = f"{report['state'].lower()}: {report['reason']}"
    except (ValueError, KeyError):
        note = f"lattice exit {done.returncode}: {done.stderr.strip()[-200:]}"
    return Arm(done.returncode == 0, seconds, note)


def run_without(agent: str, task: Task, copy: Path, args: argparse.Namespace) -> Arm:
    request = json.dumps({"goal": task.goal, "repository": str(copy)})
    env = {**agent_env(args.agent_env), "LATTICE_AGENT_MODE": "direct"}
    start = time.perf_counter()
    try:
        done = subprocess.run(
            shlex.split(agent),
            cwd=copy,
            input=request,
            capture_output=True,
            text=True,
            check=False,
            env=env,
            timeout=args.turn_timeout * args.turns,
        )
    except subprocess.TimeoutExpired:
        return Arm(False, time.perf_counter() - start, "agent timed out")
    return Arm(done.returncode == 0, time.perf_counter() - start, f"agent exit {done.returncode}")


def check(task: Task, base: Path, copy: Path, arm: Arm) -> Arm:
    """Restore the task's protected paths from the snapshot, then run its check.

    An arm passes when its own run completed (``lattice run`` exit 0, the direct agent exit 0)
    and the check passes.
    """
    for relative in task.restore:
        target = copy / relative
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
        source = base / relative
        if source.is_dir():
            shutil.copytree(source, target)
        elif source.exists():
            shutil.copy2(source, target)
    done = subprocess.run(task.check, cwd=copy, capture_output=True, check=False)
    return Arm(arm.passed and done.returncode == 0, arm.seconds, arm.note)


def run_pair(task: Task, args: argparse.Namespace, rng: random.Random) -> dict[str, Arm]:
    with tempfile.TemporaryDirectory(prefix="paired-") as scratch:
        work = Path(scratch)
        base = snapshot(task, work)
        copies = {arm: fresh_copy(base, work / arm) for arm in ("with", "without")}
        trees = {git(copy, "rev-parse", "HEAD^{tree}") for copy in copies.values()}
        if len(trees) != 1 or any(git(c, "status", "--porcelain") for c in copies.values()):
            raise SystemExit(f"{task.name}: the two copies are not byte-identical")
        order = ["with", "without"]
        rng.shuffle(order)
        results = {}
        for arm in order:
            if arm == "with":
                done = run_with(args.run_with, task, copies[arm], args)
            else:
                done = run_without(args.run_without, task, copies[arm], args)
            results[arm] = check(task, base, copies[arm], done)
        return results


def outcome_table(rows: list[dict[str, Arm]]) -> dict[str, int]:
    pairs = [(row["with"].passed, row["without"].passed) for row in rows]
    return {
        "both pass": pairs.count((True, True)),
        "only with Lattice": pairs.count((True, False)),
        "only without": pairs.count((False, True)),
        "neither": pairs.count((False, False)),
    }


def render(tasks: list[Task], rows: list[dict[str, Arm]], args: argparse.Namespace) -> str:
    title = f"## Paired evaluation (`bench/paired.py`): {args.label}"
    lines = [
        title,
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.system()} "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. "
        f"Command: `{command_line(args)}`. Seed {args.seed}; {len(tasks)} tasks; each arm on a "
        "fresh clone of the same snapshot, arms in random order; an arm passes when its run "
        "completed and the task's check passed. Seconds are wall time of the arm (with "
        "Lattice: the whole `lattice run`, indexing and verification included; without: the "
        "agent process), not the check.",
        "",
    ]
    if "bench/agents/" in args.agent_with + args.agent_without:
        lines += [
            "The agents here are the scripted examples of `bench/agents/`, not models: these "
            "figures show that the harness works end to end, not how good any agent is.",
            "",
        ]
    if "--sloppy" in args.agent_with + args.agent_without:
        lines += [
            "The `--sloppy` variant's first patch is wrong on purpose and only Lattice's "
            "revision turn gives it a second try, so its result is built in by construction.",
            "",
        ]
    lines += [
        "| task | with Lattice | s | without | s | notes (with; without) |",
        "|---|---|---:|---|---:|---|",
    ]
    for task, row in zip(tasks, rows, strict=True):
        w, wo = row["with"], row["without"]
        lines.append(
            f"| {task.name} | {verdict(w)} | {w.seconds:.2f} | {verdict(wo)} | "
            f"{wo.seconds:.2f} | {w.note[:90]}; {wo.note[:40]} |"
        )
    table = outcome_table(rows)
    lines += ["", "| paired outcome | tasks |", "|---|---:|"]
    lines += [f"| {name} | {count} |" for name, count in table.items()]
    lines += ["", *interval_lines(rows), ""]
    return "\n".join(lines)


def interval_lines(rows: list[dict[str, Arm]]) -> list[str]:
    passed_with = [float(row["with"].passed) for row in rows]
    passed_without = [float(row["without"].passed) for row in rows]
    rate = paired_interval(passed_with, passed_without)
    with_s = [row["with"].seconds for row in rows]
    without_s = [row["without"].seconds for row in rows]
    seconds = paired_interval(with_s, without_s)
    median = statistics.median(a - b for a, b in zip(with_s, without_s, strict=True))
    small = (
        [f"With {len(rows)} tasks these intervals are not evidence; see docs/evaluation.md."]
        if len(rows) < MIN_TASKS
        else []
    )
    return [
        *small,
        f"Pass rate, with minus without: {rate[0]:+.2f} (95% paired bootstrap "
        f"[{rate[1]:+.2f}, {rate[2]:+.2f}], {len(rows)} tasks).",
        f"Wall seconds, with minus without: mean {seconds[0]:+.2f} "
        f"([{seconds[1]:+.2f}, {seconds[2]:+.2f}]), median {median:+.2f}. Tokens: not "
        "measured by the harness; count only provider-reported usage (docs/evaluation.md).",
    ]


def verdict(arm: Arm) -> str:
    return "pass" if arm.passed else "fail"


def command_line(args: argparse.Namespace) -> str:
    parts = [".venv/bin/python bench/paired.py"]
    parts += ["--agent-with", shlex.quote(args.agent_with)]
    parts += ["--agent-without", shlex.quote(args.agent_without)]
    if args.tasks:
        parts += ["--tasks", str(args.tasks)]
    parts += ["--seed", str(args.seed), "--label", shlex.quote(args.label)]
    return " ".join(parts)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--agent-with", required=True, help="agent argv for the Lattice arm")
    parser.add_argument("--agent-without", required=True, help="agent argv, direct mode")
    parser.add_argument("--tasks", type=Path, help="JSONL tasks (default: the two fixtures)")
    parser.add_argument("--agent-env", action="append", default=[], help="extra variable name")
    parser.add_argument("--turn-timeout", type=float, default=600, help="seconds per turn")
    parser.add_argument("--turns", type=int, default=4, help="direct arm: deadline in turns")
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--label", default="example agents")
    parser.add_argument("--write-docs", action="store_true")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    args.run_with = absolute_argv(args.agent_with)
    args.run_without = absolute_argv(args.agent_without)
    tasks = load_tasks(args.tasks) if args.tasks else default_tasks()
    rng = random.Random(args.seed)
    rows = []
    for task in tasks:
        rows.append(run_pair(task, args, rng))
        row = rows[-1]
        print(
            f"{task.name}: with {verdict(row['with'])}, without {verdict(row['without'])}",
            file=sys.stderr,
        )
    section = render(tasks, rows, args)
    print(section)
    if args.write_docs:
        write_section(section.split("\n", 1)[0], section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
