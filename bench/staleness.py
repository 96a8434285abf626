"""Staleness between processes sharing one data directory: A acknowledges, when does B find it?

Starts two ``repocontext serve --transport http --workers 1`` processes (A and B) over one
data directory and one repository (the static embedder, writes on), then ``--notes`` times:
remembers a note with a word no other note has through A, and polls B — a keyword search of
the memory scope, and a semantic-only search with the note's own text — until each finds it.
The seconds from A's acknowledgement to B's first hit are the staleness; reports p50/p95/max
of both. Keyword search reads the store at every call (the index syncs before it answers),
so its staleness is one call; the semantic side waits for B's change-feed follower (polled
every 0.25 s) and its embedding pass. Run:
``.venv/bin/python bench/staleness.py [--notes 30] [--write-docs]``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _docs import write_section  # noqa: E402

from repocontext.mcp.client import http_client  # noqa: E402
from repocontext.settings import Settings  # noqa: E402
from repocontext.testing import make_repo, start_http_server  # noqa: E402
from repocontext.workspace import Workspace  # noqa: E402

SECTION = "## Staleness between processes (`bench/staleness.py`)"
PATIENCE_S = 60.0


def percentile(samples: list[float], q: float) -> float:
    """The nearest-rank percentile of ``samples`` (0 when empty)."""
    ordered = sorted(samples)
    return ordered[max(math.ceil(q * len(ordered)) - 1, 0)] if ordered else 0.0


def word(number: int, prefix: str = "quiv") -> str:
    """A made-up word per number (letters only: one search term)."""
    letters = ""
    while True:
        number, digit = divmod(number, 26)
        letters += chr(ord("a") + digit)
        if not number:
            return f"{prefix}{letters}"


async def until_found(client: Any, arguments: dict[str, Any], key: str, since: float) -> float:
    """Search through ``client`` until ``key`` is the first hit; the seconds since ``since``."""
    while time.perf_counter() - since < PATIENCE_S:
        result = await client.call_tool("repocontext_search", arguments)
        hits = [] if result.is_error else result.structured_content["hits"]
        if hits and hits[0].get("key") == key:
            return time.perf_counter() - since
    raise RuntimeError(f"{key} not found in {PATIENCE_S:.0f} s: {arguments}")


async def measure(a_url: str, b_url: str, notes: int) -> tuple[list[float], list[float]]:
    keyword: list[float] = []
    semantic: list[float] = []
    async with http_client(a_url) as a, http_client(b_url) as b:
        for n in range(notes):
            name = word(n)
            # (text of its own: the semantic search of it ranks it first, at similarity 1)
            title = f"{name} {word(7 * n + 3, 'zarn')} {word(13 * n + 5, 'plok')} signing keys"
            made = await a.call_tool(
                "repocontext_remember", {"repoId": "demo", "topic": "notes", "title": title}
            )
            acknowledged = time.perf_counter()
            key = made.structured_content["key"]
            query = {"repoId": "demo", "query": name, "scope": "memory", "mode": "keyword"}
            keyword.append(await until_found(b, query, key, acknowledged))
            vectors = {**query, "query": title, "mode": "semantic"}
            semantic.append(await until_found(b, vectors, key, acknowledged))
    return keyword, semantic


def render(keyword: list[float], semantic: list[float], command: str) -> str:
    def row(label: str, samples: list[float]) -> str:
        return (
            f"| {label} | {len(samples)} | {percentile(samples, 0.5) * 1000:,.0f} "
            f"| {percentile(samples, 0.95) * 1000:,.0f} | {max(samples) * 1000:,.0f} |"
        )

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return "\n".join(
        [
            SECTION,
            "",
            f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
            f"{os.cpu_count()} cores, Python {platform.python_version()}; load average {load} "
            f"at the end (the machine is shared). Reproduce: `{command}`.",
            "",
            "Two `repocontext serve --transport http --workers 1 --embedder static` processes, "
            "A and B, over one data directory (one LMDB store, one keyword index file, one "
            "vector plane directory) and a one-file repository. Each note is remembered "
            "through A; the time runs from A's acknowledgement to B's first answer that ranks "
            "the note first: a keyword search of its made-up word, and a semantic-only search "
            "of its text (only vectors B can read answer that).",
            "",
            "| B finds the note by | notes | p50 ms | p95 ms | max ms |",
            "|---|---:|---:|---:|---:|",
            row("keyword (`mode: keyword`)", keyword),
            row("vectors (`mode: semantic`)", semantic),
            "",
            "- **Bound, keyword**: one search call. Every search brings the keyword index to "
            "the store's head before it answers, and the store is shared, so B's first "
            "search after A's acknowledgement finds the note.",
            "- **Bound, vectors**: the follower's poll interval (0.25 s) plus one embedding "
            "pass of the note (the processes of one data directory embed it once, under the "
            "plane's lock: whichever pass runs first, A's own or B's follower's). A server "
            "with its own data directory embeds it itself, with the same bound.",
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=30)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rc-staleness-"))
    repo = make_repo(work / "ws" / "demo", {"src/keys.py": "def rotate():\n    return 1\n"})
    data = work / "data"
    settings = Settings(data_dir=data, workspace_root=repo.parent, embedder="static")
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, "demo", background=False)
        workspace.wait_embedded("demo", 120)
    env = {"REPOCONTEXT_EMBEDDER": "static", "HF_HUB_OFFLINE": "1"}
    servers = [start_http_server(data, repo.parent, env=env) for _ in range(2)]
    try:
        urls = [f"{base}/mcp" for _, base in servers]
        keyword, semantic = asyncio.run(measure(urls[0], urls[1], args.notes))
    finally:
        for server, _ in servers:
            server.terminate()
            server.wait(60)
    section = render(keyword, semantic, ".venv/bin/python bench/staleness.py --write-docs")
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
