"""Where does a Lattice run's wall time go, next to just running the fixture's tests?

For each fixture (``reset-token-py``, ``reset-token-js``), ``--repeat`` times:
``lattice benchmark --worker mock --json`` as a subprocess (a fresh git repository from the
fixture, the baseline test run, the whole task: compile, index, grant, worker, lowering,
worktree transaction, verification, apply, and the test run after). Reported per fixture,
medians over the repeats: the run's phases (``index``: repocontext indexing the repository;
``grant``: pages and handles; ``transaction``: the worktree, the reproduced state and the
patch, without the commands; ``verify``: the verification commands), the whole process, and
the fixture's test command run once (the baseline run of the same invocation), with the
ratio run / one test run measured in the same invocation.

Run: ``.venv/bin/python bench/lattice.py [--repeat N] [--write-docs]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from _docs import write_section

SECTION = "## Lattice: where a run's time goes"
LATTICE = Path(sys.executable).with_name("lattice")
FIXTURES = ("reset-token-py", "reset-token-js")


def one_run(fixture: str) -> dict[str, float]:
    """One ``lattice benchmark`` subprocess; its phase timings and the wall time."""
    start = time.perf_counter()
    done = subprocess.run(
        [str(LATTICE), "benchmark", "--worker", "mock", "--fixture", fixture, "--json"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"lattice benchmark failed for {fixture}:\n{done.stdout}\n{done.stderr}")
    report = json.loads(done.stdout)
    phases = report["phases"]
    verify = float(report["verifySeconds"])
    return {
        "index": phases.get("index", 0.0),
        "grant": phases.get("grant", 0.0),
        "worker": phases.get("worker", 0.0) + phases.get("lower", 0.0),
        "transaction": phases.get("transaction", 0.0) - verify,
        "verify": verify,
        "apply": phases.get("apply", 0.0),
        "run": sum(phases.values()),
        "process": wall,
        "tests once": float(report["baselineSeconds"]),
    }


def render(rows: dict[str, dict[str, float]], repeat: int, command: str) -> str:
    """The docs section."""
    columns = ["index", "grant", "worker", "transaction", "verify", "apply", "run", "process"]
    lines = [
        SECTION,
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {platform.machine()} "
        f"({os.cpu_count()} cores), Python {platform.python_version()}; command: `{command}`. "
        f"Medians of {repeat} runs, seconds. `tests once` is the fixture's test command run "
        "once in the same invocation (the baseline run); `run / tests` is the whole run "
        "(compile to apply) over it.",
        "",
        "| fixture | " + " | ".join(columns) + " | tests once | run / tests |",
        "|---|" + "---:|" * (len(columns) + 2),
    ]
    for fixture, row in rows.items():
        cells = " | ".join(f"{row[c]:.3f}" for c in columns)
        ratio = row["run"] / row["tests once"] if row["tests once"] else float("nan")
        lines.append(f"| {fixture} | {cells} | {row['tests once']:.3f} | {ratio:.1f}x |")
    lines += [
        "",
        "The phases: `index` is repocontext indexing the fresh repository (keyword index plus "
        "the packaged static embedder, the default); `grant` ranks files, reads pages and "
        "issues handles; `worker` is the mock worker plus parsing and lowering; `transaction` makes the detached worktree, "
        "reproduces the user's state and writes the patch (without the commands); `verify` "
        "runs the allowlisted commands in the worktree; `apply` re-checks fingerprints and "
        "`git apply`s the diff. `process` adds the interpreter start, the copy of the fixture, "
        "`git init`, and the baseline and after test runs.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    rows: dict[str, dict[str, float]] = {}
    for fixture in FIXTURES:
        runs = []
        for index in range(args.repeat):
            runs.append(one_run(fixture))
            print(f"{fixture} {index + 1}/{args.repeat}: {runs[-1]['run']:.2f}s", file=sys.stderr)
        rows[fixture] = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    command = (
        ".venv/bin/python bench/lattice.py"
        + (f" --repeat {args.repeat}" if args.repeat != 5 else "")
        + " --write-docs"
    )
    section = render(rows, args.repeat, command)
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
