"""What the session journal and its continuity projection cost.

A session of N journal entries (human messages, a plan, to-do lists, delegated results, a
compaction boundary every 50 entries) is written through :class:`Journal` — one durable
repocontext store transaction per entry, the store opened and closed each time as the MCP
tools do — and, as the baseline in the same run, as the same entries appended to a JSON-lines
file with an ``fsync`` per line (the cheapest durable log a reviewer would write by hand).
Then the projection is built after the last boundary (the ``lattice_resume`` path) and its size
reported against the 262,144-byte cap.

Run: ``.venv/bin/python bench/continuity.py [--entries 200 1000] [--write-docs]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from _docs import write_section

from lattice_runtime.session import Journal, SessionStore, continuity_projection

SECTION = "## Session journal and continuity (`bench/continuity.py`)"


def _script(count: int) -> list[tuple[str, str]]:
    steps: list[tuple[str, str]] = []
    for index in range(count):
        kind = ("message", "message", "todo", "delegated", "plan")[index % 5]
        if index and index % 50 == 0:
            kind = "boundary"
        steps.append((kind, f"entry {index}: " + "words of a long agent session " * 8))
    return steps


def _journal(repo: Path, steps: list[tuple[str, str]]) -> tuple[list[float], float, int]:
    journal = Journal(repo)
    session = SessionStore(repo).new().id
    seconds = []
    for index, (kind, text) in enumerate(steps):
        start = time.perf_counter()
        if kind == "message":
            journal.record_message(session, f"m{index}", text)
        elif kind == "todo":
            journal.set_todos(session, (text[:80], f"item {index}"))
        elif kind == "delegated":
            journal.record_delegated(session, text, text[::-1], "")
        elif kind == "plan":
            journal.approve_plan(session, f"p{index}", text)
        else:
            journal.boundary(session, "compaction")
        seconds.append(time.perf_counter() - start)
    start = time.perf_counter()
    projection = continuity_projection(journal, session)
    return seconds, time.perf_counter() - start, len(projection.canonical())


def _jsonl(path: Path, steps: list[tuple[str, str]]) -> list[float]:
    seconds = []
    with path.open("ab") as handle:
        for index, (kind, text) in enumerate(steps):
            start = time.perf_counter()
            line = json.dumps({"seq": index, "kind": kind, "text": text}) + "\n"
            handle.write(line.encode())
            handle.flush()
            os.fsync(handle.fileno())
            seconds.append(time.perf_counter() - start)
    return seconds


def measure(count: int, work: Path) -> dict[str, float]:
    """One session of ``count`` entries: journal vs JSON lines, and the projection."""
    repo = work / f"repo-{count}"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    steps = _script(count)
    journal, projection_seconds, projection_bytes = _journal(repo, steps)
    baseline = _jsonl(work / f"log-{count}.jsonl", steps)
    return {
        "journal_ms": statistics.median(journal) * 1000,
        "journal_p95_ms": sorted(journal)[int(len(journal) * 0.95) - 1] * 1000,
        "jsonl_ms": statistics.median(baseline) * 1000,
        "projection_ms": projection_seconds * 1000,
        "projection_bytes": projection_bytes,
    }


def render(rows: dict[int, dict[str, float]], command: str) -> str:
    """The docs section."""
    lines = [
        SECTION,
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {platform.machine()} "
        f"({os.cpu_count()} cores), Python {platform.python_version()}; command: `{command}`. "
        "Per entry: the median (and p95) time of one journal append, against one fsync'd "
        "JSON-lines append of the same entry in the same run; then one projection after the "
        "session's last boundary.",
        "",
        "| entries | journal append ms (p95) | JSON-lines + fsync ms | ratio | projection ms "
        "| projection bytes (cap 262,144) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for count, row in rows.items():
        ratio = row["journal_ms"] / row["jsonl_ms"] if row["jsonl_ms"] else float("nan")
        lines.append(
            f"| {count} | {row['journal_ms']:.2f} ({row['journal_p95_ms']:.2f}) "
            f"| {row['jsonl_ms']:.2f} | {ratio:.1f}x | {row['projection_ms']:.1f} "
            f"| {row['projection_bytes']:,} |"
        )
    lines += [
        "",
        "A journal append opens the store, compares-and-sets the session's head record and "
        "writes the entry as a CRDT record in one LMDB transaction, then closes the store (the "
        "MCP tools hold nothing open between calls); the baseline only appends and fsyncs a "
        "line, with no sequence guarantee across writers and no reads by session. The "
        "projection reads the session's entries and rebuilds the frozen view; its size stays "
        "well under the cap because messages appear as anchors (id + digest) only.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lattice-journal-"))
    try:
        rows = {count: measure(count, work) for count in args.entries}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    command = ".venv/bin/python bench/continuity.py --write-docs"
    section = render(rows, command)
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
