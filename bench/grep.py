"""How fast is ``repocontext_grep`` next to ripgrep (or ``git grep``) on a 10,000-file repository?

A generated polyglot repository (``bench/_corpus.py``: 10,000 source-sized files in 10
languages, 2-14 extra definitions each) is committed to git and indexed (no embedder). Each
query then runs through :meth:`Workspace.grep` in this process (what the MCP server and a
library caller run; no process start) and through the baseline as a subprocess in the same
run: ``rg`` when it is installed, else ``git grep`` (both multi-threaded, warm page cache),
with the same pattern kind, case and context (2 lines). Reported per query: the best of
``--repeat`` runs of each, and ours / baseline.

Queries that scan every file (no match, a rare match, every page of a common one) compare
the same work. A first page (100 matches) is what an agent usually asks for: grep stops at
the page, the baseline prints every match, so that ratio favours grep and is shown apart.

Run: ``.venv/bin/python bench/grep.py [--files N] [--repeat N] [--write-docs]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _corpus import TEMPLATES, generate  # noqa: E402
from _docs import write_section  # noqa: E402

from repocontext.search import GrepRequest  # noqa: E402
from repocontext.settings import Settings  # noqa: E402
from repocontext.workspace import Workspace  # noqa: E402

SECTION = "## Grep (`bench/grep.py`)"
CONTEXT = 2


@dataclass(frozen=True)
class Query:
    label: str
    pattern: str
    regex: bool = False
    ignore_case: bool = False
    all_pages: bool = True  # False: the first page only (the baseline still prints all)


QUERIES = (
    Query("literal, no match", "NoSuchIdentifier42"),
    Query("literal, one file", "Handler1230x3("),
    Query("literal, every match", "self.registry = registry"),
    Query("literal, -i, every match", "HANDLES REQUEST KIND 13", ignore_case=True),
    Query("regex, no match", r"fn\s+zz\w+\(", regex=True),
    Query("regex, every match", r"def\s+process_\d+\(", regex=True),
    Query("literal, first page of 100", "registry", all_pages=False),
    Query("regex, first page of 100", r"\bHandler\d+\b", regex=True, all_pages=False),
)


def ours(workspace: Workspace, query: Query) -> int:
    """Matches found: every page, or the first one."""
    token, found = None, 0
    while True:
        page = workspace.grep(
            GrepRequest(
                "corpus",
                query.pattern,
                regex=query.regex,
                case_sensitive=not query.ignore_case,
                context_lines=CONTEXT,
                page_size=500 if query.all_pages else 100,
                token=token,
            )
        )
        found += len(page.matches)
        if not query.all_pages or page.continuation_token is None:
            return found
        token = page.continuation_token


def baseline_command(tool: str, query: Query) -> list[str]:
    if tool == "rg":
        command = ["rg", "-n", "-C", str(CONTEXT), "--no-heading", "--color", "never"]
        command += ["-i"] if query.ignore_case else []
        return [*command, "-e" if query.regex else "-F", query.pattern]
    command = ["git", "grep", "-n", "-C", str(CONTEXT), "--no-color"]
    command += ["-i"] if query.ignore_case else []
    return [*command, "-P" if query.regex else "-F", "-e", query.pattern]


def baseline(tool: str, root: Path, query: Query) -> int:
    done = subprocess.run(baseline_command(tool, query), cwd=root, capture_output=True, check=False)
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stderr.decode(errors="replace"))
    return sum(1 for line in done.stdout.splitlines() if _is_match_line(line))


def _is_match_line(line: bytes) -> bool:
    # path:line:text is a match, path-line-text context, -- a separator.
    head = line.split(b":", 2)
    return len(head) == 3 and head[1].isdigit()


def best(run: Callable[[], int], repeat: int) -> tuple[float, int]:
    times, found = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        found = run()
        times.append(time.perf_counter() - started)
    return min(times), found


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def measure(files: int, repeat: int, work: Path) -> tuple[str, dict[str, float], list[tuple]]:
    repo = work / "ws" / "corpus"
    generate(repo, files, list(TEMPLATES), units=(2, 14))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "c"],
        check=True,
    )
    tool = "rg" if shutil.which("rg") else "git grep"
    settings = Settings(
        data_dir=work / "data", workspace_root=repo.parent, reconcile="off", embedder="off"
    )
    rows = []
    with Workspace.open(settings) as workspace:
        started = time.perf_counter()
        workspace.bootstrap(repo, "corpus", background=False)
        corpus = {
            "files": float(files),
            "mb": sum(p.stat().st_size for p in repo.rglob("*") if ".git" not in p.parts) / 1e6,
            "index_s": time.perf_counter() - started,
        }
        for query in QUERIES:
            ours_s, ours_n = best(lambda q=query: ours(workspace, q), repeat)
            base_s, base_n = best(lambda q=query: baseline(tool, repo, q), repeat)
            rows.append((query, ours_s, ours_n, base_s, base_n))
            print(
                f"{query.label}: ours {ours_s * 1000:.0f} ms ({ours_n}), {tool} "
                f"{base_s * 1000:.0f} ms ({base_n})",
                flush=True,
            )
    return tool, corpus, rows


def render(
    tool: str, corpus: dict[str, float], rows: list[tuple], repeat: int, command: str
) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        SECTION,
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} cores (shared with other work: load average {load:.1f} at the end), "
        f"{cpu_model()}, Python {platform.python_version()}. Repository: "
        f"{corpus['files']:.0f} generated source files ({corpus['mb']:.0f} MB, 10 languages), "
        f"committed to git and indexed without an embedder in {corpus['index_s']:.0f} s. "
        f"Baseline: `{tool}` (a subprocess, multi-threaded), same pattern kind, case and "
        f"{CONTEXT} context lines; grep runs in process through `Workspace.grep` (as the MCP "
        f"server does). Best of {repeat} runs each, warm page cache. Reproduce: `{command}`.",
        "",
        f"| query | matches (grep / {tool}) | grep ms | {tool} ms | grep / {tool} |",
        "|---|---|---:|---:|---:|",
    ]
    for query, ours_s, ours_n, base_s, base_n in rows:
        shown = f"{ours_n} / {base_n}" if query.all_pages else f"{ours_n} (first page) / {base_n}"
        lines.append(
            f"| {query.label} (`{query.pattern}`) | {shown} | {ours_s * 1000:.0f} | "
            f"{base_s * 1000:.0f} | {ours_s / base_s:.2f} |"
        )
    full = [r for r in rows if r[0].all_pages]
    ratios = sorted(r[1] / r[3] for r in full)
    lines += [
        "",
        f"Over the {len(full)} queries that read every file, grep takes "
        f"{ratios[0]:.2f}x to {ratios[-1]:.2f}x the baseline's time (median "
        f"{ratios[len(ratios) // 2]:.2f}x). A call lists the index's live files, opens every "
        "file one path component at a time without following symlinks, runs one RE2 search "
        "over each file's bytes and splits only the files that match into lines; the first "
        "page of a common pattern stops as soon as it is full. What bounds the figures: the "
        "interpreter's work per file (open, stat, read, one search: about 8-10 µs, on one "
        "core), where the baseline reads and searches on every core; every page of an "
        "every-match query is one more call (500 matches each) that shapes its lines and "
        "context in Python. The machine runs other agents' work at the same time, so the "
        "milliseconds move from run to run; the ratios are measured in the same run.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rc-grep-"))
    try:
        tool, corpus, rows = measure(args.files, args.repeat, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    command = (
        ".venv/bin/python bench/grep.py"
        + (f" --files {args.files}" if args.files != 10_000 else "")
        + " --write-docs"
    )
    section = render(tool, corpus, rows, args.repeat, command)
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
